import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "../../api/errors";
import type { Agent, Destination, Schedule } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { agentsQueryOptions } from "../agents/queries";
import { destinationsQueryOptions } from "../destinations/queries";
import { schedulesQueryOptions, specOf, useDeleteSchedule, useRunSchedule, useUpdateSchedule } from "./queries";
import { ScheduleDialog } from "./ScheduleDialog";
import { ScheduleHistory } from "./ScheduleHistory";
import { describeTimetable } from "./timetable";

const COLUMNS = ["Name", "Host", "Timetable", "Stacks", "Destination", "Next run", "Last run", "Enabled"] as const;

/** The host whose stacks a schedule backs up: this one, or an agent (by name once the list is read). */
function hostName(agentId: number | null, agents: Agent[] | undefined): string {
  if (agentId === null) return "This host";
  return agents?.find((a) => a.id === agentId)?.name ?? `Agent #${agentId}`;
}

/** Where a backup's archives go, or where a drill takes the latest backup from (a prune: nowhere). */
function destinationName(schedule: Schedule, destinations: Destination[] | undefined, host: string): string {
  if (schedule.kind === "prune") return "—";
  const id = schedule.destination_id ?? null;
  const drill = schedule.kind === "drill";
  if (id === null) return drill ? `${host}'s archives` : `${host} only`;
  const name = destinations?.find((d) => d.id === id)?.name ?? `Destination #${id}`;
  return drill ? `Latest from ${name}` : name;
}

function LastRun({ schedule }: { schedule: Schedule }) {
  if (schedule.running) return <span className="badge">Running…</span>;
  if (!schedule.last_status) return <span className="muted">Never</span>;
  const failed = schedule.last_status !== "succeeded";
  return (
    <>
      <span className={failed ? "error" : "success"}>{schedule.last_status}</span>
      <div className="muted small">{formatDateTime(schedule.last_run_at)}</div>
    </>
  );
}

function ScheduleRow({
  schedule,
  destinations,
  agents,
  onHistory,
  onEdit,
  onDelete,
}: {
  schedule: Schedule;
  destinations: Destination[] | undefined;
  agents: Agent[] | undefined;
  onHistory: () => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const run = useRunSchedule();
  const toggle = useUpdateSchedule();
  const problem = run.error ?? toggle.error;
  const host = hostName(schedule.agent_id ?? null, agents);
  const agent = agents?.find((a) => a.id === schedule.agent_id);
  return (
    <tr>
      <th scope="row">
        {schedule.name}
        {schedule.kind !== "backup" && (
          <>
            {" "}
            <span className="badge">{schedule.kind === "drill" ? "Restore drill" : "Disk prune"}</span>
          </>
        )}
        {problem && (
          <p className="error small" role="alert">
            {errorMessage(problem)}
          </p>
        )}
      </th>
      <td>
        {host}
        {agent && !agent.enabled && <div className="muted small">disabled</div>}
      </td>
      <td className="small">{describeTimetable(schedule.cron, schedule.timezone)}</td>
      <td className="small">
        {schedule.kind === "prune" ? (
          <span className="muted">The host&apos;s disk</span>
        ) : schedule.stacks ? (
          schedule.stacks.join(", ")
        ) : (
          "Every stack"
        )}
      </td>
      <td>{destinationName(schedule, destinations, host)}</td>
      <td className="nowrap">{schedule.enabled ? formatDateTime(schedule.next_run_at) : <span className="muted">—</span>}</td>
      <td className="nowrap">
        <LastRun schedule={schedule} />
      </td>
      <td>
        <label className="check">
          <input
            type="checkbox"
            role="switch"
            aria-label={`${schedule.name} enabled`}
            checked={schedule.enabled}
            disabled={toggle.isPending}
            onChange={(event) =>
              toggle.mutate({ id: schedule.id, spec: { ...specOf(schedule), enabled: event.target.checked } })
            }
          />
          <span aria-hidden="true">{schedule.enabled ? "On" : "Off"}</span>
        </label>
      </td>
      <RowActions>
        <button
          type="button"
          aria-label={`Run ${schedule.name} now`}
          disabled={schedule.running || run.isPending}
          onClick={() => run.mutate(schedule.id)}
        >
          Run now
        </button>
        <button type="button" aria-label={`History of ${schedule.name}`} onClick={onHistory}>
          History
        </button>
        <button type="button" aria-label={`Edit ${schedule.name}`} onClick={onEdit}>
          Edit
        </button>
        <button type="button" className="danger" aria-label={`Delete ${schedule.name}`} onClick={onDelete}>
          Delete
        </button>
      </RowActions>
    </tr>
  );
}

function Schedules() {
  const schedules = useQuery(schedulesQueryOptions());
  const destinations = useQuery(destinationsQueryOptions());
  const agents = useQuery(agentsQueryOptions());
  const remove = useDeleteSchedule();
  const [dialog, setDialog] = useState<{ schedule: Schedule | null } | null>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const [historyOf, setHistoryOf] = useState<number | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const history = schedules.data?.find((s) => s.id === historyOf) ?? null;

  return (
    <main className="page">
      <div className="page-head">
        <h1>Schedules</h1>
        <div className="page-tools">
          <button type="button" className="primary" onClick={() => setDialog({ schedule: null })}>
            Add a schedule
          </button>
        </div>
      </div>
      <p className="muted">
        Back stacks up on a timetable, on this host or an agent, keep the archives there or push them to a destination,
        and prune the old ones; or prove that the latest backups restore with a restore drill; or prune a host&apos;s disk
        of what nothing uses.
      </p>
      {saved && (
        <p className="success" role="status">
          {saved}
        </p>
      )}
      {schedules.isError && <ErrorBanner error={schedules.error} onRetry={() => void schedules.refetch()} />}
      {!schedules.data ? (
        !schedules.isError && <Loading />
      ) : schedules.data.length === 0 ? (
        <p className="muted">No schedules yet.</p>
      ) : (
        <Table label="Schedules" columns={COLUMNS} actions>
          {schedules.data.map((schedule) => (
            <ScheduleRow
              key={schedule.id}
              schedule={schedule}
              destinations={destinations.data}
              agents={agents.data}
              onHistory={() => setHistoryOf(schedule.id)}
              onEdit={() => setDialog({ schedule })}
              onDelete={() => setDeleting(schedule)}
            />
          ))}
        </Table>
      )}
      {history && <ScheduleHistory key={history.id} schedule={history} onClose={() => setHistoryOf(null)} />}
      {dialog && (
        <ScheduleDialog
          schedule={dialog.schedule}
          onClose={() => setDialog(null)}
          onSaved={(schedule) => {
            setDialog(null);
            setSaved(`Schedule ${schedule.name} saved.`);
          }}
        />
      )}
      {deleting && (
        <ConfirmDelete
          title={`Delete schedule ${deleting.name}?`}
          confirmLabel="Delete the schedule"
          remove={remove}
          variables={deleting.id}
          onCancel={() => setDeleting(null)}
          onDeleted={() => {
            if (historyOf === deleting.id) setHistoryOf(null);
            setDeleting(null);
          }}
        >
          <p>The schedule and its history are forgotten. The archives it made stay, here and at the destination.</p>
        </ConfirmDelete>
      )}
    </main>
  );
}

/** Admins only (the sidebar shows it to them alone; the server refuses everybody else). */
export function SchedulesPage() {
  const mayManage = useCan("schedules.manage");
  if (!mayManage) {
    return (
      <main className="page">
        <h1>Schedules</h1>
        <p className="muted">Only admins manage backup schedules.</p>
      </main>
    );
  }
  return <Schedules />;
}
