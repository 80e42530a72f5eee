/**
 * A small line chart of `values`, oldest left (null: no sample, a gap in the line), scaled
 * from 0 to `max` (the largest value when not given). `label` says what it shows, for
 * screen readers and as a tooltip.
 */
export function Sparkline({
  values,
  label,
  max,
  width = 180,
  height = 36,
}: {
  values: readonly (number | null)[];
  label: string;
  max?: number;
  width?: number;
  height?: number;
}) {
  const known = values.filter((v): v is number => v !== null);
  const top = max ?? Math.max(0, ...known);
  const scale = top > 0 ? top : 1;
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  // One line per run of known values: a missing sample is a gap, not a drop to zero.
  const runs: [number, number][][] = [[]];
  values.forEach((value, index) => {
    const run = runs[runs.length - 1] ?? [];
    if (value === null) {
      if (run.length > 0) runs.push([]);
      return;
    }
    run.push([index * step, height - 1 - (Math.min(value, scale) / scale) * (height - 2)]);
  });
  const point = ([x, y]: [number, number]) => `${x.toFixed(1)},${y.toFixed(1)}`;
  return (
    <svg className="sparkline" role="img" aria-label={label} viewBox={`0 0 ${width} ${height}`} width={width} height={height}>
      <title>{label}</title>
      {runs
        .filter((run) => run.length > 0)
        .map((run, index) => {
          const [first] = run;
          return run.length === 1 && first ? (
            <circle key={index} cx={first[0]} cy={first[1]} r={1.5} />
          ) : (
            <polyline key={index} points={run.map(point).join(" ")} />
          );
        })}
    </svg>
  );
}
