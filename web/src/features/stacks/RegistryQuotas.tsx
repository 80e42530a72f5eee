import type { RegistryQuota } from "../../api/types";
import { formatDateTime } from "../../components/format";
import { formatSeconds } from "./policy";

/**
 * The pull quota each registry announced with its last answer: how much is left, and
 * whether the background check waits for its window to pass (the quota is low).
 */
export function RegistryQuotas({ quotas }: { quotas: readonly RegistryQuota[] }) {
  if (quotas.length === 0) return null;
  return (
    <div className="registry-quotas small">
      <span className="muted" id="registry-quotas-title">
        Registry pull quotas:
      </span>
      <ul className="plain" aria-labelledby="registry-quotas-title">
        {quotas.map((quota) => (
          <li
            key={quota.registry}
            className={quota.waiting ? "warn-text" : undefined}
            title={quota.seen_at ? `As the registry said at ${formatDateTime(quota.seen_at)}` : undefined}
          >
            <code>{quota.registry}</code>: {quota.remaining}/{quota.limit} left
            {quota.window_seconds ? ` per ${formatSeconds(quota.window_seconds)}` : ""}
            {quota.waiting && (
              <>
                {" "}
                <strong>· waiting for the quota</strong>
                <span className="muted"> (the background check leaves it alone until its window passes)</span>
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
