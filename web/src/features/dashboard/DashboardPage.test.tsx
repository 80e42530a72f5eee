import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs, systemInfo, viewerUser } from "../../test/fixtures";
import { formatBytes } from "../../components/format";
import { makeDiskSummary } from "../../test/diskFixtures";
import { makeAttention, makeFleet, makeHost, makeReport } from "../../test/fleetFixtures";
import { renderApp } from "../../test/renderApp";
import { makeSummary } from "../../test/stackFixtures";
import { fleetQueryOptions } from "./queries";

const offlineAgent = makeHost({
  id: 3,
  name: "nas",
  kind: "agent",
  status: "offline",
  detail: "Agent 'nas' cannot be reached: connection refused",
  version: "0.1.0",
  last_seen_at: "2025-03-01T09:00:00Z",
  answered_in_ms: null,
  report: null,
});

const fleet = makeFleet({
  // Not in order: the page puts the most pressing first.
  attention: [
    makeAttention({ severity: "info", kind: "stack_update", stack: "web", message: "Newer images are available" }),
    makeAttention({ severity: "warning", kind: "stack_partial", host: "pi", host_id: 5, stack: "db" }),
    makeAttention({
      severity: "critical",
      kind: "agent_offline",
      host: "nas",
      host_id: 3,
      stack: null,
      message: "nas is offline: connection refused; last seen 2025-03-01 09:00 UTC",
    }),
    makeAttention({ severity: "critical", kind: "container_unhealthy", host: "pi", host_id: 5, stack: "cam", message: "cam-app-1 is unhealthy" }),
  ],
  kpis: {
    hosts: 2,
    hosts_online: 1,
    stacks: 4,
    stacks_running: 2,
    containers_running: 5,
    containers_total: 7,
    updates: 1,
    critical: 2,
    warnings: 1,
  },
  hosts: [makeHost(), offlineAgent],
});

function fleetRoutes(answer: Routes[string] = fleet): Routes {
  return { ...signedInAs(adminUser), "GET /api/dashboard/fleet": answer };
}

