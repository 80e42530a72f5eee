import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { formatDateTime } from "../../components/format";
import { makeAgent, makeTunnelAgent } from "../../test/agentFixtures";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { makeFleet, makeHost, makeReport } from "../../test/fleetFixtures";
import { renderApp } from "../../test/renderApp";

const DOWN_SINCE = "2025-03-01T09:59:30Z";
const PUSHED_AT = "2025-03-01T10:00:00Z";

const direct = makeAgent({ id: 3, name: "nas" });
const dialling = makeTunnelAgent({ id: 7, name: "home-nas" });
const reconnecting = makeTunnelAgent({ id: 9, name: "cabin", tunnel: "reconnecting", tunnel_since: DOWN_SINCE });

const fleet = makeFleet({
  hosts: [
    makeHost(),
    makeHost({ id: 3, name: "nas", kind: "agent", report: makeReport({ name: "nas" }) }),
    makeHost({
      id: 7,
      name: "home-nas",
      kind: "agent",
      answered_in_ms: null,
      reported_at: PUSHED_AT,
      report: makeReport({ name: "home-nas" }),
    }),
    makeHost({
      id: 9,
      name: "cabin",
      kind: "agent",
      status: "reconnecting",
      detail: "Agent 'cabin' is reconnecting: its tunnel has been down since 2025-03-01 09:59:30 UTC",
      last_seen_at: "2025-03-01T09:59:00Z",
      answered_in_ms: null,
      report: null,
    }),
  ],
});

function routes(agents: Routes[string]): Routes {
  return { ...signedInAs(adminUser), "GET /api/dashboard/fleet": fleet, "GET /api/agents": agents };
}

describe("the fleet's host cards", () => {
  it("say each agent's kind, and a reconnecting agent's since when, not as an error", async () => {
    installFakeFetch(routes([direct, dialling, reconnecting]));
    renderApp("/");

    const local = await screen.findByRole("region", { name: "central" });
    expect(within(local).getByTestId("host-kind")).toHaveTextContent("This host");
    const nas = screen.getByRole("region", { name: "nas" });
    await waitFor(() => expect(within(nas).getByTestId("host-kind")).toHaveTextContent("Agent · direct"));
    const homeNas = screen.getByRole("region", { name: "home-nas" });
    expect(within(homeNas).getByTestId("host-kind")).toHaveTextContent("Agent · connects to us");
    expect(within(homeNas).getByTestId("host-status")).toHaveTextContent("Online");

    const cabin = screen.getByRole("region", { name: "cabin" });
    expect(within(cabin).getByTestId("host-kind")).toHaveTextContent("Agent · connects to us");
    expect(within(cabin).getByTestId("host-status")).toHaveTextContent("Reconnecting");
    // Its own tone: neither an error nor a warning.
    expect(cabin).toHaveClass("tone-info");
    expect(cabin).not.toHaveClass("tone-bad");
    expect(cabin).not.toHaveClass("tone-warn");
    const since = within(cabin).getByTestId("host-reconnecting");
    expect(since).toHaveTextContent(`Its tunnel went down at ${formatDateTime(DOWN_SINCE)}; it connects again on its own.`);
    expect(within(since).getByText(formatDateTime(DOWN_SINCE))).toHaveAttribute("dateTime", DOWN_SINCE);
    expect(cabin.querySelector(".error, .warn-text")).toBeNull();
    expect(cabin).toHaveTextContent("Last seen");
  });

  it("still show a reconnecting agent, in words, when the list of agents cannot be read", async () => {
    installFakeFetch(routes(() => json({ detail: "The database is locked" }, { status: 500 })));
    renderApp("/");

    const cabin = await screen.findByRole("region", { name: "cabin" });
    expect(within(cabin).getByTestId("host-status")).toHaveTextContent("Reconnecting");
    expect(within(cabin).getByTestId("host-kind")).toHaveTextContent(/^Agent$/);
    expect(cabin).toHaveTextContent("its tunnel has been down since 2025-03-01 09:59:30 UTC");
    expect(cabin.querySelector(".error, .warn-text")).toBeNull();
  });

  it("say how fresh an online host's report is: its answer time when asked, its age when it pushed it", async () => {
    installFakeFetch(routes([direct, dialling, reconnecting]));
    renderApp("/");

    const nas = await screen.findByRole("region", { name: "nas" });
    expect(nas).toHaveTextContent(/answered in 12 ms/);
    expect(within(nas).queryByTestId("host-reported")).toBeNull();
    const homeNas = screen.getByRole("region", { name: "home-nas" });
    expect(homeNas).not.toHaveTextContent("answered in");
    const reported = within(homeNas).getByTestId("host-reported");
    expect(reported).toHaveAttribute("dateTime", PUSHED_AT);
    expect(reported).toHaveAttribute("title", formatDateTime(PUSHED_AT));
    expect(homeNas).toHaveTextContent(/· reported/);
  });
});
