import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ContainerUsage } from "../../api/types";
import { installFakeFetch } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeRun, makeSummary } from "../../test/stackFixtures";
import { formatTime } from "../../components/format";
import { uptime, withGaps } from "./UsageCard";

function usage(overrides: Partial<ContainerUsage>): ContainerUsage {
  return {
    id: "x",
    name: "web-app-1",
    project: "web",
    service: "app",
    cpu_percent: 12.5,
    memory_used: 64_000_000,
    memory_limit: 1_000_000_000,
    network_rx: 2_000,
    network_tx: 3_000_000,
    block_read: 0,
    block_write: 4_500,
    pids: 3,
    restarts: 2,
    started_at: new Date(Date.now() - 3_700_000).toISOString(),
    health: "healthy",
    ...overrides,
  };
}

describe("resource use on the stack page", () => {
  it("shows each running container of the stack and the stack's sum, from one call", async () => {
    const detail = makeDetail();
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/stacks/web": detail,
      "GET /api/stacks/updates": makeSummary([]),
      "GET /api/stacks/web/run": makeRun({ status: "succeeded" }),
      "GET /api/usage": {
        containers: [
          usage({ id: "a" }),
          usage({ id: "b", name: "web-app-2", cpu_percent: 7.5, memory_used: 36_000_000 }),
          usage({ id: "c", name: "other-db-1", project: "other" }),
          usage({ id: "d", name: "web-app-3" }), // stopped a moment ago: its last sample lingers
        ],
        stacks: {
          web: { containers: 2, cpu_percent: 20, memory_used: 100_000_000, network_rx: 4_000, network_tx: 6_000_000, block_read: 0, block_write: 9_000 },
        },
        total: { containers: 3, cpu_percent: 32.5, memory_used: 164_000_000, network_rx: 6_000, network_tx: 9_000_000, block_read: 0, block_write: 13_500 },
      },
    });
    // The fixture's stack has one container: add a second of the same service.
    detail.services[0]?.containers.push({ ...detail.services[0].containers[0]!, name: "web-app-2" });
    detail.services[0]?.containers.push({ ...detail.services[0].containers[0]!, name: "web-app-3", state: "exited" });
    renderApp("/stacks/web");

    const table = await screen.findByRole("table", { name: "Resource use" });
    const first = within(table).getByRole("row", { name: /web-app-1/ });
    expect(first).toHaveTextContent("12.5 %");
    expect(first).toHaveTextContent("64.0 MB of 1.0 GB");
    expect(first).toHaveTextContent("2.0 kB / 3.0 MB");
    expect(first).toHaveTextContent("1 h 1 min");
    expect(first).toHaveTextContent("healthy");
    expect(within(table).queryByRole("row", { name: /other-db-1/ })).not.toBeInTheDocument();
    expect(within(table).queryByRole("row", { name: /web-app-3/ })).not.toBeInTheDocument();
    expect(within(table).getByRole("row", { name: /Stack \(2 running\)/ })).toHaveTextContent("20.0 %");
    expect(fake.calls("GET", "/api/usage")).toHaveLength(1);
  });

  it("draws each container's last minutes, with gaps where no sample was taken", async () => {
    const at = Date.now() / 1000;
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/stacks/web": makeDetail(),
      "GET /api/stacks/updates": makeSummary([]),
      "GET /api/stacks/web/run": makeRun({ status: "succeeded" }),
      "GET /api/usage": { containers: [usage({ id: "a" })], stacks: {}, total: usage({}) },
      "GET /api/stacks/web/usage/history": {
        step_seconds: 10,
        containers: {
          "web-app-1": [
            { at: at - 30, cpu_percent: 10, memory_used: 50_000_000 },
            { at: at - 20, cpu_percent: 80, memory_used: 64_000_000 },
            { at: at - 10, cpu_percent: null, memory_used: null },
            { at, cpu_percent: 5, memory_used: 60_000_000 },
          ],
        },
      },
    });
    renderApp("/stacks/web");

    // jsdom has no canvas: the chart says its figures in words (the browser test sees it drawn).
    const cpu = await screen.findByText(/^CPU of web-app-1: now 5\.0 %, peak 80\.0 % at /);
    expect(cpu).toHaveTextContent(`at ${formatTime((at - 20) * 1000)}`);
    expect(screen.getByText(/^Memory of web-app-1: now 60\.0 MB, peak 64\.0 MB at /)).toBeInTheDocument();
  });

  it("breaks the line where no sample was taken, rather than drawing over the time", () => {
    const point = (at: number, cpu: number) => ({ at, cpu_percent: cpu, memory_used: 1 });
    const gap = (at: number) => ({ at, cpu_percent: null, memory_used: null });
    expect(withGaps([point(0, 1), point(10, 2), point(50, 3), point(60, 4)], 10)).toEqual([
      point(0, 1),
      point(10, 2),
      gap(20),
      point(50, 3),
      point(60, 4),
    ]);
    expect(withGaps([point(0, 1), point(14, 2)], 10)).toEqual([point(0, 1), point(14, 2)]);
  });

  it("says how long a container is up", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    expect(uptime("2026-11-23T11:59:18Z", now)).toBe("42 s");
    expect(uptime("2026-11-23T11:55:00Z", now)).toBe("5 min 0 s");
    expect(uptime("2026-11-20T08:00:00Z", now)).toBe("3 d 4 h");
    expect(uptime(null, now)).toBe("—");
  });
});
