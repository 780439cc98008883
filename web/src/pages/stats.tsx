import { useEffect, useRef, useState } from 'preact/hooks';
import { type Stats as StatsData, people } from '../api.people.js';
import { dayLabel, monthDay } from '../time.js';
import { Loading, Section, useLoad } from '../ui.js';

const H = 220;
const PAD = { top: 12, right: 8, bottom: 28, left: 40 };

/**
 * The width the chart has on the page: it is drawn at that width rather than scaled, so that
 * its labels stay at the text's size on a phone (a 700-unit drawing shrunk to 340 px made them 6 px).
 */
function useWidth(fallback: number) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const observer = new ResizeObserver(() => setWidth(Math.max(200, Math.floor(element.clientWidth))));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { box, width };
}

/** Focused minutes per day as bars; the table after it carries the same numbers for screen readers. */
function Chart({ buckets }: { buckets: StatsData['buckets'] }) {
  const { box, width: W } = useWidth(700);
  const max = Math.max(60, ...buckets.map((b) => b.focused_minutes));
  const step = (W - PAD.left - PAD.right) / Math.max(1, buckets.length);
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const total = buckets.reduce((sum, b) => sum + b.focused_minutes, 0);
  return (
    <div ref={box}>
      <svg class="chart" width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title">
        <title id="chart-title">{`Focused minutes per day over the last ${buckets.length} days: ${total} in all, at most ${Math.max(0, ...buckets.map((b) => b.focused_minutes))} on one day.`}</title>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(max * f)} y2={y(max * f)} class="grid" />
            <text x={PAD.left - 6} y={y(max * f) + 4} text-anchor="end" class="axis">
              {Math.round(max * f)}
            </text>
          </g>
        ))}
        {buckets.map((b, i) => (
          <g key={b.start}>
            <rect x={PAD.left + i * step + 2} width={Math.max(1, step - 4)} y={y(b.focused_minutes)} height={y(0) - y(b.focused_minutes)} class="bar">
              <title>{`${dayLabel(b.start)}: ${b.focused_minutes} min`}</title>
            </rect>
            {i % 7 === 0 && (
              <text x={PAD.left + i * step + step / 2} y={H - 8} text-anchor="middle" class="axis">
                {monthDay(b.start)}
              </text>
            )}
          </g>
        ))}
      </svg>
    </div>
  );
}

export function Stats() {
  const stats = useLoad(() => people.stats(), 'stats');
  const data = stats.data;
  return (
    <>
      <h1 tabIndex={-1}>Statistics</h1>
      <Loading error={stats.error} loading={stats.loading && !data} />
      {data && (
        <>
          <dl class="totals">
            {(
              [
                ['Focused minutes', data.totals.focused_minutes],
                ['Sessions completed', data.totals.sessions_completed],
                ['Tasks completed', data.totals.tasks_completed],
                ['Current streak', `${data.current_streak_days} days`],
                ['Longest streak', `${data.longest_streak_days} days`],
              ] as const
            ).map(([label, value]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
          <Section title="Focused minutes per day, last 4 weeks">
            <Chart buckets={data.buckets} />
            <details>
              <summary>The numbers as a table</summary>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    <th scope="col">Focused minutes</th>
                    <th scope="col">Sessions completed</th>
                    <th scope="col">Tasks completed</th>
                  </tr>
                </thead>
                <tbody>
                  {data.buckets.map((b) => (
                    <tr key={b.start}>
                      <th scope="row">{dayLabel(b.start)}</th>
                      <td>{b.focused_minutes}</td>
                      <td>{b.sessions_completed}</td>
                      <td>{b.tasks_completed}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </details>
          </Section>
        </>
      )}
    </>
  );
}
