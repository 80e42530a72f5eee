import type { Health, SystemInfo, User } from "../api/types";
import type { Routes } from "./fakeFetch";
import { json } from "./fakeFetch";
import { notSupported } from "./systemFixtures";

export const adminUser: User = { id: 1, username: "alice", role: "admin" };
export const operatorUser: User = { id: 2, username: "bob", role: "operator" };
export const viewerUser: User = { id: 3, username: "carol", role: "viewer" };
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
