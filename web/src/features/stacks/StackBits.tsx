import { errorMessage } from "../../api/errors";
import type { Run, Stack, StackAction, StackState } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorText } from "../../components/ErrorText";
import { formatDateTime } from "../../components/format";
import { useCan } from "../auth/permissions";
import { portInfos } from "./ports";
import { useCheckUpdates, useStackAction } from "./queries";

const STATE_LABEL: Record<StackState, string> = {
  running: "Running",
  partial: "Partially running",
  stopped: "Stopped",
  invalid: "Invalid",
};

/** "Running", "Partially running", "Stopped" or "Invalid" (with compose's error as a tooltip). */
export function StateBadge({ state, error }: { state: StackState; error?: string | null }) {
  return (
    <span
      className={`state state-${state}`}
      title={state === "invalid" && error ? error : undefined}
      data-testid="stack-state"
    >
      {STATE_LABEL[state]}
    </span>
  );
}

/** Shown when an image of the stack has a newer digest in its registry. */
export function UpdatePill() {
  return (
    <span className="pill pill-update" title="A newer image is available in the registry">
      Update
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
        <ConfirmButton label="Down" disabled={disabled} onConfirm={() => run("down")}>
          Down
        </ConfirmButton>
      </div>
      {mutation.isError && <ErrorText error={mutation.error} />}
    </div>
  );
}

/** "Check now" (asks the registries; for roles that may) and when the last check was. */
export function CheckUpdates({ lastCheck }: { lastCheck: string | null | undefined }) {
  const check = useCheckUpdates();
  const mayCheck = useCan("stacks.checkUpdates");
  return (
    <div className="check-updates">
      {mayCheck && (
        <button type="button" disabled={check.isPending} onClick={() => check.mutate()}>
          {check.isPending ? "Checking…" : "Check now"}
        </button>
      )}
      <span className="muted" data-testid="last-check">
        {lastCheck ? (
          <>
            Last checked <time dateTime={lastCheck}>{formatDateTime(lastCheck)}</time>
          </>
        ) : (
          "Images not checked yet"
        )}
      </span>
      {check.isError && (
        <span className="error" role="alert">
          {errorMessage(check.error)}
        </span>
      )}
    </div>
  );
}

/**
 * A container's ports; a published TCP port is a link to this page's host name at the
 * host port (https for 443 and 8443), opening in a new tab.
 */
export function PortList({ ports }: { ports: string[] }) {
  if (ports.length === 0) return <span className="muted">—</span>;
  const hostname = typeof window !== "undefined" ? window.location.hostname : "";
  return (
    <ul className="plain ports">
      {portInfos(ports, hostname).map((port) => (
        <li key={port.text}>
          {port.url ? (
            <a href={port.url} target="_blank" rel="noopener noreferrer" title={`Open ${port.url} in a new tab`}>
              <code>{port.text}</code>
            </a>
          ) : (
            <code>{port.text}</code>
          )}
        </li>
      ))}
    </ul>
  );
}
