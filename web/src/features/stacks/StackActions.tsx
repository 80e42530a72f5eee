import type { Run, Stack, StackAction } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorText } from "../../components/ErrorText";
import { useCan } from "../auth/permissions";
import { useStackAction } from "./queries";

const BUTTONS: readonly { action: StackAction; label: string }[] = [
  { action: "start", label: "Start" },
  { action: "stop", label: "Stop" },
  { action: "restart", label: "Restart" },
  { action: "update", label: "Update" },
];

/**
 * Start / Stop / Restart / Update, and Down (asks first). `onStarted` receives the new run,
 * e.g. to open its deploy console. Nothing for roles that cannot run actions.
 */
export function StackActions(props: {
  stack: Pick<Stack, "id" | "state" | "busy">;
  hasUpdate?: boolean;
  onStarted?: (run: Run) => void;
}) {
  return useCan("stacks.run") ? <StackActionButtons {...props} /> : null;
}

function StackActionButtons({
  stack,
  hasUpdate = false,
  onStarted,
}: {
  stack: Pick<Stack, "id" | "state" | "busy">;
  hasUpdate?: boolean;
  onStarted?: (run: Run) => void;
}) {
  const mutation = useStackAction();
  const invalid = stack.state === "invalid";
  const disabled = Boolean(stack.busy) || mutation.isPending || invalid;
  const stopped = stack.state === "stopped";

  function run(action: StackAction) {
    mutation.mutate({ id: stack.id, action }, { onSuccess: (started) => onStarted?.(started) });
  }

  return (
    <div className="stack-actions">
      <div className="actions" role="group" aria-label={`Actions for ${stack.id}`}>
        {BUTTONS.map(({ action, label }) => (
          <button
            key={action}
            type="button"
            className={action === "update" && hasUpdate ? "primary" : undefined}
            disabled={disabled || (stopped && (action === "stop" || action === "restart"))}
            title={action === "update" ? "Pull the latest images and recreate the containers" : undefined}
            onClick={() => run(action)}
          >
            {label}
          </button>
        ))}
        <ConfirmButton
          label="Down"
          disabled={disabled}
          onConfirm={() => run("down")}
          warning="Removes the stack's containers and its networks; its volumes and files stay."
        >
          Down
        </ConfirmButton>
      </div>
      {mutation.isError && <ErrorText error={mutation.error} />}
    </div>
  );
}
