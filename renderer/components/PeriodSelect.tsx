import { ANALYTICS_RANGES, type AnalyticsRange } from '../lib/analyticsRange.ts';
import { Field } from './Field.tsx';

/** The analytics period picker (last 24 h … 90 days), shared by a node's panel and the organization's screen. */
export function PeriodSelect({ value, onChange, className }: { value: AnalyticsRange; onChange: (range: AnalyticsRange) => void; className?: string }) {
  return (
    <Field label="Period" {...(className ? { className } : {})}>
      {(c) => (
        <select {...c} className="input" value={value} onChange={(e) => onChange(e.target.value as AnalyticsRange)}>
          {Object.entries(ANALYTICS_RANGES).map(([range, r]) => (
            <option key={range} value={range}>
              {r.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
