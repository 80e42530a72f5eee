import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api/errors";
import type { Agent, LastUpdate, UpdateStarted } from "../../api/types";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { useCan } from "../auth/permissions";
import { failureSince } from "../system/failure";
import { readUpdateStatus, updateStatusQueryOptions, useAgentUpdated, useStartUpdate } from "../system/queries";
import { useVersionWatch, WATCH_TIMEOUT_MS, type VersionWatchOptions } from "../system/versionWatch";

/** An agent is read every 2 seconds while it updates (through the central's proxy). */
export const AGENT_WATCH_INTERVAL_MS = 2_000;

/** How agent `id` is watched after its update started: its own status, until it runs `to_version`. */
export function agentWatch(id: number, started: UpdateStarted, before: LastUpdate | null): VersionWatchOptions {
  return {
    target: started.to_version,
    intervalMs: AGENT_WATCH_INTERVAL_MS,
    read: async (signal) => {
      const status = await readUpdateStatus(id, { signal });
      return { version: status.current_version, failure: failureSince(status.last_update, before, started.to_version) };
    },
  };
}

/** The agent's update once started: "Updating to X…" until the agent answers X (or it failed, or 3 minutes passed). */
function AgentUpdateProgress({ agent, watch }: { agent: Agent; watch: VersionWatchOptions }) {
  const state = useVersionWatch(watch);
  const updated = useAgentUpdated();
  const reported = useRef(false);
  const arrived = state?.phase === "arrived";
  useEffect(() => {
    if (!arrived || reported.current) return;
    reported.current = true;
    void updated(agent.id);
  }, [arrived, agent.id, updated]);

  if (!state || state.phase === "waiting") {
    return (
      <p className="small update-progress" role="status">
        <span className="spinner" aria-hidden="true" /> Updating to {watch.target}…
      </p>
    );
  }
  if (state.phase === "arrived") {
    return (
      <p className="small success" role="status">
        Updated to {state.version}.
      </p>
    );
  }
  if (state.phase === "failed") {
    return (
      <div className="small" role="alert">
        <p className="error">{state.failure.message}</p>
        {state.failure.output && <pre className="console-output update-output">{state.failure.output}</pre>}
      </div>
    );
  }
  return (
    <p className="small error" role="alert">
      {agent.name} did not answer with version {watch.target} within {Math.round(WATCH_TIMEOUT_MS / 60_000)} minutes
      {state.seen ? ` (it still runs ${state.seen})` : ""}: test it, or look at it on its host.
    </p>
  );
}

/**
 * Beside an enabled agent's version: the latest release its own check found ("—" when it
 * cannot be read), and for admins, when there is a newer one, its update (through the
 * central's proxy), followed until the agent answers the new version.
 */
export function AgentRelease({ agent }: { agent: Agent }) {
  const status = useQuery({ ...updateStatusQueryOptions(agent.id), enabled: agent.enabled, retry: false });
  const start = useStartUpdate(agent.id);
  const mayUpdate = useCan("system.update");
  const [confirming, setConfirming] = useState(false);
  const [watch, setWatch] = useState<VersionWatchOptions | null>(null);
  if (!agent.enabled) return null;
  const data = status.data;
  const latest = data?.latest_version ?? null;

  let release;
  if (status.isPending) release = <span className="muted">…</span>;
  else if (!data || !latest) {
    const why = status.isError ? errorMessage(status.error) : (data?.reason ?? data?.check_error ?? undefined);
    release = (
      <span className="muted" title={why}>
        —
      </span>
    );
  } else release = latest;

  return (
    <div className="agent-update small">
      <span className="agent-latest">latest {release}</span>
      {data?.update_available && latest && !watch && (
        <>
          <span className="pill pill-update">Update available</span>
          {mayUpdate && data.update_supported && (
            <button
              type="button"
              aria-label={`Update ${agent.name} to ${latest}`}
              onClick={() => {
                start.reset();
                setConfirming(true);
              }}
            >
              Update
            </button>
          )}
        </>
      )}
      {watch && <AgentUpdateProgress agent={agent} watch={watch} />}
      {start.isError && <ErrorText error={start.error} />}
      {confirming && latest && (
        <ConfirmDialog
          title={`Update ${agent.name} to ${latest}?`}
          confirmLabel="Update now"
          busy={start.isPending}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            const before = data?.last_update ?? null;
            start.mutate(undefined, {
              onSuccess: (started) => setWatch(agentWatch(agent.id, started, before)),
              onSettled: () => setConfirming(false),
            });
          }}
        >
          <p>
            The agent on {agent.name} pulls version {latest}, then restarts on it: it cannot be reached for a few seconds.
            Its stacks keep running.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
