import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { GitRepository, GitSyncReport } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { formatAgo, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { Cell, Row, RowActions, Table } from "../../components/Table";
import { useHostInfo } from "../hosts/capabilities";
import { useHost } from "../hosts/host";
import { HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import { OUTCOME_LABEL, OUTCOME_TONE } from "./outcome";
import { useGitAdmin, useGitOperator } from "./permissions";
import { gitRepositoriesQueryOptions, useDeleteRepository, useSyncRepository } from "./queries";
import { RepositoryAccessDialog } from "./RepositoryAccess";
import { AUTH_LABEL, RepositoryDialog } from "./RepositoryDialog";
import "./git.css";

const COLUMNS = ["Repository", "Sign-in", "Poll", "Last fetch", "Signed commits"] as const;
const FOLD = ["Signed commits", "Poll", "Sign-in"] as const;

/** "every 5 min", "every 45 s", or by webhook and by hand only. */
export function pollText(seconds: number): string {
  if (seconds === 0) return "Only by webhook or by hand";
  if (seconds % 3600 === 0) return `Every ${seconds / 3600} h`;
  if (seconds % 60 === 0) return `Every ${seconds / 60} min`;
  return `Every ${seconds} s`;
}

function LastFetch({ repository }: { repository: GitRepository }) {
  const last = repository.last_fetch;
  if (!last) return <span className="muted">Never</span>;
  const when = (
    <time dateTime={last.at} title={formatDateTime(last.at)}>
      {formatAgo(last.at)}
    </time>
  );
  if (last.error) {
    return (
      <span className="error">
        Failed {when}: {last.error}
      </span>
    );
  }
  return (
    <span>
      <code title={last.commit ?? undefined}>{(last.commit ?? "").slice(0, 12)}</code>{" "}
      <span className="muted small">{when}</span>
    </span>
  );
}

/** What a "Sync now" did: the commit fetched (or why not), then each stack's outcome. */
function SyncReportNotice({
  name,
  report,
  onDone,
}: {
  name: string;
  report: GitSyncReport;
  onDone: () => void;
}) {
  const stacks = Object.entries(report.stacks ?? {});
  return (
    <div className={report.error ? "error-banner" : "notice"} role="region" aria-label={`Sync of ${name}`}>
      <div>
        {report.error ? (
          <p>Sync of {name} failed: {report.error}</p>
        ) : (
          <p>
            Sync of {name}: fetched commit <code>{(report.commit ?? "").slice(0, 12)}</code>.
            {stacks.length === 0 && " No stack follows it (a stack whose policy is off is left alone)."}
          </p>
        )}
        {stacks.length > 0 && (
          <ul className="plain" aria-label="Stacks synced">
            {stacks.map(([stack, outcome]) => (
              <li key={stack}>
                <strong>{stack}</strong>:{" "}
                <span className={`status tone-${OUTCOME_TONE[outcome.outcome]}`}>{OUTCOME_LABEL[outcome.outcome]}</span>
                {outcome.detail && <span className="muted"> ({outcome.detail})</span>}
              </li>
            ))}
          </ul>
        )}
      </div>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

function RepositoryRow({
  repository,
  mayAdminister,
  maySync,
  syncing,
  onSync,
  onEdit,
  onAccess,
  onDelete,
}: {
  repository: GitRepository;
  mayAdminister: boolean;
  maySync: boolean;
  syncing: boolean;
  onSync: () => void;
  onEdit: () => void;
  onAccess: () => void;
  onDelete: () => void;
}) {
  return (
    <Row>
      <th scope="row" className="git-repo-cell">
        {repository.name}
        <div className="row-sub">
          <code>{repository.url}</code>
        </div>
        <div className="row-sub muted">
          {repository.ref}
          {repository.webhook ? " · webhook set" : ""}
        </div>
      </th>
      <Cell column="Sign-in">
        {AUTH_LABEL[repository.auth]}
        {repository.auth === "token" && <div className="muted small">as {repository.username}</div>}
        {repository.host_key_fingerprint && (
          <div className="muted small fingerprint">
            Host key <code>{repository.host_key_fingerprint}</code>
          </div>
        )}
      </Cell>
      <Cell column="Poll">{pollText(repository.poll_seconds)}</Cell>
      <td className="git-repo-cell">
        <LastFetch repository={repository} />
      </td>
      <Cell column="Signed commits">
        {repository.require_signed
          ? `Required (${repository.trusted_keys.length} trusted key${repository.trusted_keys.length === 1 ? "" : "s"})`
          : "Not required"}
      </Cell>
      {(maySync || mayAdminister) && (
        <RowActions>
          {maySync && (
            <button type="button" disabled={syncing} onClick={onSync} aria-label={`Sync ${repository.name} now`}>
              {syncing ? "Syncing…" : "Sync now"}
            </button>
          )}
          {mayAdminister && (
            <>
              <button type="button" onClick={onEdit} aria-label={`Edit ${repository.name}`}>
                Edit
              </button>
              <button type="button" onClick={onAccess} aria-label={`Webhook and keys of ${repository.name}`}>
                Webhook and keys
              </button>
              <button type="button" className="danger" onClick={onDelete} aria-label={`Delete ${repository.name}`}>
                Delete
              </button>
            </>
          )}
        </RowActions>
      )}
    </Row>
  );
}

type Open = { kind: "add" } | { kind: "edit" | "access" | "delete"; id: string } | null;

/**
 * The host's git repositories (the host is the page's, chosen here): every signed-in user
 * reads them; operators sync one now; admins add, change and delete them and manage their
 * webhook and keys.
 */
export function RepositoriesSection() {
  const host = useHost();
  const info = useHostInfo(host);
  const unavailable = info.unavailable("stacks");
  const repositories = useQuery({ ...gitRepositoriesQueryOptions(host), enabled: info.ready && !unavailable });
  const mayAdminister = useGitAdmin();
  const maySync = useGitOperator();
  const sync = useSyncRepository();
  const remove = useDeleteRepository();
  const [open, setOpen] = useState<Open>(null);
  const [report, setReport] = useState<{ name: string; report: GitSyncReport } | null>(null);
  const list = repositories.data ?? [];
  const chosen = open && open.kind !== "add" ? list.find((r) => r.id === open.id) : undefined;

  function syncNow(repository: GitRepository) {
    setReport(null);
    sync.mutate(repository.id, { onSuccess: (done) => setReport({ name: repository.name, report: done }) });
  }

  return (
    <section className="card" aria-labelledby="git-title">
      <div className="section-head">
        <h2 id="git-title">Git repositories</h2>
        <HostSwitcher page="/settings" />
      </div>
      <p className="muted">
        Stacks on {info.name} can be made of a repository&rsquo;s folder (New stack, From git): a push deploys the stacks
        it changed. {info.host === null ? "This host" : info.name} fetches its repositories itself.
      </p>
      {unavailable ? (
        <HostUnavailable reason={unavailable} />
      ) : repositories.isError ? (
        <ErrorBanner error={repositories.error} onRetry={() => void repositories.refetch()} />
      ) : repositories.data === undefined ? (
        <Loading />
      ) : repositories.data === null ? (
        <p className="muted">{info.name} does not offer stacks from git (its version is older).</p>
      ) : (
        <>
          {report && <SyncReportNotice {...report} onDone={() => setReport(null)} />}
          {sync.isError && <ErrorText error={sync.error} />}
          {list.length === 0 ? (
            <p className="muted">No repositories yet.</p>
          ) : (
            <div className="git-repos">
              <Table label="Git repositories" columns={COLUMNS} fold={FOLD} actions={maySync || mayAdminister}>
                {list.map((repository) => (
                  <RepositoryRow
                    key={repository.id}
                    repository={repository}
                    mayAdminister={mayAdminister}
                    maySync={maySync}
                    syncing={sync.isPending && sync.variables === repository.id}
                    onSync={() => syncNow(repository)}
                    onEdit={() => setOpen({ kind: "edit", id: repository.id })}
                    onAccess={() => setOpen({ kind: "access", id: repository.id })}
                    onDelete={() => setOpen({ kind: "delete", id: repository.id })}
                  />
                ))}
              </Table>
            </div>
          )}
          {mayAdminister && (
            <div className="actions">
              <button type="button" className="primary" onClick={() => setOpen({ kind: "add" })}>
                Add a repository
              </button>
            </div>
          )}
        </>
      )}
      {open?.kind === "add" && (
        <RepositoryDialog
          repository={null}
          onClose={() => setOpen(null)}
          // An SSH repository's deploy key is made now: its public half is shown at once.
          onSaved={(saved) => setOpen(saved.auth === "ssh_key" ? { kind: "access", id: saved.id } : null)}
        />
      )}
      {open?.kind === "edit" && chosen && (
        <RepositoryDialog repository={chosen} onClose={() => setOpen(null)} onSaved={() => setOpen(null)} />
      )}
      {open?.kind === "access" && chosen && <RepositoryAccessDialog repository={chosen} onClose={() => setOpen(null)} />}
      {open?.kind === "delete" && chosen && (
        <ConfirmDelete
          title={`Delete repository ${chosen.name}?`}
          confirmLabel="Delete repository"
          remove={remove}
          variables={chosen.id}
          onCancel={() => setOpen(null)}
          onDeleted={() => setOpen(null)}
        >
          <p>
            Its settings, token or deploy key, webhook secret and fetched copy are removed. Refused while stacks come
            from it: detach them first (on each stack&rsquo;s page). The stacks&rsquo; files stay either way.
          </p>
        </ConfirmDelete>
      )}
    </section>
  );
}
