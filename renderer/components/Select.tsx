import type { FieldControlProps } from './Field.tsx';

export interface SelectOption<T extends string> {
  value: T;
  label: string;
}

export interface SelectProps<T extends string> {
  /** The control props a `Field` hands its child (id, aria wiring). */
  control: FieldControlProps;
  value: T;
  options: readonly SelectOption<T>[];
  onChange: (value: T) => void;
  className?: string;
}

/** A `<select>` over a list of options, for use inside a `Field`. */
export function Select<T extends string>({ control, value, options, onChange, className = 'input' }: SelectProps<T>) {
  return (
    <select {...control} className={className} value={value} onChange={(e) => onChange(e.target.value as T)}>
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}
