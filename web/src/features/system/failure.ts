import type { LastUpdate } from "../../api/types";
import { sameVersion, type UpdateFailure } from "./versionWatch";

/**
 * The failure of the update to `target` that `last` records, when it is a new record (not
 * `before`, the one known when the update started); null otherwise.
 */
export function failureSince(last: LastUpdate | null, before: LastUpdate | null, target: string): UpdateFailure | null {
  if (!last || last.status === "succeeded" || !sameVersion(last.to_version, target)) return null;
  if (before && before.finished_at === last.finished_at && before.to_version === last.to_version) return null;
  return {
    message:
      last.status === "rolled_back"
        ? `The update to ${last.to_version} was rolled back (${last.why || "not healthy"}): it runs ${last.from_version} again.`
        : `The update to ${last.to_version} failed${last.why ? ` (${last.why})` : ""}: it still runs ${last.from_version}.`,
    output: last.output ?? undefined,
  };
}
