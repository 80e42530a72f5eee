import type { DiskSummary } from "../../api/types";
import { formatBytes, formatDateTime } from "../../components/format";

function Figure({
  label,
  value,
  detail,
  when,
  title,
}: {
  label: string;
  value: string;
  detail?: string;
  /** A time, not a headline figure: drawn smaller. */
  when?: boolean;
  title?: string;
}) {
  return (
    <div className="kpi" title={title}>
      <dt>{label}</dt>
      <dd>
        <span className={when ? "kpi-value kpi-when" : "kpi-value"}>{value}</span>
        {detail && <div className="muted small">{detail}</div>}
      </dd>
    </div>
  );
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** A host's disk in figures: bytes per kind, what a prune may free, and when the engine measured it. */
export function DiskFigures({ summary }: { summary: DiskSummary }) {
  return (
    <section aria-label="Disk summary">
      <dl className="kpis disk-figures">
        <Figure label="Images" value={formatBytes(summary.images)} detail={plural(summary.images_count, "image", "images")} />
        <Figure
          label="Containers"
          value={formatBytes(summary.containers)}
          detail={plural(summary.containers_count, "container", "containers")}
        />
        <Figure
          label="Volumes"
          value={formatBytes(summary.volumes)}
          detail={plural(summary.volumes_count, "volume", "volumes")}
        />
        <Figure label="Build cache" value={formatBytes(summary.build_cache)} />
        <Figure
          label="Reclaimable"
          value={formatBytes(summary.reclaimable)}
          detail="what a prune may free"
          title="Unused images, stopped containers of no stack, unused anonymous volumes and unused build cache, none of what a prune never takes"
        />
        <Figure label="Measured" value={formatDateTime(summary.measured_at, { seconds: false })} when />
      </dl>
    </section>
  );
}
