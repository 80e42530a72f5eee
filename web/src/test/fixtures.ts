import type { Health, SystemInfo, User } from "../api/types";
import type { Routes } from "./fakeFetch";
import { json } from "./fakeFetch";
import { notSupported } from "./systemFixtures";

/** What the server lets an operator do (`GET /api/auth/me` lists it; `stackyard.auth.permissions`). */
const OPERATOR_PERMISSIONS: User["permissions"] = [
  "stacks.run",
  "stacks.checkUpdates",
  "stacks.autoUpdate",
  "stacks.logs",
  "backups.create",
];
/** An admin may do everything. */
const ADMIN_PERMISSIONS: User["permissions"] = [
  ...OPERATOR_PERMISSIONS,
  "stacks.shell",
  "backups.administer",
  "destinations.manage",
  "schedules.manage",
  "agents.manage",
  "stacks.editFiles",
  "stacks.create",
  "stacks.delete",
  "containers.manage",
  "files",
  "notifications.manage",
  "system.update",
  "admin.users",
  "admin.registries",
  "admin.audit",
];

export const adminUser: User = {
  id: 1,
  username: "alice",
  role: "admin",
  permissions: ADMIN_PERMISSIONS,
  password_change_due: false,
};
export const operatorUser: User = {
  id: 2,
  username: "bob",
  role: "operator",
  permissions: OPERATOR_PERMISSIONS,
  password_change_due: false,
};
export const viewerUser: User = { id: 3, username: "carol", role: "viewer", permissions: [], password_change_due: false };
/** A user who is not an admin (the files tests use it). */
export const plainUser: User = operatorUser;

export const health: Health = { status: "ok", version: "0.1.0", mode: "central" };

export const systemInfo: SystemInfo = {
  version: "0.1.0",
  docker: { reachable: true, version: "27.3.1", api_version: "1.47", error: null },
  compose: { version: "2.29.7", json_progress: true },
  stacks_dir: "/opt/stacks",
};

export const unauthorized = () => json({ detail: "Not authenticated" }, { status: 401 });

/** The routes every signed-in page needs. */
export function signedInAs(user: User): Routes {
  return {
    "GET /api/auth/me": user,
    "GET /api/health": health,
    "GET /api/system/info": systemInfo,
    "GET /api/system/update": notSupported(),
  };
}
