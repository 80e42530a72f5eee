import { useQuery } from "@tanstack/react-query";
import type { ContainerUsage, UsageHistory } from "../../api/types";
import { ErrorText } from "../../components/ErrorText";
import { formatBytes } from "../../components/format";
import { Sparkline } from "../../components/Sparkline";
import { Table } from "../../components/Table";
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

/** The last minutes of CPU and memory of each container that has two points or more. */
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
        {shown.map((name) => {
          const points = history.containers[name] ?? [];
          const cpu = points.map((p) => p.cpu_percent);
          const memory = points.map((p) => p.memory_used);
          const peakCpu = Math.max(0, ...cpu.map((v) => v ?? 0));
          const peakMemory = Math.max(0, ...memory.map((v) => v ?? 0));
          return (
            <li key={name} className="usage-chart">
              <code>{name}</code>
              <span className="chart-pair">
                <Sparkline values={cpu} label={`CPU of ${name}, peak ${percent(peakCpu)}`} />
                <span className="muted small">CPU, peak {percent(peakCpu)}</span>
              </span>
              <span className="chart-pair">
                <Sparkline values={memory} label={`Memory of ${name}, peak ${formatBytes(peakMemory)}`} />
                <span className="muted small">Memory, peak {formatBytes(peakMemory)}</span>
              </span>
            </li>
          );
        })}
      </ul>
    </div>
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
        <Table label="Resource use" columns={COLUMNS}>
          {mine.map((c) => (
            <tr key={c.id}>
              <th scope="row">
                <code>{c.name}</code>
              </th>
              <td className="nowrap">{percent(c.cpu_percent)}</td>
              <td className="nowrap">{memory(c)}</td>
              <td className="nowrap">
                {bytes(c.network_rx)} / {bytes(c.network_tx)}
              </td>
              <td className="nowrap">
                {bytes(c.block_read)} / {bytes(c.block_write)}
              </td>
              <td>{c.pids ?? "—"}</td>
              <td>{c.restarts ?? "—"}</td>
              <td className="nowrap">{uptime(c.started_at)}</td>
              <td>{c.health ?? "—"}</td>
            </tr>
          ))}
          {total && mine.length > 1 && (
            <tr className="total-row">
              <th scope="row">Stack ({total.containers} running)</th>
              <td className="nowrap">{percent(total.cpu_percent)}</td>
              <td className="nowrap">{formatBytes(total.memory_used)}</td>
              <td className="nowrap">
                {formatBytes(total.network_rx)} / {formatBytes(total.network_tx)}
              </td>
              <td className="nowrap">
                {formatBytes(total.block_read)} / {formatBytes(total.block_write)}
              </td>
              <td colSpan={4} />
            </tr>
          )}
        </Table>
      )}
      {history && <UsageCharts history={history} containers={containers.map((c) => c.name)} />}
    </section>
  );
}
