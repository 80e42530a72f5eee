import type { Health, IdentityProviderSettings, SystemInfo, User } from "../api/types";
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
  "disk.stackImages",
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
  "disk.manage",
  "files",
  "notifications.manage",
  "system.update",
  "admin.users",
  "admin.registries",
  "admin.audit",
];

/** What every signed-in user has beside their name and role: a password, no two-factor yet. */
const SIGN_IN = {
  password_change_due: false,
  two_factor: false,
  two_factor_due: false,
  recovery_codes_left: 0,
  has_password: true,
};

export const adminUser: User = { id: 1, username: "alice", role: "admin", permissions: ADMIN_PERMISSIONS, ...SIGN_IN };
export const operatorUser: User = {
  id: 2,
  username: "bob",
  role: "operator",
  permissions: OPERATOR_PERMISSIONS,
  ...SIGN_IN,
};
export const viewerUser: User = { id: 3, username: "carol", role: "viewer", permissions: [], ...SIGN_IN };
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

/** Sign-in through an identity provider, as an admin sees it. */
export const identityProvider: IdentityProviderSettings = {
  config: {
    enabled: true,
    name: "Keycloak",
    issuer: "https://sso.example.com/realms/homelab",
    client_id: "stackyard",
    scopes: ["openid", "profile", "email"],
    groups_claim: "groups",
    username_claim: "preferred_username",
    roles: [{ value: "yard-admins", role: "admin" }],
    default_role: null,
    link_accounts: false,
    password_sign_in: "everyone",
  },
  client_secret_set: true,
  from_settings_variables: false,
  callback_url: "https://yard.example.com/api/auth/oidc/callback",
  post_logout_url: "https://yard.example.com/login",
};
