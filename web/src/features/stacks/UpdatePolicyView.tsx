import type { UpdatePolicy } from "../../api/types";
import { formatSeconds, MODE_LABEL, TRACK_LABEL } from "./policy";

/** An update policy, read only (for those who may not change it). */
export function UpdatePolicyView({ policy, label }: { policy: UpdatePolicy; label: string }) {
  return (
    <dl className="facts policy-view" aria-label={label}>
      <dt>Mode</dt>
      <dd>{MODE_LABEL[policy.mode]}</dd>
      <dt>What counts as an update</dt>
      <dd>
        {TRACK_LABEL[policy.track]}
        {policy.track !== "digest" && (policy.prereleases ? ", pre-releases included" : ", no pre-releases")}
      </dd>
      <dt>Health gate</dt>
      <dd>
        Healthy within {formatSeconds(policy.health_timeout)}; without a healthcheck, running{" "}
        {formatSeconds(policy.settle)} without a restart
      </dd>
      <dt>Cooldown</dt>
      <dd>{policy.cooldown_hours ? `${policy.cooldown_hours} h after a new image appears` : "None"}</dd>
      <dt>Maintenance window</dt>
      <dd>
        {policy.window ? (
          <>
            <code>{policy.window}</code> for {formatSeconds(policy.window_minutes * 60)} ({policy.timezone})
          </>
        ) : (
          "Any time"
        )}
      </dd>
    </dl>
  );
}
