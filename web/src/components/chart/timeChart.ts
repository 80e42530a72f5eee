/**
 * A line chart over time drawn by uPlot (a library made for time series: axes, ticks,
 * a cursor and a legend that reads the value under it). Loaded on demand
 * (`import("./timeChart")`), so the main bundle does not carry it.
 */
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { peakOf } from "./peak";

export interface ChartOptions {
  parent: HTMLElement;
  width: number;
  height: number;
  /** The series' name in the legend ("CPU"). */
  label: string;
  /** A value as the axis, the legend and the peak's mark say it ("12.3 %", "48.2 MB"). */
  format: (value: number) => string;
  /** A time on the axis, from epoch seconds, its ticks `step` seconds apart ("14:03", "14:03:20"). */
  formatTick: (seconds: number, step: number) => string;
  /** A time in the legend ("14:03:20"), from epoch seconds. */
  formatMoment: (seconds: number) => string;
}

export interface ChartHandle {
  /** New points (epoch seconds, values; null: no sample, a gap in the line). */
  setData: (times: readonly number[], values: readonly (number | null)[]) => void;
  setWidth: (width: number) => void;
  destroy: () => void;
}

/** A colour of the page's scheme (styles.css), as the canvas needs it. */
function cssColour(element: HTMLElement, name: string, fallback: string): string {
  return getComputedStyle(element).getPropertyValue(name).trim() || fallback;
}

/** "#2f6fde" with an alpha; other colours are left without their area. */
function translucent(colour: string, alpha: number): string | undefined {
  const hex = /^#([0-9a-f]{6})$/i.exec(colour)?.[1];
  if (!hex) return undefined;
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/** Marks the highest point of the series with a dot and its value, inside the plot. */
function peakMark(format: (value: number) => string, colour: string, text: string): uPlot.Plugin {
  return {
    hooks: {
      draw: (u) => {
        const times = u.data[0];
        const peak = peakOf(u.data[1] ?? []);
        const at = peak ? times[peak.index] : undefined;
        if (!peak || at === undefined) return;
        const ratio = uPlot.pxRatio;
        const x = u.valToPos(at, "x", true);
        const y = u.valToPos(peak.value, "y", true);
        const { ctx, bbox } = u;
        ctx.save();
        ctx.fillStyle = colour;
        ctx.beginPath();
        ctx.arc(x, y, 3.5 * ratio, 0, 2 * Math.PI);
        ctx.fill();
        const label = `peak ${format(peak.value)}`;
        ctx.font = `600 ${11 * ratio}px system-ui, sans-serif`;
        ctx.fillStyle = text;
        const width = ctx.measureText(label).width;
        // Beside the dot, kept inside the plot: left of it near the right edge, under it near the top.
        const left = x + 6 * ratio + width > bbox.left + bbox.width ? x - 6 * ratio - width : x + 6 * ratio;
        const top = Math.max(y - 4 * ratio, bbox.top + 12 * ratio);
        ctx.fillText(label, Math.max(bbox.left, left), top);
        ctx.restore();
      },
    },
  };
}

export function createTimeChart(options: ChartOptions): ChartHandle {
  const { parent } = options;
  const accent = cssColour(parent, "--accent", "#2f6fde");
  const muted = cssColour(parent, "--muted", "#5d6673");
  const border = cssColour(parent, "--border", "#d8dce2");
  const text = cssColour(parent, "--text", "#1c2027");
  const axis = {
    stroke: muted,
    grid: { stroke: border, width: 1 },
    ticks: { stroke: border, width: 1 },
    font: "11px system-ui, sans-serif",
  };
  const chart = new uPlot(
    {
      width: options.width,
      height: options.height,
      cursor: { drag: { x: false, y: false } },
      legend: { show: true, live: true },
      scales: {
        x: { time: true },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.2 : 1] },
      },
      axes: [
        {
          ...axis,
          space: 64,
          values: (_u, ticks, _axis, _space, step) => ticks.map((tick) => options.formatTick(tick, step)),
        },
        { ...axis, size: 72, values: (_u, ticks) => ticks.map((tick) => options.format(tick)) },
      ],
      series: [
        { label: "Time", value: (_u, v) => (v === null ? "—" : options.formatMoment(v)) },
        {
          label: options.label,
          stroke: accent,
          width: 1.5,
          fill: translucent(accent, 0.14),
          points: { show: false },
          spanGaps: false,
          value: (_u, v) => (v === null ? "—" : options.format(v)),
        },
      ],
      plugins: [peakMark(options.format, accent, text)],
    },
    [[], []],
    parent,
  );
  return {
    setData: (times, values) => chart.setData([[...times], [...values]]),
    setWidth: (width) => {
      if (width > 0 && width !== chart.width) chart.setSize({ width, height: options.height });
    },
    destroy: () => chart.destroy(),
  };
}
