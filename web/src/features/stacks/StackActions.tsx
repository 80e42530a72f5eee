import { useQuery } from "@tanstack/react-query";
import type { Run, Stack, StackAction, UpdateOutcome } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorText } from "../../components/ErrorText";
import { formatAgo, formatDateTime } from "../../components/format";
import { useCan } from "../auth/permissions";
import { useHost } from "../hosts/host";
import { stackUpdatesQueryOptions, useStackAction } from "./queries";
import { lastTryRolledBack } from "./UpdatePill";

/**
 * The stack's last update, when it was rolled back and the update it tried is still the one
 * on offer. Read from the update summary the page already holds (`hasUpdate` came from it).
 */
function useRolledBack(stackId: string, hasUpdate: boolean): UpdateOutcome | null {
  const host = useHost();
  const updates = useQuery({ ...stackUpdatesQueryOptions(host), enabled: hasUpdate });
  const update = updates.data?.stacks.find((u) => u.stack === stackId);
  return hasUpdate && update && lastTryRolledBack(update) ? update.last_update : null;
}

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
  // An update whose last try was rolled back is no call to action: said, with when.
  const rolledBack = useRolledBack(stack.id, hasUpdate);

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
            className={action === "update" && hasUpdate && !rolledBack ? "primary" : undefined}
            disabled={disabled || (stopped && (action === "stop" || action === "restart"))}
            title={
              action !== "update"
                ? undefined
                : rolledBack
                  ? `The last update (${formatDateTime(rolledBack.at)}) failed its health gate and was rolled back${rolledBack.detail ? `: ${rolledBack.detail.replace(/^rolled back:\s*/i, "")}` : ""}. Update tries it again.`
                  : "Pull the latest images and recreate the containers"
            }
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
      {rolledBack && (
        <p className="muted small" data-testid="rolled-back-note">
          Last update rolled back{" "}
          <time dateTime={rolledBack.at} title={formatDateTime(rolledBack.at)}>
            {formatAgo(rolledBack.at)}
          </time>
          {rolledBack.outcome === "rollback_failed" && ", and the rollback failed too"}.
        </p>
      )}
      {mutation.isError && <ErrorText error={mutation.error} />}
    </div>
  );
}
