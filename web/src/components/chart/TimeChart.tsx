import { useEffect, useEffectEvent, useRef, useState } from "react";
import { formatTime } from "../format";
import { peakOf } from "./peak";
import type { ChartHandle } from "./timeChart";

/** Whether this browser draws on a canvas (jsdom does not: there the summary stands alone). */
function canDraw(): boolean {
  try {
    return Boolean(document.createElement("canvas").getContext("2d"));
  } catch {
    return false;
  }
}

/**
 * A chart of one figure over time (`times` in epoch seconds, oldest first; a null value is
 * a gap): axes with times and values, a cursor whose legend reads the value under it, and
 * the peak marked. uPlot draws it, loaded on first use in a chunk of its own. Above it, in
 * words (and for screen readers), the figure now and its peak with its time.
 */
export function TimeChart({
  title,
  times,
  values,
  format,
  height = 180,
}: {
  /** What the chart shows ("CPU of web-1"); its first word names the series. */
  title: string;
  times: readonly number[];
  values: readonly (number | null)[];
  format: (value: number) => string;
  height?: number;
}) {
  const hostRef = useRef<HTMLDivElement>(null);
  const handleRef = useRef<ChartHandle | null>(null);
  const [state, setState] = useState<"loading" | "ready" | "failed">("loading");
  const points = useEffectEvent(() => ({ times, values }));
  const formatValue = useEffectEvent((value: number) => format(value));

  useEffect(() => {
    const parent = hostRef.current;
    if (!parent || !canDraw()) {
      setState("failed");
      return undefined;
    }
    let cancelled = false;
    let sizes: ResizeObserver | null = null;
    import("./timeChart").then(
      ({ createTimeChart }) => {
        if (cancelled) return;
        const handle = createTimeChart({
          parent,
          width: Math.max(parent.clientWidth, 160),
          height,
          label: title.split(" ")[0] ?? title,
          format: (value) => formatValue(value),
          // Seconds on the axis only where its ticks are less than a minute apart.
          formatTick: (seconds, step) => formatTime(seconds * 1000, { seconds: step < 60 }),
          formatMoment: (seconds) => formatTime(seconds * 1000),
        });
        const { times, values } = points();
        handle.setData(times, values);
        handleRef.current = handle;
        sizes = new ResizeObserver(() => handle.setWidth(parent.clientWidth));
        sizes.observe(parent);
        setState("ready");
      },
      () => {
        if (!cancelled) setState("failed");
      },
    );
    return () => {
      cancelled = true;
      sizes?.disconnect();
      handleRef.current?.destroy();
      handleRef.current = null;
    };
  }, [title, height]);

  useEffect(() => {
    handleRef.current?.setData(times, values);
  }, [times, values, state]);

  const high = peakOf(values);
  const last = [...values].reverse().find((value) => value !== null);
  const at = high ? times[high.index] : undefined;
  const summary =
    high && at !== undefined
      ? `${title}: now ${last === undefined || last === null ? "—" : format(last)}, peak ${format(high.value)} at ${formatTime(at * 1000)}`
      : `${title}: no figures yet`;
  return (
    <figure className="time-chart">
      <figcaption className="small">{summary}</figcaption>
      <div
        ref={hostRef}
        className="time-chart-plot"
        role="img"
        aria-label={summary}
        data-chart={state}
        hidden={state === "failed"}
      />
    </figure>
  );
}
