import { useCan } from "../auth/permissions";
import { useCurrentUser } from "../auth/queries";

/**
 * Repositories, new git stacks, adoption, a stack's policy and local edits, detaching: the
 * server lets admins only (no permission of its own, as a host's default update policy).
 */
export function useGitAdmin(): boolean {
  return useCurrentUser()?.role === "admin";
}

/** "Sync now", reviewing and applying a pending change: operators too (as running a stack's actions). */
export function useGitOperator(): boolean {
  return useCan("stacks.run");
}
