import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { GitCommit, GitStackView, GitSyncOutcome } from "../../api/types";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Loading } from "../../components/Loading";
import { useHost } from "../hosts/host";
import { CommitSummary } from "./CommitSummary";
import { PreviewView } from "./DiffView";
import { OUTCOME_LABEL } from "./outcome";
import { gitPreviewQueryOptions, type useApplyGitChange } from "./queries";

/** What an apply ended in, in a sentence (the card's last sync says it at length). */
export function AppliedNote({ outcome }: { outcome: GitSyncOutcome }) {
  if (outcome.outcome === "deployed") {
    return (
      <p className="success" role="status">
        Commit {(outcome.commit ?? "").slice(0, 12)} deployed.
      </p>
    );
  }
  return (
    <p className="error" role="status">
      The apply ended {OUTCOME_LABEL[outcome.outcome]}
      {outcome.detail ? `: ${outcome.detail}` : "."}
    </p>
  );
}

/**
 * The question asked before an apply overwrites files edited here: which files, and that
 * copies of them are kept aside first.
 */
export function OverwriteConfirm({
  commit,
  files,
  busy,
  onConfirm,
  onCancel,
}: {
  commit: GitCommit;
  files: readonly string[];
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <ConfirmDialog
      title={`Overwrite the files edited here?`}
      confirmLabel="Overwrite and apply"
      danger
      busy={busy}
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p>
        Applying commit <code>{commit.short}</code> overwrites these files, edited here since the deployed commit:
      </p>
      <ul aria-label="Files that will be overwritten">
        {files.map((file) => (
          <li key={file}>
            <code>{file}</code>
          </li>
        ))}
      </ul>
      <p className="muted">
        Copies of them are kept in the stacks folder&rsquo;s <code>.trash</code> first.
      </p>
    </ConfirmDialog>
  );
}

/**
 * A pending commit of a git stack: "Review" shows what applying it would change (the
 * preview's diff), "Apply" deploys it through the health gate (operators and admins).
 * When the stack's files were edited here, the apply first asks, naming the files it
 * overwrites, and only then sends `overwrite`.
 */
export function PendingChange({
  view,
  pending,
  mayApply,
  apply,
}: {
  view: GitStackView;
  pending: GitCommit;
  mayApply: boolean;
  /** The card's (its outcome outlives this pending commit). */
  apply: ReturnType<typeof useApplyGitChange>;
}) {
  const host = useHost();
  const [reviewing, setReviewing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const preview = useQuery({ ...gitPreviewQueryOptions(host, view.stack, pending.sha), enabled: reviewing });
  // The files the apply overwrites: the preview's word when read, else the view's.
  const overwrites = preview.data?.overwrites.length ? preview.data.overwrites : view.edited;
  const diverged = view.diverged || overwrites.length > 0;

  function applyNow(overwrite: boolean) {
    apply.mutate({ commit: pending.sha, overwrite }, { onSettled: () => setConfirming(false) });
  }

  return (
    <div className="git-pending" role="group" aria-label="Pending commit">
      <p>
        <strong>Pending:</strong> <CommitSummary commit={pending} />
      </p>
      {mayApply && (
        <div className="actions">
          <button type="button" aria-expanded={reviewing} onClick={() => setReviewing((on) => !on)}>
            {reviewing ? "Hide the changes" : "Review"}
          </button>
          <button
            type="button"
            className="primary"
            disabled={apply.isPending}
            onClick={() => (diverged ? setConfirming(true) : applyNow(false))}
          >
            {apply.isPending ? "Applying…" : "Apply"}
          </button>
        </div>
      )}
      {apply.isPending && (
        <p className="console-note" role="status">
          <span className="spinner" aria-hidden="true" /> Deploying commit {pending.short} through the health gate…
        </p>
      )}
      {reviewing &&
        (preview.isError ? (
          <ErrorText error={preview.error} />
        ) : !preview.data ? (
          <Loading label="Reading the changes…" />
        ) : (
          <PreviewView preview={preview.data} />
        ))}
      {confirming && (
        <OverwriteConfirm
          commit={pending}
          files={overwrites}
          busy={apply.isPending}
          onConfirm={() => applyNow(true)}
          onCancel={() => setConfirming(false)}
        />
      )}
    </div>
  );
}
