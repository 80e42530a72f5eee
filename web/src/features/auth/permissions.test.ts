import { describe, expect, it } from "vitest";
import { adminUser, operatorUser, viewerUser } from "../../test/fixtures";
import { navItemsFor } from "../layout/navigation";
import { can, ROLE_DESCRIPTIONS, ROLES } from "./permissions";

describe("can", () => {
  it("gives what the server listed for the user", () => {
    expect(can(adminUser, "files")).toBe(true);
    expect(can(operatorUser, "stacks.run")).toBe(true);
    expect(can(operatorUser, "files")).toBe(false);
    expect(can(viewerUser, "stacks.run")).toBe(false);
  });

  it("gives nothing to nobody", () => {
    expect(can(undefined, "stacks.run")).toBe(false);
  });

  it("describes every role", () => {
    expect(Object.keys(ROLE_DESCRIPTIONS).sort()).toEqual([...ROLES].sort());
  });

  it.each(["Files", "Destinations", "Schedules"])("shows the %s page to admins only", (label) => {
    expect(navItemsFor(adminUser).map((item) => item.label)).toContain(label);
    expect(navItemsFor(operatorUser).map((item) => item.label)).not.toContain(label);
    expect(navItemsFor(viewerUser).map((item) => item.label)).not.toContain(label);
  });
});
