import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, type ReactNode } from "react";
import type { Schedule, ScheduleRun } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatBytes, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { Table } from "../../components/Table";
import { HISTORY_LIMIT, scheduleKeys, scheduleRunsQueryOptions } from "./queries";

const COLUMNS = ["Outcome", "Stack", "Started", "Duration", "Size", "Pruned", "Error"] as const;
const DRILL_COLUMNS = ["Outcome", "Stack", "Archive", "Started", "Duration"] as const;
const PRUNE_COLUMNS = ["Outcome", "Started", "Duration", "Freed", "Removed", "Notes"] as const;

const OUTCOME_LABELS: Record<ScheduleRun["outcome"], string> = {
  running: "Running…",
  succeeded: "Succeeded",
  failed: "Failed",
  missed: "Missed",
  interrupted: "Interrupted",
};

/** "4 s", "2 min 5 s", "1 h 3 min"; "—" while it runs. */
export function formatDuration(started: string, finished: string | null): string {
  if (!finished) return "—";
  const seconds = Math.max(0, Math.round((Date.parse(finished) - Date.parse(started)) / 1000));
  if (Number.isNaN(seconds)) return "—";
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A drill's outcome: "Restore verified", or "Drill failed: why". */
function drillOutcome(run: ScheduleRun): ReactNode {
  if (run.outcome === "succeeded") return <span className="status tone-good">Restore verified</span>;
  if (run.outcome === "running") return OUTCOME_LABELS.running;
  return (
    <span className="error">
      {run.outcome === "failed" ? "Drill failed" : OUTCOME_LABELS[run.outcome]}
      {run.error && `: ${run.error}`}
    </span>
  );
}

function StackCell({ run }: { run: ScheduleRun }) {
  return <td>{run.stack_id === "*" ? <span className="muted">every stack</span> : run.stack_id}</td>;
}

/** A prune's notes: why it failed, or what it left (and why), or nothing. */
function pruneNotes(run: ScheduleRun): ReactNode {
  if (!run.error) return "—";
  return <span className={run.outcome === "succeeded" ? "warn-text" : "error"}>{run.error}</span>;
}

/** A schedule's runs, newest first: one row per stack and run (a missed run names no stack). A
 * drill's say whether the restore was verified, of which archive; a prune's (one row per run)
 * what it freed and how many objects it removed. */
export function ScheduleHistory({ schedule, onClose }: { schedule: Schedule; onClose: () => void }) {
  const queryClient = useQueryClient();
  const runs = useQuery(scheduleRunsQueryOptions(schedule.id, schedule.running));
  // Polled while it runs; read once more when it has stopped, for the outcome of its last stack.
  const wasRunning = useRef(schedule.running);
  useEffect(() => {
    if (wasRunning.current && !schedule.running) {
      void queryClient.invalidateQueries({ queryKey: scheduleKeys.runs(schedule.id) });
    }
    wasRunning.current = schedule.running;
  }, [queryClient, schedule.id, schedule.running]);
  const label = `History of ${schedule.name}`;
  return (
    <section className="card" aria-label={label}>
      <div className="console-head">
        <h2>{label}</h2>
        <button type="button" className="link-button" aria-label={`Close ${label}`} onClick={onClose}>
          Close
        </button>
      </div>
      {runs.isError ? (
        <ErrorBanner error={runs.error} onRetry={() => void runs.refetch()} />
      ) : !runs.data ? (
        <Loading />
      ) : runs.data.length === 0 ? (
        <p className="muted">It has not run yet.</p>
      ) : (
        <>
          {schedule.kind === "prune" ? (
            <Table label={label} columns={PRUNE_COLUMNS}>
              {runs.data.map((run) => (
                <tr key={run.id} className={`outcome-${run.outcome}`}>
                  <td className="nowrap">{OUTCOME_LABELS[run.outcome]}</td>
                  <td className="nowrap">{formatDateTime(run.started_at)}</td>
                  <td className="nowrap">{formatDuration(run.started_at, run.finished_at)}</td>
                  <td className="nowrap">{run.size === null ? "—" : formatBytes(run.size)}</td>
                  <td className="nowrap">
                    {run.outcome === "succeeded" ? `${run.pruned} object${run.pruned === 1 ? "" : "s"}` : "—"}
                  </td>
                  <td className="small">{pruneNotes(run)}</td>
                </tr>
              ))}
            </Table>
          ) : schedule.kind === "drill" ? (
            <Table label={label} columns={DRILL_COLUMNS}>
              {runs.data.map((run) => (
                <tr key={run.id} className={`outcome-${run.outcome}`}>
                  <td>{drillOutcome(run)}</td>
                  <StackCell run={run} />
                  <td className="small">{run.archive ? <code>{run.archive}</code> : "—"}</td>
                  <td className="nowrap">{formatDateTime(run.started_at)}</td>
                  <td className="nowrap">{formatDuration(run.started_at, run.finished_at)}</td>
                </tr>
              ))}
            </Table>
          ) : (
            <Table label={label} columns={COLUMNS}>
              {runs.data.map((run) => (
                <tr key={run.id} className={`outcome-${run.outcome}`}>
                  <td className="nowrap">{OUTCOME_LABELS[run.outcome]}</td>
                  <StackCell run={run} />
                  <td className="nowrap">{formatDateTime(run.started_at)}</td>
                  <td className="nowrap">{formatDuration(run.started_at, run.finished_at)}</td>
                  <td className="nowrap">{run.size === null ? "—" : formatBytes(run.size)}</td>
                  <td>{run.pruned}</td>
                  <td className="small">{run.error ? <span className="error">{run.error}</span> : "—"}</td>
                </tr>
              ))}
            </Table>
          )}
          {runs.data.length >= HISTORY_LIMIT && <p className="muted small">The newest {HISTORY_LIMIT} runs.</p>}
        </>
      )}
    </section>
  );
}
