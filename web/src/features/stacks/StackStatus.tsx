import type { StackState } from "../../api/types";
import type { Tone } from "../../components/tone";

export const STATE_LABEL: Record<StackState, string> = {
  running: "Running",
  partial: "Partially running",
  stopped: "Stopped",
  invalid: "Invalid",
};

/** The colour of each state, here and in the dashboard's breakdown. */
export const STATE_TONES: Record<StackState, Tone> = {
  running: "good",
  partial: "warn",
  stopped: "off",
  invalid: "bad",
};

/** "Running", "Partially running", "Stopped" or "Invalid" (with compose's error as a tooltip). */
export function StateBadge({ state, error }: { state: StackState; error?: string | null }) {
  return (
    <span
      className={`state tone-${STATE_TONES[state]}`}
      title={state === "invalid" && error ? error : undefined}
      data-testid="stack-state"
    >
      {STATE_LABEL[state]}
    </span>
  );
}

/** The action in progress on a stack (from the listing's `busy`). */
export function BusyIndicator({ action }: { action: string }) {
  return (
    <span className="busy" role="status">
      <span className="spinner" aria-hidden="true" />
      {action} in progress…
    </span>
  );
}
