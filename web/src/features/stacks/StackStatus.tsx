import type { StackState } from "../../api/types";
import { STATE_LABEL, STATE_MEANING, STATE_TONES } from "./state";

/** The stack's state word (with what it means, or compose's error, as a tooltip). */
export function StateBadge({ state, error }: { state: StackState; error?: string | null }) {
  return (
    <span
      className={`state tone-${STATE_TONES[state]}`}
      title={state === "invalid" && error ? error : STATE_MEANING[state]}
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
