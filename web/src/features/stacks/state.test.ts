import { describe, expect, it } from "vitest";
import type { StackState } from "../../api/types";
import { makeStack } from "../../test/stackFixtures";
import { healthTone, servicesSummary, STATE_LABEL, STATE_ORDER, STATE_TONES } from "./state";

function container(name: string, state: string, health: string | null) {
  return { name, state, status: "Up", health, image: "nginx:1", ports: [] };
}

describe("a stack's state word", () => {
  it("has a word and a colour for every state the server sends, and a place in the order", () => {
    const states: StackState[] = ["running", "unhealthy", "partial", "restarting", "rolled_back", "stopped", "invalid"];
    expect(states.map((s) => STATE_LABEL[s])).toEqual([
      "Running",
      "Unhealthy",
      "Partly running",
      "Restarting",
      "Rolled back",
      "Stopped",
      "Invalid",
    ]);
    expect([...STATE_ORDER].sort()).toEqual([...states].sort());
    expect(STATE_TONES.unhealthy).toBe("bad");
    expect(STATE_TONES.running).toBe("good");
  });

  it("colours health: starting is no alarm, unhealthy is", () => {
    expect(healthTone("starting")).not.toBe("bad");
    expect(healthTone("unhealthy")).toBe("bad");
    expect(healthTone("healthy")).toBe("good");
  });

  it("counts the services running and says how many containers are unhealthy or restarting", () => {
    const stack = makeStack({
      state: "unhealthy",
      services: [
        { name: "web", image: "nginx:1", running: true, containers: [container("web-1", "running", "unhealthy")] },
        { name: "db", image: "pg:16", running: true, containers: [container("db-1", "running", "starting")] },
        { name: "job", image: "job:1", running: false, containers: [container("job-1", "restarting", null)] },
      ],
    });
    expect(servicesSummary(stack)).toBe("2 of 3 running, 1 unhealthy, 1 restarting");
    expect(servicesSummary(makeStack())).toBe("1 of 1 running");
    expect(servicesSummary(makeStack({ services: [] }))).toBe("No services");
  });
});
