import { describe, expect, it } from "vitest";
import type { Role } from "../../api/types";
import { navItemsFor } from "../layout/navigation";
import { can, ROLE_DESCRIPTIONS, ROLES, type Capability } from "./permissions";

const CAPABILITIES: Record<Capability, Role[]> = {
  "stacks.run": ["admin", "operator"],
  "stacks.checkUpdates": ["admin", "operator"],
  "stacks.autoUpdate": ["admin", "operator"],
  "stacks.logs": ["admin", "operator"],
  "stacks.shell": ["admin"],
  "backups.create": ["admin", "operator"],
  "backups.administer": ["admin"],
  "destinations.manage": ["admin"],
  "schedules.manage": ["admin"],
  "agents.manage": ["admin"],
  "stacks.editFiles": ["admin"],
  "stacks.create": ["admin"],
  "stacks.delete": ["admin"],
  files: ["admin"],
  "system.update": ["admin"],
  "admin.users": ["admin"],
  "admin.registries": ["admin"],
  "admin.audit": ["admin"],
};

describe("can", () => {
  it.each(Object.entries(CAPABILITIES) as [Capability, Role[]][])("gives %s to %j only", (capability, roles) => {
    expect(ROLES.filter((role) => can(role, capability))).toEqual(roles);
  });

  it("gives nothing to nobody, or to a role it does not know", () => {
    expect(can(undefined, "stacks.run")).toBe(false);
    expect(can(null, "stacks.run")).toBe(false);
    expect(can("user" as Role, "stacks.run")).toBe(false);
  });

  it("describes every role", () => {
    expect(Object.keys(ROLE_DESCRIPTIONS).sort()).toEqual([...ROLES].sort());
  });

  it.each(["Files", "Destinations", "Schedules"])("shows the %s page to admins only", (label) => {
    expect(navItemsFor("admin").map((item) => item.label)).toContain(label);
    expect(navItemsFor("operator").map((item) => item.label)).not.toContain(label);
    expect(navItemsFor("viewer").map((item) => item.label)).not.toContain(label);
  });
});
