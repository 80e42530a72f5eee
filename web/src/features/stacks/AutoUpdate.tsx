import { useState } from "react";
import { ErrorText } from "../../components/ErrorText";
import { useCan } from "../auth/permissions";
import { useSetAutoUpdate } from "./queries";

/**
 * Whether the stack updates itself. Where the host has update policies, it is the policy's
 * Mode, changed in the policy's form and saved with it (one control, saved one way): this
 * only says it. On an agent of an earlier version, without policies, it is a toggle for the
 * roles that may set it (saved at once: there is no form).
 */
export function AutoUpdate({ stackId, enabled, policy }: { stackId: string; enabled: boolean; policy: boolean }) {
  const mayToggle = useCan("stacks.autoUpdate");
  if (mayToggle && !policy) return <AutoUpdateToggle stackId={stackId} enabled={enabled} />;
  return (
    <div className="auto-update">
      <span data-testid="auto-update-state">
        Auto-update is {enabled ? "on" : "off"}
        {policy ? " (the update policy's Mode, below)." : "."}
      </span>
    </div>
  );
}

function AutoUpdateToggle({ stackId, enabled }: { stackId: string; enabled: boolean }) {
  const set = useSetAutoUpdate(stackId);
  // What the user asked for, shown at once and until the summary agrees (or the save fails).
  const [wanted, setWanted] = useState<boolean | null>(null);
  if (wanted !== null && !set.isPending && !set.isError && enabled === wanted) setWanted(null);
  return (
    <div className="auto-update">
      <label className="check">
        <input
          type="checkbox"
          checked={wanted ?? enabled}
          disabled={set.isPending}
          onChange={(e) => {
            const value = e.target.checked;
            setWanted(value);
            set.mutate(value, { onError: () => setWanted(null) });
          }}
        />
        <span>Auto-update</span>
      </label>
      <span className="muted small">
        Pull and recreate on its own when a newer image appears (the policy&rsquo;s Auto mode).
      </span>
      {set.isError && <ErrorText error={set.error} />}
    </div>
  );
}
