import type { GitOutcome, GitPolicy } from "../../api/types";
import type { Tone } from "../../components/tone";

/** Each sync outcome in a few words. */
export const OUTCOME_LABEL: Record<GitOutcome, string> = {
  deployed: "deployed",
  unchanged: "unchanged",
  pending: "waits for review",
  diverged: "diverged: files edited here",
  refused: "refused: not signed by a trusted key",
  failed: "failed",
  rolled_back: "rolled back",
};

export const OUTCOME_TONE: Record<GitOutcome, Tone> = {
  deployed: "good",
  unchanged: "off",
  pending: "info",
  diverged: "warn",
  refused: "bad",
  failed: "bad",
  rolled_back: "warn",
};

/**
 * What a person can do about an outcome that needs one (null: nothing to do). Shown with
 * the server's detail, which says why.
 */
export const OUTCOME_ADVICE: Record<GitOutcome, string | null> = {
  deployed: null,
  unchanged: null,
  pending: null,
  diverged:
    "The stack's files were edited here since the deployed commit, so the new one was not deployed. Review the change: applying it overwrites the edited files (copies are kept in the stacks folder's .trash), or detach the stack from git to keep them.",
  refused:
    "The commit is not signed by a key the repository trusts. Sign it with a trusted key and push, or add its key to the repository's trusted keys in Settings, then sync again.",
  failed: "Fix what the detail names (the repository's address, its credentials, the compose file), then sync again.",
  rolled_back:
    "The new commit failed its health gate: the previous commit's files run again. Fix it in git and push; this commit is not tried again on its own (Apply tries it again).",
};

/** Whether the outcome asks for someone's attention (shown as an alert). */
export function needsAction(outcome: GitOutcome): boolean {
  return OUTCOME_ADVICE[outcome] !== null;
}

/** Each policy, as the select offers it, and what it does in one line. */
export const POLICY_LABEL: Record<GitPolicy, string> = {
  auto: "Auto",
  notify: "Notify",
  off: "Off",
};

export const POLICY_HELP: Record<GitPolicy, string> = {
  auto: "A commit that changes the stack's folder is deployed on its own, through the health gate (rolled back if it fails).",
  notify: "A commit that changes the stack's folder is fetched and told; it is deployed when someone reviews and applies it.",
  off: "Syncs leave the stack alone; it keeps the commit it runs.",
};

export const POLICIES: readonly GitPolicy[] = ["auto", "notify", "off"];
