import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { Table } from "../../components/Table";
import type { AuditEntry } from "../../api/types";
import { AUDIT_PAGE_SIZE, auditQueryOptions } from "./queries";

const AUDIT_COLUMNS = ["Time", "Actor", "Action", "Target", "Outcome", "Detail"] as const;

/** Admin only: who did what, newest first, a page at a time. */
/** "started": work that goes on (a backup, a restore), whose outcome is an entry of its own. */
const OUTCOME_TONE: Record<AuditEntry["outcome"], string> = {
  success: "tone-good",
  failure: "tone-bad",
  started: "tone-info",
};

export function AuditSection() {
  const [offset, setOffset] = useState(0);
  const audit = useQuery(auditQueryOptions(AUDIT_PAGE_SIZE, offset));
  const total = audit.data?.total ?? 0;
  const items = audit.data?.items ?? [];
  const first = items.length ? offset + 1 : 0;
  const last = offset + items.length;

  return (
    <section className="card" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      {audit.isError && <ErrorBanner error={audit.error} onRetry={() => void audit.refetch()} />}
      {!audit.data && !audit.isError && <Loading />}
      {audit.data && (
        <>
          {items.length === 0 ? (
            <p className="muted">No audit entries yet.</p>
          ) : (
            <Table label="Audit log" columns={AUDIT_COLUMNS} busy={audit.isPlaceholderData}>
              {items.map((entry) => (
                <tr key={entry.id}>
                  <td className="nowrap">
                    <time dateTime={entry.at}>{formatDateTime(entry.at)}</time>
                  </td>
                  <td>{entry.actor}</td>
                  <td>
                    <code>{entry.action}</code>
                  </td>
                  <td>{entry.target ?? "—"}</td>
                  <td>
                    <span className={`status ${OUTCOME_TONE[entry.outcome]}`}>
                      {entry.outcome}
                    </span>
                  </td>
                  <td className="detail">{entry.detail ?? ""}</td>
                </tr>
              ))}
            </Table>
          )}
          <div className="pager">
            <span className="muted">
              {first}–{last} of {total}
            </span>
            <button
              type="button"
              disabled={offset === 0 || audit.isFetching}
              onClick={() => setOffset(Math.max(0, offset - AUDIT_PAGE_SIZE))}
            >
              Previous
            </button>
            <button
              type="button"
              disabled={offset + AUDIT_PAGE_SIZE >= total || audit.isFetching}
              onClick={() => setOffset(offset + AUDIT_PAGE_SIZE)}
            >
              Next
            </button>
          </div>
        </>
      )}
    </section>
  );
}
