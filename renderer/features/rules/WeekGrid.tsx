import { DAY_NAMES, type WindowValue, coverage } from './conditions.ts';

/** A weekly grid (7 days × 24 hours) shading the hours the windows cover. */
export function WeekGrid({ windows, timezone }: { windows: WindowValue[]; timezone: string }) {
  const grid = coverage(windows);
  return (
    <figure className="week-grid" aria-label={`Weekly coverage in ${timezone}`}>
      <div className="week-grid-hours" aria-hidden="true">
        <span />
        {Array.from({ length: 24 }, (_, h) => (
          <span key={h}>{h % 3 === 0 ? String(h).padStart(2, '0') : ''}</span>
        ))}
      </div>
      {grid.map((hours, d) => (
        <div className="week-grid-row" key={d}>
          <span className="week-grid-day">{DAY_NAMES[d]}</span>
          {hours.map((on, h) => (
            <span key={h} className={`week-grid-cell${on ? ' on' : ''}`} title={`${DAY_NAMES[d]} ${String(h).padStart(2, '0')}:00${on ? ' (covered)' : ''}`} />
          ))}
        </div>
      ))}
      <figcaption className="field-hint">Hours in {timezone}; shaded hours are covered at least in part.</figcaption>
    </figure>
  );
}
