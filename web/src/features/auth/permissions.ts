import type { Role, User } from "../../api/types";
import { useCurrentUser } from "./queries";

/**
 * What a user may do, by the server's names (`stackyard.auth.permissions`). The server
 * decides: `GET /api/auth/me` lists the signed-in user's permissions, and the UI only hides
 * what would be refused (a 403).
 */
export type Permission = User["permissions"][number];

/** Roles from most to least powerful. */
export const ROLES: readonly Role[] = ["admin", "operator", "viewer"];

/** One line per role, for choosing one. */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  admin: "Everything: creates and deletes stacks, edits compose files, .env and secrets, files, users.",
  operator:
    "Runs stack actions, reads logs, checks for updates and sets auto-update; cannot edit or create stacks.",
  viewer: "Reads only: stacks, their status, resource use, updates and run output (no logs).",
};

/** Whether `user` has `permission`; nobody (not known yet) has any. */
export function can(user: User | undefined, permission: Permission): boolean {
  return user?.permissions.includes(permission) ?? false;
}

/** Whether the signed-in user has `permission` (false while who that is is not known). */
export function useCan(permission: Permission): boolean {
  return can(useCurrentUser(), permission);
}