describe("dashboard", () => {
  it("lists what needs attention first, most pressing first, each item naming its host and linking to its stack", async () => {
    installFakeFetch(fleetRoutes());
    renderApp("/");

    const list = await screen.findByRole("list", { name: "Needs attention" });
    const items = within(list).getAllByRole("listitem");
    expect(items.map((item) => item.dataset.severity)).toEqual(["critical", "critical", "warning", "info"]);
    // Within a severity the server's order is kept.
    expect(items[0]).toHaveTextContent("Critical");
    expect(items[0]).toHaveTextContent("nas is offline: connection refused");
    expect(within(items[0] as HTMLElement).getByRole("link", { name: "See the agent" })).toHaveAttribute("href", "/agents");
    expect(items[1]).toHaveTextContent("pi / cam");
    expect(within(items[1] as HTMLElement).getByRole("link", { name: "cam" })).toHaveAttribute("href", "/stacks/cam?host=5");
    expect(within(items[2] as HTMLElement).getByRole("link", { name: "db" })).toHaveAttribute("href", "/stacks/db?host=5");
    // This host's stack: no host parameter.
    expect(items[3]).toHaveTextContent("central / web");
    expect(within(items[3] as HTMLElement).getByRole("link", { name: "web" })).toHaveAttribute("href", "/stacks/web");

    // The attention list comes before the figures and the hosts.
    const attention = screen.getByRole("region", { name: /Needs attention/ });
    const hosts = screen.getByRole("region", { name: "Hosts" });
    expect(attention.compareDocumentPosition(hosts) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it("says so when nothing needs attention", async () => {
    installFakeFetch(fleetRoutes(makeFleet()));
    renderApp("/");

    expect(await screen.findByText(/Nothing needs attention/)).toBeInTheDocument();
    expect(screen.queryByRole("list", { name: "Needs attention" })).not.toBeInTheDocument();
  });

  it("offers New stack when no host has a stack yet, to those who may make one", async () => {
    const empty = makeFleet();
    const none = { ...empty, kpis: { ...empty.kpis, stacks: 0, stacks_running: 0 } };
    installFakeFetch({ ...fleetRoutes(none), "GET /api/stacks": [], "GET /api/stacks/updates": makeSummary([]) });
    const { user } = renderApp("/");

    const first = await screen.findByRole("region", { name: "No stacks yet" });
    await user.click(within(first).getByRole("link", { name: "New stack" }));
    // The Stacks page, its New stack form open.
    expect(await screen.findByRole("form", { name: "New stack" })).toBeInTheDocument();
    expect(screen.getByTestId("location")).toHaveTextContent("/stacks");
  });

  it("offers no New stack to a viewer, nor on a fleet that has stacks", async () => {
    const empty = makeFleet();
    installFakeFetch({
      ...fleetRoutes({ ...empty, kpis: { ...empty.kpis, stacks: 0, stacks_running: 0 } }),
      ...signedInAs(viewerUser),
    });
    renderApp("/");
    const first = await screen.findByRole("region", { name: "No stacks yet" });
    expect(within(first).queryByRole("link", { name: "New stack" })).toBeNull();
  });

  it("shows the headline figures and the stacks by state", async () => {
    installFakeFetch(fleetRoutes());
    renderApp("/");

    const figures = await screen.findByRole("region", { name: "Headline figures" });
    expect(figures).toHaveTextContent("Hosts online1 of 2");
    expect(figures).toHaveTextContent("Stacks running2 of 4");
    expect(figures).toHaveTextContent("Containers running5 of 7");
    expect(figures).toHaveTextContent("Updates available1");
    expect(figures).toHaveTextContent("Critical2");
    const breakdown = within(screen.getByRole("region", { name: "Stacks by state" })).getByRole("list");
    expect(within(breakdown).getAllByRole("listitem").map((li) => li.textContent)).toEqual([
      "Running: 2",
      "Partly running: 1",
      "Stopped: 1",
    ]);
  });

  it("has a card per host: resources when it answered, why not and when last seen when offline", async () => {
    installFakeFetch(fleetRoutes());
    renderApp("/");

    const local = await screen.findByRole("region", { name: "central" });
    expect(within(local).getByTestId("host-status")).toHaveTextContent("Online");
    expect(local).toHaveTextContent("This host");
    expect(local).toHaveTextContent("Stackyard 0.1.0");
    expect(local).toHaveTextContent("4 CPUs · load 0.52 / 0.40 / 0.31");
    expect(local).toHaveTextContent("5 of 7 running");
    expect(within(local).getByRole("link", { name: "4 stacks" })).toHaveAttribute("href", "/stacks");
    expect(within(local).getByRole("progressbar", { name: "Memory" })).toHaveAttribute("aria-valuenow", "25");
    expect(within(local).getByRole("progressbar", { name: "Memory" })).toHaveAttribute(
      "aria-valuetext",
      "2.0 GB of 8.0 GB used (25 %)",
    );
    expect(within(local).getByRole("progressbar", { name: "Disk" })).toHaveAttribute("aria-valuenow", "60");
    expect(local).toHaveTextContent("Docker data at /var/lib/docker");

    const nas = screen.getByRole("region", { name: "nas" });
    expect(within(nas).getByTestId("host-status")).toHaveTextContent("Offline");
    expect(nas).toHaveTextContent("Agent");
    expect(nas).toHaveTextContent("connection refused");
    expect(within(nas).getByText(/ago|just now/)).toHaveAttribute("dateTime", "2025-03-01T09:00:00Z");
    expect(within(nas).queryByRole("progressbar")).not.toBeInTheDocument();
  });

  it("links an agent's card to its stacks and flags a disk that is nearly full", async () => {
    const agent = makeHost({
      id: 4,
      name: "pi",
      kind: "agent",
      report: makeReport({
        resources: { ...makeReport().resources, disk_total: 100, disk_free: 3, stacks: 1 },
        engine_error: null,
      }),
    });
    installFakeFetch(fleetRoutes(makeFleet({ hosts: [makeHost(), agent] })));
    renderApp("/");

    const card = await screen.findByRole("region", { name: "pi" });
    expect(within(card).getByRole("link", { name: "1 stack" })).toHaveAttribute("href", "/stacks?host=4");
    expect(within(card).getByRole("progressbar", { name: "Disk" })).toHaveAttribute("aria-valuenow", "97");
    expect(within(card).getByRole("progressbar", { name: "Disk" })).toHaveClass("tone-bad");
  });

  it("shows each host's Docker disk when measured, says so when not yet, and nothing for an agent that never measures it", async () => {
    const measured = makeHost({
      report: makeReport({ capabilities: ["stacks", "fleet", "disk"], disk: makeDiskSummary() }),
    });
    const waiting = makeHost({
      id: 4,
      name: "pi",
      kind: "agent",
      report: makeReport({ name: "pi", capabilities: ["stacks", "fleet", "disk"], disk: null }),
    });
    const older = makeHost({ id: 5, name: "old", kind: "agent", report: makeReport({ name: "old", capabilities: ["stacks", "fleet"] }) });
    const withDisk = makeHost({
      id: 6,
      name: "nas",
      kind: "agent",
      report: makeReport({ name: "nas", capabilities: ["stacks", "fleet", "disk"], disk: makeDiskSummary({ reclaimable: 0 }) }),
    });
    installFakeFetch(fleetRoutes(makeFleet({ hosts: [measured, waiting, older, withDisk] })));
    renderApp("/");

    const local = await screen.findByRole("region", { name: "central" });
    expect(within(local).getByTestId("host-disk")).toHaveTextContent(
      `images ${formatBytes(makeDiskSummary().images)} · volumes 340.0 MB · 410.0 MB reclaimable`,
    );
    expect(within(local).getByRole("link", { name: "410.0 MB reclaimable" })).toHaveAttribute("href", "/disk");
    expect(within(screen.getByRole("region", { name: "nas" })).getByRole("link", { name: "0 B reclaimable" })).toHaveAttribute(
      "href",
      "/disk?host=6",
    );
    expect(within(screen.getByRole("region", { name: "pi" })).getByTestId("host-disk")).toHaveTextContent("not measured yet");
    expect(within(screen.getByRole("region", { name: "old" })).queryByTestId("host-disk")).not.toBeInTheDocument();
  });

  it("shows the API's detail with a Retry button when the fleet cannot be read", async () => {
    let fail = true;
    const fake = installFakeFetch(
      fleetRoutes(() =>
        fail
          ? json(
              { detail: "The fleet payload could not be computed: KeyError: 'running' (fleet/dashboard.py:120)" },
              { status: 500 },
            )
          : json(fleet),
      ),
    );
    const { user } = renderApp("/");

    const banner = await screen.findByRole("alert");
    expect(banner).toHaveTextContent("The fleet payload could not be computed: KeyError: 'running' (fleet/dashboard.py:120)");
    expect(screen.queryByRole("region", { name: "Hosts" })).not.toBeInTheDocument();
    // This host's system card is still shown.
    expect(await within(screen.getByRole("region", { name: "System" })).findByText("27.3.1")).toBeInTheDocument();

    fail = false;
    await user.click(within(banner).getByRole("button", { name: "Retry" }));
    expect(await screen.findByRole("region", { name: "Hosts" })).toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    expect(fake.calls("GET", "/api/dashboard/fleet")).toHaveLength(2);
  });

  it("keeps the last payload when a refresh fails, and says so", async () => {
    let fail = false;
    installFakeFetch(fleetRoutes(() => (fail ? json({ detail: "Database is down" }, { status: 500 }) : json(fleet))));
    const { queryClient } = renderApp("/");

    await screen.findByRole("region", { name: "Hosts" });
    fail = true;
    await queryClient.refetchQueries({ queryKey: fleetQueryOptions().queryKey });

    const note = await screen.findByRole("alert");
    expect(note).toHaveTextContent("Could not refresh: Database is down");
    expect(screen.getByRole("region", { name: "Hosts" })).toBeInTheDocument();
  });

  it("refreshes itself every 15 seconds", () => {
    expect(fleetQueryOptions().refetchInterval).toBe(15_000);
  });

  it("still shows this host's system information", async () => {
    installFakeFetch(fleetRoutes());
    renderApp("/");

    const card = await screen.findByRole("region", { name: "System" });
    expect(await within(card).findByText("27.3.1")).toBeInTheDocument();
    expect(card).toHaveTextContent("API 1.47");
    expect(card).toHaveTextContent("2.29.7");
    expect(card).toHaveTextContent("Supported");
    expect(card).toHaveTextContent("/opt/stacks");
  });

  it("shows the error when Docker is unreachable", async () => {
    installFakeFetch({
      ...fleetRoutes(),
      "GET /api/system/info": {
        ...systemInfo,
        docker: { reachable: false, version: null, api_version: null, error: "permission denied on docker.sock" },
        compose: { version: null, json_progress: false },
      },
    });
    renderApp("/");

    const card = await screen.findByRole("region", { name: "System" });
    expect(await within(card).findByText(/permission denied on docker.sock/)).toHaveTextContent("Unreachable");
    expect(card).toHaveTextContent("Not found");
    expect(card).toHaveTextContent("Not supported");
  });

  it("shows the system card's own error with a Retry button", async () => {
    let fail = true;
    installFakeFetch({
      ...fleetRoutes(),
      "GET /api/system/info": () => (fail ? json({ detail: "Docker is down" }, { status: 500 }) : json(systemInfo)),
    });
    const { user } = renderApp("/");

    const card = await screen.findByRole("region", { name: "System" });
    expect(await within(card).findByRole("alert")).toHaveTextContent("Docker is down");
    fail = false;
    await user.click(within(card).getByRole("button", { name: "Retry" }));
    await waitFor(() => expect(within(card).getByText("27.3.1")).toBeInTheDocument());
  });
});
