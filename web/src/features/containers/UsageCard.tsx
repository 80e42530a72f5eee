import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import type { ContainerUsage, UsageHistory, UsagePoint, UsageTotals } from "../../api/types";
import { ErrorText } from "../../components/ErrorText";
import { formatBytes } from "../../components/format";
import { TimeChart } from "../../components/chart/TimeChart";
import { Cell, Row, Table, useFoldedColumns } from "../../components/Table";
import { useHost } from "../hosts/host";
import { usageHistoryQueryOptions, usageQueryOptions } from "./queries";

const COLUMNS = ["Container", "CPU", "Memory", "Network in / out", "Disk read / write", "Processes", "Restarts", "Up for", "Health"] as const;

function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : `${value.toFixed(1)} %`;
}

function bytes(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : formatBytes(value);
}

/** "3 d 4 h", "2 h 5 min", "42 s" since `started`. */
export function uptime(started: string | null | undefined, now: number = Date.now()): string {
  if (!started) return "—";
  const since = new Date(started).getTime();
  if (Number.isNaN(since)) return "—";
  let seconds = Math.max(0, Math.floor((now - since) / 1000));
  const days = Math.floor(seconds / 86_400);
  seconds -= days * 86_400;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  if (days) return `${days} d ${hours} h`;
  if (hours) return `${hours} h ${minutes} min`;
  if (minutes) return `${minutes} min ${seconds % 60} s`;
  return `${seconds} s`;
}

function memory(usage: ContainerUsage): string {
  if (usage.memory_used === null) return "—";
  const limit = usage.memory_limit ? ` of ${formatBytes(usage.memory_limit)}` : "";
  return `${formatBytes(usage.memory_used)}${limit}`;
}

/** The columns that leave the table, in this order, when its box is too narrow for all. */
const FOLD = ["Health", "Restarts", "Processes", "Disk read / write", "Network in / out", "Up for"] as const;

/** The stack's sums, under its containers; the columns without a sum are left empty. */
function TotalRow({ total }: { total: UsageTotals }) {
  const folded = useFoldedColumns();
  const empty = ["Processes", "Restarts", "Up for", "Health"].filter((column) => !folded.has(column)).length;
  return (
    <Row className="total-row">
      <th scope="row">Stack ({total.containers} running)</th>
      <td className="nowrap">{percent(total.cpu_percent)}</td>
      <td className="nowrap">{formatBytes(total.memory_used)}</td>
      <Cell column="Network in / out" className="nowrap">
        {formatBytes(total.network_rx)} / {formatBytes(total.network_tx)}
      </Cell>
      <Cell column="Disk read / write" className="nowrap">
        {formatBytes(total.block_read)} / {formatBytes(total.block_write)}
      </Cell>
      {empty > 0 && <td colSpan={empty} />}
    </Row>
  );
}

/**
 * The last minutes of CPU and memory of each container that has two points or more, as
 * charts with their times, values and peaks.
 */
function UsageCharts({ history, containers }: { history: UsageHistory; containers: string[] }) {
  const shown = containers.filter((name) => (history.containers[name] ?? []).length > 1);
  if (shown.length === 0) return null;
  const minutes = Math.round(Math.max(...shown.map((name) => history.containers[name]?.length ?? 0)) * history.step_seconds / 60);
  return (
    <div className="usage-charts">
      <h3>
        The last {minutes > 0 ? `${minutes} min` : "minute"} <span className="muted small">(kept while someone looks)</span>
      </h3>
      <ul className="plain">
        {shown.map((name) => (
          <ContainerCharts key={name} name={name} points={history.containers[name] ?? []} step={history.step_seconds} />
        ))}
      </ul>
    </div>
  );
}

/**
 * The points as the charts draw them: where samples are missing (no one looked, the
 * container was stopped) a point without figures, so the line breaks there rather than
 * drawing a straight line over the time nothing was read.
 */
export function withGaps(points: readonly UsagePoint[], step: number): UsagePoint[] {
  const drawn: UsagePoint[] = [];
  points.forEach((point, index) => {
    const before = points[index - 1];
    if (before && point.at - before.at > step * 1.5) {
      drawn.push({ at: before.at + step, cpu_percent: null, memory_used: null });
    }
    drawn.push(point);
  });
  return drawn;
}

function ContainerCharts({ name, points, step }: { name: string; points: UsagePoint[]; step: number }) {
  const drawn = useMemo(() => withGaps(points, step), [points, step]);
  const times = useMemo(() => drawn.map((p) => p.at), [drawn]);
  const cpu = useMemo(() => drawn.map((p) => p.cpu_percent), [drawn]);
  const memory = useMemo(() => drawn.map((p) => p.memory_used), [drawn]);
  return (
    <li className="usage-chart">
      <code>{name}</code>
      <div className="usage-chart-pair">
        <TimeChart title={`CPU of ${name}`} times={times} values={cpu} format={percent} />
        <TimeChart title={`Memory of ${name}`} times={times} values={memory} format={formatBytes} />
      </div>
    </li>
  );
}

/**
 * What the stack's running containers use, refreshed every two seconds while shown, and
 * the last minutes of all of them as small charts. `containers`: the stack's, as its page
 * last read them; one it says is no longer running leaves the table at once (the engine's
 * figures of a stopped container linger for a sample).
 */
export function UsageCard({
  stackId,
  containers,
}: {
  stackId: string;
  containers: { name: string; running: boolean }[];
}) {
  const host = useHost();
  const usage = useQuery(usageQueryOptions(host));
  const history = useQuery(usageHistoryQueryOptions(host, stackId)).data;
  const names = new Set(containers.filter((c) => c.running).map((c) => c.name));
  const mine = (usage.data?.containers ?? []).filter((c) => names.has(c.name));
  const total = usage.data?.stacks[stackId];
  return (
    <section className="card" aria-labelledby="usage-title">
      <h2 id="usage-title">Resource use</h2>
      {usage.isError && <ErrorText error={usage.error} />}
      {!usage.data ? (
        !usage.isError && <p className="muted">Reading…</p>
      ) : mine.length === 0 ? (
        <p className="muted">No container of this stack is running.</p>
      ) : (
        <Table label="Resource use" columns={COLUMNS} fold={FOLD}>
          {mine.map((c) => (
            <Row key={c.id}>
              <th scope="row">
                <code>{c.name}</code>
              </th>
              <td className="nowrap">{percent(c.cpu_percent)}</td>
              <td className="nowrap">{memory(c)}</td>
              <Cell column="Network in / out" className="nowrap">
                {bytes(c.network_rx)} / {bytes(c.network_tx)}
              </Cell>
              <Cell column="Disk read / write" className="nowrap">
                {bytes(c.block_read)} / {bytes(c.block_write)}
              </Cell>
              <Cell column="Processes">{c.pids ?? "—"}</Cell>
              <Cell column="Restarts">{c.restarts ?? "—"}</Cell>
              <Cell column="Up for" className="nowrap">
                {uptime(c.started_at)}
              </Cell>
              <Cell column="Health">{c.health ?? "—"}</Cell>
            </Row>
          ))}
          {total && mine.length > 1 && <TotalRow total={total} />}
        </Table>
      )}
      {history && <UsageCharts history={history} containers={containers.map((c) => c.name)} />}
    </section>
  );
}
