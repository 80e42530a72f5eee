import type { ImageUpdate, StackUpdate, UpdateJump } from "../../api/types";
import type { Tone } from "../../components/tone";

const JUMP_RANK: Record<UpdateJump, number> = { patch: 1, minor: 2, major: 3 };
const JUMP_TONE: Record<UpdateJump, Tone> = { patch: "good", minor: "info", major: "warn" };

/** The biggest version step among `images`, or null when none says. */
export function biggestJump(images: readonly ImageUpdate[]): UpdateJump | null {
  let biggest: UpdateJump | null = null;
  for (const { jump } of images) {
    if (jump && (biggest === null || JUMP_RANK[jump] > JUMP_RANK[biggest])) biggest = jump;
  }
  return biggest;
}

/** The stack still has the update its last try rolled back (or failed to roll back). */
export function lastTryRolledBack(update: StackUpdate): boolean {
  const outcome = update.last_update?.outcome;
  return update.has_update && (outcome === "rolled_back" || outcome === "rollback_failed");
}

/** "patch", "minor" or "major": how big a version step an update is. */
export function JumpBadge({ jump }: { jump: UpdateJump }) {
  return (
    <span className={`pill jump tone-${JUMP_TONE[jump]}`} title={`A ${jump} version step`} data-testid="jump">
      {jump}
    </span>
  );
}

/** Shown when an image of the stack has a newer digest or version in its registry. */
export function UpdatePill({ rolledBack = false }: { rolledBack?: boolean }) {
  if (rolledBack) {
    return (
      <span
        className="pill tone-warn pill-rolled-back"
        title="A newer image is available, but the last update to it failed its health gate and was rolled back"
      >
        Update: last try rolled back
      </span>
    );
  }
  return (
    <span className="pill pill-update" title="A newer image is available in the registry">
      Update
    </span>
  );
}

/** A stack's update pill (none without an update), with its biggest version step. */
export function StackUpdatePill({ update }: { update: StackUpdate | undefined }) {
  if (!update?.has_update) return null;
  const jump = biggestJump(update.images);
  return (
    <>
      <UpdatePill rolledBack={lastTryRolledBack(update)} />
      {jump && <JumpBadge jump={jump} />}
    </>
  );
}
