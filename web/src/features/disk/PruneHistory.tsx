import { useQuery } from "@tanstack/react-query";
import type { PruneReport } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatBytes, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { useHost } from "../hosts/host";
import { KIND_LABELS, KINDS } from "./filters";
import { prunesQueryOptions } from "./queries";
import { WhyList } from "./PruneDialog";

/** "12.0 MB of images, 3.1 MB of build cache", or "nothing". */
function freedText(report: PruneReport): string {
  const parts = KINDS.filter((kind) => (report.freed[kind] ?? 0) > 0).map(
    (kind) => `${formatBytes(report.freed[kind] ?? 0)} of ${KIND_LABELS[kind].toLowerCase()}`,
  );
  return parts.length ? parts.join(", ") : "nothing";
}

function PruneEntry({ report }: { report: PruneReport }) {
  return (
    <li className="prune-entry">
      <div>
        <strong>{formatDateTime(report.at)}</strong>
        {report.origin && <span className="muted"> · {report.origin}</span>}
      </div>
      <div>
        {report.removed.length} object{report.removed.length === 1 ? "" : "s"} removed, {formatBytes(report.total)} freed
        <span className="muted small"> ({freedText(report)})</span>
      </div>
      {report.left.length > 0 && (
        <details>
          <summary className="small warn-text">{report.left.length} left</summary>
          <WhyList label="Left" items={report.left} />
        </details>
      )}
    </li>
  );
}

/** The host's last prunes, by hand or by a schedule, newest first: what each removed and freed, what it left. */
export function PruneHistory({ enabled }: { enabled: boolean }) {
  const host = useHost();
  const prunes = useQuery({ ...prunesQueryOptions(host), enabled });
  return (
    <section className="card" aria-labelledby="prunes-title">
      <h2 id="prunes-title">Prunes</h2>
      {prunes.isError ? (
        <ErrorBanner error={prunes.error} onRetry={() => void prunes.refetch()} />
      ) : !prunes.data ? (
        <Loading />
      ) : prunes.data.length === 0 ? (
        <p className="muted">No prune on this host yet.</p>
      ) : (
        <ul className="plain prune-history" aria-label="Prunes of this host">
          {prunes.data.map((report, index) => (
            <PruneEntry key={`${report.at}-${index}`} report={report} />
          ))}
        </ul>
      )}
    </section>
  );
}
