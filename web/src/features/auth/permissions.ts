import type { Role } from "../../api/types";
import { useCurrentUser } from "./queries";

/**
 * What the UI may offer. The server enforces the same rules; the UI only hides what
 * would be refused (a 403), so each capability names the least role that has it.
 */
export type Capability =
  /** Start / stop / restart / update / down a stack (POST /api/stacks/{id}/actions/{action}). */
  | "stacks.run"
  /** "Check now" (POST /api/stacks/updates/check). */
  | "stacks.checkUpdates"
  /** The per-stack auto-update toggle (PUT /api/stacks/{id}/auto-update). */
  | "stacks.autoUpdate"
  /** Read a stack's logs (they may hold secrets): live, and as a file. */
  | "stacks.logs"
  /** A shell in a running container (root on it, as a rule). */
  | "stacks.shell"
  /** Back a stack up, list and check archives. */
  | "backups.create"
  /** Download (they hold .secrets), upload, delete and restore archives. */
  | "backups.administer"
  /** Backup destinations (SFTP, S3, NFS): their settings and secrets, tests, the archives on them, push and pull. */
  | "destinations.manage"
  /** Backup schedules: timetables, retention, "run now", their history. */
  | "schedules.manage"
  /** Agents: add, edit (their token), test, enable or disable, delete (everyone sees the list). */
  | "agents.manage"
  /** Edit compose and .env, read and edit .secrets. */
  | "stacks.editFiles"
  /** Create a stack. */
  | "stacks.create"
  /** Delete a stack (and its folder). */
  | "stacks.delete"
  /** The Files page: the whole stacks folder. */
  | "files"
  /** Update Stackyard itself, or an agent, to the latest release (POST /api/system/update). */
  | "system.update"
  /** Settings: users, registry credentials and the audit log. */
  | "admin.users"
  | "admin.registries"
  | "admin.audit";

/** Roles from most to least powerful. */
export const ROLES: readonly Role[] = ["admin", "operator", "viewer"];

/** One line per role, for choosing one. */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  admin: "Everything: creates and deletes stacks, edits compose files, .env and secrets, files, users.",
  operator:
    "Runs stack actions, reads logs, checks for updates and sets auto-update; cannot edit or create stacks.",
  viewer: "Reads only: stacks, their status, resource use, updates and run output (no logs).",
};

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

const LEAST_ROLE: Record<Capability, Role> = {
  "stacks.run": "operator",
  "stacks.checkUpdates": "operator",
  "stacks.autoUpdate": "operator",
  "stacks.logs": "operator",
  "stacks.shell": "admin",
  "backups.create": "operator",
  "backups.administer": "admin",
  "destinations.manage": "admin",
  "schedules.manage": "admin",
  "agents.manage": "admin",
  "stacks.editFiles": "admin",
  "stacks.create": "admin",
  "stacks.delete": "admin",
  files: "admin",
  "system.update": "admin",
  "admin.users": "admin",
  "admin.registries": "admin",
  "admin.audit": "admin",
};

/** Whether `role` has `capability`; nobody (no role yet, or one this UI does not know) has any. */
export function can(role: Role | null | undefined, capability: Capability): boolean {
  if (!role || !(role in RANK)) return false;
  return RANK[role] >= RANK[LEAST_ROLE[capability]];
}

/** Whether the signed-in user has `capability` (false while who that is is not known). */
export function useCan(capability: Capability): boolean {
  return can(useCurrentUser()?.role, capability);
}
