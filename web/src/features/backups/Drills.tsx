import { useQueries } from "@tanstack/react-query";
import { Link } from "react-router";
import { errorMessage } from "../../api/errors";
import type { HostId } from "../../api/hosts";
import type { DrillRecord } from "../../api/types";
import { formatAgo, formatBytes, formatDateTime } from "../../components/format";
import { useNow } from "../../hooks/useNow";
import { useHost, withHost } from "../hosts/host";
import { drillsQueryOptions } from "./queries";

/** Each stack's restore drills, newest first, as far as read: by stack id. */
export interface StackDrills {
  records: ReadonlyMap<string, DrillRecord[]>;
  errors: ReadonlyMap<string, Error>;
  /** The archives a drill has verified. */
  verified: ReadonlySet<string>;
}

/** The restore drills of `stackIds` on `host` (one request per stack). */
export function useStackDrills(host: HostId, stackIds: readonly string[], enabled: boolean): StackDrills {
  return useQueries({
    queries: stackIds.map((id) => ({ ...drillsQueryOptions(host, id), enabled })),
    combine: (results) => {
      const records = new Map<string, DrillRecord[]>();
      const errors = new Map<string, Error>();
      results.forEach((result, index) => {
        const id = stackIds[index];
        if (id === undefined) return;
        if (result.data) records.set(id, result.data);
        if (result.error) errors.set(id, result.error);
      });
      const verified = new Set(
        [...records.values()].flatMap((list) => list.filter((r) => r.verified).map((r) => r.archive)),
      );
      return { records, errors, verified };
    },
  });
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "Restore verified 3 min ago: 2 volumes and folders, 14 files, 1.2 MB — db: healthy", or why not, with what it left out. */
export function DrillOutcome({ record }: { record: DrillRecord }) {
  const now = useNow();
  const when = (
    <time dateTime={record.finished_at} title={`${formatDateTime(record.finished_at)}, of ${record.archive}`}>
      {formatAgo(record.finished_at, now)}
    </time>
  );
  return (
    <>
      {record.verified ? (
        <span>
          <span className="status tone-good">Restore verified</span> {when}:{" "}
          {plural(record.compared, "volume or folder", "volumes and folders")}, {plural(record.files, "file", "files")},{" "}
          {formatBytes(record.bytes)}
          {record.services.length > 0 && ` — ${record.services.join(", ")}`}
        </span>
      ) : (
        <span>
          <span className="status tone-bad">Restore drill failed</span> {when}
          {record.error && `: ${record.error}`}
        </span>
      )}
      {record.notes.length > 0 && (
        <details className="small">
          <summary>Left out ({record.notes.length})</summary>
          <ul className="plain">
            {record.notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

/** Per stack of the archives listed, its last restore drill: verified (with the figures), or why not. */
export function DrillsSection({ stackIds, drills }: { stackIds: readonly string[]; drills: StackDrills }) {
  const host = useHost();
  if (stackIds.length === 0) return null;
  return (
    <section className="card" aria-label="Restore drills">
      <h2>Restore drills</h2>
      <p className="muted small">
        A drill restores an archive into a scratch clone, compares it with the archive, starts it without network and
        removes it: proof that the backup restores.
      </p>
      <ul className="plain drills">
        {stackIds.map((id) => {
          const last = drills.records.get(id)?.[0];
          const error = drills.errors.get(id);
          return (
            <li key={id} aria-label={`Last drill of ${id}`}>
              <Link to={withHost(`/stacks/${encodeURIComponent(id)}`, host)}>{id}</Link>:{" "}
              {error ? (
                <span className="error small">{errorMessage(error)}</span>
              ) : !drills.records.has(id) ? (
                <span className="muted">…</span>
              ) : last ? (
                <DrillOutcome record={last} />
              ) : (
                <span className="muted">No restore drill yet.</span>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
