import { describe, expect, it } from "vitest";
import { makeAgent } from "../../test/agentFixtures";
import { catalogue, failures, hook, phone } from "../../test/notificationFixtures";
import { below, eventsBelow, eventTitle, groupEvents } from "./events";
import { channelsSummary, eventsSummary, hostsSummary, parseStacks, ruleSpecOf, stacksSummary } from "./ruleSummary";

const agents = [makeAgent({ id: 3, name: "nas" })];

describe("a rule in words", () => {
  it("says every, all or the names", () => {
    expect(eventsSummary(failures, catalogue)).toBe("Every event");
    expect(hostsSummary(failures, agents)).toBe("All hosts");
    expect(stacksSummary(failures)).toBe("All stacks");
    expect(channelsSummary(failures, [hook])).toBe("Every channel");

    const rule = { events: ["stack_update", "disk_full"] as const, hosts: [0, 3, 8], stacks: ["web"], channels: [2, 1, 5] };
    expect(eventsSummary({ events: [...rule.events] }, catalogue)).toBe("Newer images are available, Disk almost full");
    expect(eventsSummary({ events: ["disk_full"] }, undefined)).toBe("disk_full");
    expect(hostsSummary(rule, agents)).toBe("This host, nas, Agent #8 (deleted)");
    expect(hostsSummary(rule, undefined)).toBe("This host, Agent #3, Agent #8");
    expect(stacksSummary(rule)).toBe("web");
    expect(channelsSummary(rule, [hook, phone])).toBe("phone, ops hook, Channel #5 (deleted)");
  });

  it("gives back a rule's spec without its id, and reads stacks as typed", () => {
    expect(ruleSpecOf(failures)).not.toHaveProperty("id");
    expect(parseStacks(" web,db  web ,, media ")).toEqual(["web", "db", "media"]);
    expect(parseStacks("")).toEqual([]);
  });
});

describe("events", () => {
  it("groups the catalogue's events by what they are about, an unknown one under Other", () => {
    const groups = groupEvents([
      ...catalogue.events,
      { name: "brand_new" as never, severity: "info", title: "Something new", condition: false, announces_end: false },
    ]);
    expect(groups.map((g) => [g.label, g.events.map((e) => e.name)])).toEqual([
      ["Images and updates", ["stack_update", "update_failed"]],
      ["Backups, schedules and restores", ["backup_succeeded", "backup_failed", "schedule_missed"]],
      ["Containers and stacks", ["container_unhealthy"]],
      ["Hosts and agents", ["agent_offline", "disk_full"]],
      ["Stackyard itself", ["release_available"]],
      ["Other", ["brand_new"]],
    ]);
  });

  it("finds titles, and the events a minimum severity leaves out", () => {
    expect(eventTitle(catalogue, "backup_failed")).toBe("Backup failed");
    expect(below("info", "warning")).toBe(true);
    expect(below("critical", "warning")).toBe(false);
    expect(eventsBelow(catalogue, ["stack_update", "disk_full", "backup_failed"], "critical").map((e) => e.name)).toEqual([
      "stack_update",
      "disk_full",
    ]);
  });
});
