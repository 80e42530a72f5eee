import type { StackUpdate } from "../../api/types";
import { AutoUpdate } from "./AutoUpdate";
import { CheckUpdates } from "./CheckUpdates";
import { ImageUpdatesTable } from "./ImageUpdatesTable";
import { StackUpdatePolicy } from "./StackUpdatePolicy";
import { LastAutoUpdate, LastUpdate } from "./UpdateOutcome";

/**
 * A stack's updates: auto-update and "Check now", how the last update went, each image
 * (and what is newer), and the update policy in force.
 */
export function StackUpdatesCard({
  stackId,
  update,
  lastCheck,
}: {
  stackId: string;
  update: StackUpdate | undefined;
  lastCheck: string | null | undefined;
}) {
  return (
    <section className="card" aria-labelledby="updates-title">
      <h2 id="updates-title">Updates</h2>
      <div className="card-tools">
        <AutoUpdate stackId={stackId} enabled={update?.auto_update ?? false} policy={Boolean(update?.policy)} />
        <CheckUpdates lastCheck={lastCheck} />
      </div>
      <LastUpdate outcome={update?.last_update ?? null} />
      <LastAutoUpdate last={update?.last_auto_update ?? null} lastUpdate={update?.last_update ?? null} />
      <ImageUpdatesTable images={update?.images ?? []} />
      {/* An agent of an earlier version has no policies. */}
      {update?.policy && <StackUpdatePolicy stackId={stackId} update={update} />}
    </section>
  );
}
