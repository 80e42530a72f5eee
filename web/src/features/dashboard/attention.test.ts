import { describe, expect, it } from "vitest";
import { makeAttention } from "../../test/fleetFixtures";
import { attentionHref, byPriority } from "./attention";

describe("byPriority", () => {
  it("puts critical first, then warnings, then information, keeping the order within each", () => {
    const items = [
      makeAttention({ severity: "info", message: "i1" }),
      makeAttention({ severity: "critical", message: "c1" }),
      makeAttention({ severity: "warning", message: "w1" }),
      makeAttention({ severity: "critical", message: "c2" }),
      makeAttention({ severity: "info", message: "i2" }),
    ];
    expect(byPriority(items).map((item) => item.message)).toEqual(["c1", "c2", "w1", "i1", "i2"]);
    expect(items[0]?.message).toBe("i1"); // the input is left as it was
  });
});

describe("attentionHref", () => {
  it("leads to the stack on its host", () => {
    expect(attentionHref(makeAttention({ stack: "my app", host_id: null }))).toBe("/stacks/my%20app");
    expect(attentionHref(makeAttention({ stack: "db", host_id: 4 }))).toBe("/stacks/db?host=4");
  });

  it("leads to the Agents page for an agent that cannot be reached or used", () => {
    expect(attentionHref(makeAttention({ kind: "agent_offline", stack: null, host_id: 4 }))).toBe("/agents");
    expect(attentionHref(makeAttention({ kind: "agent_incompatible", stack: null, host_id: 4 }))).toBe("/agents");
  });

  it("leads nowhere for a host's disk or memory", () => {
    expect(attentionHref(makeAttention({ kind: "disk_full", stack: null, host_id: null }))).toBeNull();
    expect(attentionHref(makeAttention({ kind: "memory_full", stack: null, host_id: 4 }))).toBeNull();
  });
});
