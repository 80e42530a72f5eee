import type { GitPolicy, GitStackView, GitSyncOutcome, GitSyncReport } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorText } from "../../components/ErrorText";
import { formatAgo, formatDateTime } from "../../components/format";
import { AppliedNote, PendingChange } from "./ApplyChange";
import { CommitSummary } from "./CommitSummary";
import { needsAction, OUTCOME_ADVICE, OUTCOME_LABEL, OUTCOME_TONE, POLICIES, POLICY_HELP, POLICY_LABEL } from "./outcome";
import { useGitAdmin, useGitOperator } from "./permissions";
import { useApplyGitChange, useChangeGitStack, useDetachGitStack, useSyncRepository } from "./queries";
import "./git.css";

/** When and by whom a sync ran: "5 min ago, by webhook". */
function SyncWhen({ outcome }: { outcome: GitSyncOutcome }) {
  return (
    <span className="muted small">
      <time dateTime={outcome.at} title={formatDateTime(outcome.at)}>
        {formatAgo(outcome.at)}
      </time>
      {outcome.by ? `, by ${outcome.by}` : ""}
    </span>
  );
}

/**
 * The last sync, when it needs someone (failed, diverged, refused, rolled back): an alert
 * with the server's reason and what to do about it.
 */
export function SyncAlert({ outcome }: { outcome: GitSyncOutcome }) {
  return (
    <div className={`git-alert tone-${OUTCOME_TONE[outcome.outcome]}`} role="alert">
      <p>
        <strong>Last sync {OUTCOME_LABEL[outcome.outcome]}</strong>
        {outcome.commit && (
          <>
            {" "}
            (commit <code>{outcome.commit.slice(0, 12)}</code>)
          </>
        )}
        {outcome.detail ? `: ${outcome.detail}` : "."}
      </p>
      <p>{OUTCOME_ADVICE[outcome.outcome]}</p>
    </div>
  );
}

/** What "Sync now" did, for this stack. */
function SyncedNote({ report, stack }: { report: GitSyncReport; stack: string }) {
  if (report.error) {
    return (
      <p className="error" role="alert">
        The sync failed: {report.error}
      </p>
    );
  }
  const outcome = report.stacks?.[stack];
  return (
    <p className="muted" role="status">
      Fetched commit <code>{(report.commit ?? "").slice(0, 12)}</code>:{" "}
      {outcome ? `this stack ${OUTCOME_LABEL[outcome.outcome]}.` : "this stack was left alone (its policy is off)."}
    </p>
  );
}

/** Admin: the policy and whether the files may be edited here, each saved as it changes. */
function GitStackSettings({ view }: { view: GitStackView }) {
  const change = useChangeGitStack(view.stack);
  return (
    <>
      <div className="git-controls">
        <label className="field inline">
          <span>Policy</span>
          <select
            value={view.policy}
            disabled={change.isPending}
            onChange={(e) => change.mutate({ policy: e.target.value as GitPolicy })}
          >
            {POLICIES.map((policy) => (
              <option key={policy} value={policy}>
                {POLICY_LABEL[policy]}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={view.local_edits}
            disabled={change.isPending}
            onChange={(e) => change.mutate({ local_edits: e.target.checked })}
          />
          <span>Allow local edits</span>
        </label>
      </div>
      <p className="muted small">{POLICY_HELP[view.policy]}</p>
      {change.isError && <ErrorText error={change.error} />}
    </>
  );
}

/**
 * A git stack's card on its page: where its files come from, the commit it runs, how its
 * last sync went (an alert when someone must act), a pending commit to review and apply,
 * and for admins its policy, local edits and "Detach from git".
 */
export function GitStackCard({ view }: { view: GitStackView }) {
  const mayAdminister = useGitAdmin();
  const mayOperate = useGitOperator();
  const apply = useApplyGitChange(view.stack);
  const sync = useSyncRepository();
  const detach = useDetachGitStack(view.stack);
  const last = view.last_sync;
  // A diverged stack's alert is its last sync's when that said so; else the files say it.
  const divergedNote = view.diverged && last?.outcome !== "diverged";

  return (
    <section className="card git-card" aria-labelledby="git-card-title">
      <h2 id="git-card-title">From git</h2>
      <dl className="git-facts">
        <dt>Repository</dt>
        <dd>{view.repository_name}</dd>
        <dt>Folder</dt>
        <dd>{view.path ? <code>{view.path}</code> : <span className="muted">the repository&rsquo;s root</span>}</dd>
        <dt>Deployed commit</dt>
        <dd data-testid="git-deployed">
          {view.deployed ? <CommitSummary commit={view.deployed} /> : <span className="muted">none yet</span>}
        </dd>
        {!mayAdminister && (
          <>
            <dt>Policy</dt>
            <dd>
              {POLICY_LABEL[view.policy]}
              {view.local_edits ? ", local edits allowed" : ""}
            </dd>
          </>
        )}
        <dt>Last sync</dt>
        <dd data-testid="git-last-sync">
          {last ? (
            <>
              <span className={`status tone-${OUTCOME_TONE[last.outcome]}`}>{OUTCOME_LABEL[last.outcome]}</span>
              {!needsAction(last.outcome) && last.detail && <span className="muted"> ({last.detail})</span>}{" "}
              <SyncWhen outcome={last} />
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </dd>
      </dl>
      {last && needsAction(last.outcome) && <SyncAlert outcome={last} />}
      {divergedNote && (
        <div className="git-alert tone-warn" data-testid="git-edited">
          <p>
            Edited here since the deployed commit: {view.edited.join(", ")}. A new commit that changes the stack is not
            deployed over them without a confirmation.
          </p>
        </div>
      )}
      {mayAdminister && <GitStackSettings view={view} />}
      {view.pending && <PendingChange view={view} pending={view.pending} mayApply={mayOperate} apply={apply} />}
      {apply.isError && <ErrorText error={apply.error} />}
      {apply.data && !apply.isPending && <AppliedNote outcome={apply.data} />}
      <div className="actions">
        {mayOperate && (
          <button
            type="button"
            disabled={sync.isPending}
            onClick={() => sync.mutate(view.repository)}
            title={`Fetch ${view.repository_name} now; each of its stacks then follows its policy`}
          >
            {sync.isPending ? "Syncing…" : "Sync now"}
          </button>
        )}
        {mayAdminister && (
          <ConfirmButton
            label="Detach from git"
            disabled={detach.isPending}
            onConfirm={() => detach.mutate()}
            warning="The stack keeps its files and keeps running; it is no longer synced, and its files become editable here."
          >
            Detach from git
          </ConfirmButton>
        )}
      </div>
      {sync.isPending && (
        <p className="console-note" role="status">
          <span className="spinner" aria-hidden="true" /> Fetching {view.repository_name}…
        </p>
      )}
      {sync.data && !sync.isPending && <SyncedNote report={sync.data} stack={view.stack} />}
      {sync.isError && <ErrorText error={sync.error} />}
      {detach.isError && <ErrorText error={detach.error} />}
    </section>
  );
}
