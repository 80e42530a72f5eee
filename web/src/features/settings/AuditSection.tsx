import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatDateTime } from "../../components/format";
import { AUDIT_PAGE_SIZE, auditQueryOptions } from "./queries";

/** Admin only: who did what, newest first, a page at a time. */
export function AuditSection({ pageSize = AUDIT_PAGE_SIZE }: { pageSize?: number }) {
  const [offset, setOffset] = useState(0);
  const audit = useQuery(auditQueryOptions(pageSize, offset));
  const total = audit.data?.total ?? 0;
  const items = audit.data?.items ?? [];
  const first = items.length ? offset + 1 : 0;
  const last = offset + items.length;

  return (
    <section className="card" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      {audit.isError && <ErrorBanner error={audit.error} onRetry={() => void audit.refetch()} />}
      {!audit.data && !audit.isError && (
        <p className="muted" role="status">
          Loading…
        </p>
      )}
      {audit.data && (
        <>
          {items.length === 0 ? (
            <p className="muted">No audit entries yet.</p>
          ) : (
            <div className="table-wrap">
              <table aria-label="Audit log" aria-busy={audit.isPlaceholderData || undefined}>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Action</th>
                    <th scope="col">Target</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Detail</th>
                  </tr>
                </thead>
                <tbody>
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
                        <span className={entry.outcome === "success" ? "status status-good" : "status status-bad"}>
                          {entry.outcome}
                        </span>
                      </td>
                      <td className="detail">{entry.detail ?? ""}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <div className="pager">
            <span className="muted">
              {first}–{last} of {total}
            </span>
            <button
              type="button"
              disabled={offset === 0 || audit.isFetching}
              onClick={() => setOffset(Math.max(0, offset - pageSize))}
            >
              Previous
            </button>
            <button
              type="button"
              disabled={offset + pageSize >= total || audit.isFetching}
              onClick={() => setOffset(offset + pageSize)}
            >
              Next
            </button>
          </div>
        </>
      )}
    </section>
  );
}
