import { act, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Agent, AgentSpec } from "../../api/types";
import { formatDateTime } from "../../components/format";
import {
  ENROL_TOKEN,
  KEY_FINGERPRINT,
  makeAgent,
  makeNewTunnelAgent,
  makeTunnelAgent,
} from "../../test/agentFixtures";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { AGENTS_SETTLING_REFETCH_MS } from "./queries";

/** The tests' "now": the new agent was made a minute ago; its token expires at 10:15. */
const NOW = "2025-03-01T10:01:00Z";

const nas = makeAgent();
const homeNas = makeTunnelAgent();
const cabin = makeTunnelAgent({
  id: 9,
  name: "cabin",
  tunnel: "reconnecting",
  tunnel_since: "2025-03-01T09:59:30Z",
  last_error: "Agent 'cabin' is reconnecting: its tunnel has been down since 2025-03-01 09:59:30 UTC",
});
const shed = makeTunnelAgent({ id: 10, name: "shed", tunnel: "never", tunnel_since: null });
const waiting = makeTunnelAgent({
  id: 11,
  name: "waiting-box",
  enrolled: false,
  tunnel: "never",
  tunnel_since: null,
  key_fingerprint: null,
  version: null,
  capabilities: [],
  last_seen_at: null,
});
const off = makeTunnelAgent({ id: 12, name: "off-box", enabled: false, tunnel: "never", tunnel_since: null });

function routes(agents: Agent[], extra: Routes = {}): Routes {
  return { ...signedInAs(adminUser), "GET /api/agents": () => json(agents), ...extra };
}

function rowOf(name: string): HTMLElement {
  const table = screen.getByRole("table", { name: "Agents" });
  const row = within(table)
    .getAllByRole("row")
    .find((r) => within(r).queryByRole("rowheader")?.textContent?.startsWith(name));
  if (!row) throw new Error(`no row for ${name}`);
  return row;
}

async function bodyOf<T>(request: Request | undefined): Promise<T> {
  return (await request?.clone().json()) as T;
}

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the agents list, with agents that connect to us", () => {
  it("shows each agent's kind and a tunnel's state with since when, its key, and no address", async () => {
    installFakeFetch(routes([nas, homeNas, cabin, shed, waiting, off]));
    renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    const direct = rowOf("nas");
    expect(within(direct).getByTestId("agent-kind")).toHaveTextContent("Direct");
    expect(direct).toHaveTextContent("https://nas.lan:8443");
    expect(within(direct).getByTestId("agent-status")).toHaveTextContent("Online");
    expect(within(direct).queryByRole("button", { name: /Rotate/ })).not.toBeInTheDocument();

    const connected = rowOf("home-nas");
    expect(within(connected).getByTestId("agent-kind")).toHaveTextContent("Connects to us");
    expect(within(connected).getByTestId("agent-status")).toHaveTextContent("Connected");
    expect(within(connected).getByTestId("agent-status-note")).toHaveTextContent(
      `since ${formatDateTime("2025-03-01T09:55:00Z")}`,
    );
    expect(within(connected).getByTestId("agent-key")).toHaveTextContent(KEY_FINGERPRINT);
    // Its "address" is a placeholder, not a URL to show, and it has no certificate.
    expect(connected).not.toHaveTextContent("tunnel");
    expect(connected).not.toHaveTextContent("Certificate");
    expect(within(connected).getByRole("button", { name: "Rotate the key of home-nas" })).toBeEnabled();
    expect(within(connected).getByRole("button", { name: "Remove home-nas" })).toBeInTheDocument();

    // Reconnecting is of note, not an error: its since, and not the error text.
    const down = rowOf("cabin");
    const state = within(down).getByTestId("agent-status");
    expect(state).toHaveTextContent("Reconnecting");
    expect(state).toHaveClass("tone-info");
    expect(within(down).getByTestId("agent-status-note")).toHaveTextContent(
      `since ${formatDateTime("2025-03-01T09:59:30Z")}`,
    );
    expect(down).not.toHaveTextContent("has been down since");
    // A rotation goes through the tunnel: not while it is down.
    expect(within(down).getByRole("button", { name: "Rotate the key of cabin" })).toBeDisabled();

    const never = rowOf("shed");
    expect(within(never).getByTestId("agent-status")).toHaveTextContent("Never connected");
    expect(within(never).getByTestId("agent-status-note")).toHaveTextContent("since this Stackyard started");

    const pending = rowOf("waiting-box");
    expect(within(pending).getByTestId("agent-status")).toHaveTextContent("Not enrolled yet");
    expect(within(pending).getByTestId("agent-status-note")).toHaveTextContent("Waiting for its host to enrol");
    expect(pending).toHaveTextContent("No key yet");
    expect(within(pending).getByRole("button", { name: "Rotate the key of waiting-box" })).toBeDisabled();

    expect(within(rowOf("off-box")).getByTestId("agent-status")).toHaveTextContent("Disabled");
  });

  it("offers viewers neither way to add an agent, nor a rotation", async () => {
    installFakeFetch({ ...routes([homeNas]), ...signedInAs(viewerUser) });
    renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    expect(rowOf("home-nas")).toHaveTextContent("Connected");
    expect(screen.queryByRole("button", { name: "Add an agent that connects to us" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Rotate/ })).not.toBeInTheDocument();
  });
});

describe("adding an agent that connects to us", () => {
  function newAgentRoutes() {
    const made = makeNewTunnelAgent({ agent: { ...makeNewTunnelAgent().agent, created_at: NOW } });
    const state = { agents: [nas] as Agent[] };
    const fake = installFakeFetch(
      routes([], {
        "GET /api/agents": () => json(state.agents),
        "POST /api/agents/tunnel": () => {
          state.agents = [nas, made.agent];
          return json(made, { status: 201 });
        },
        "DELETE /api/agents/8": () => {
          state.agents = [nas];
          return noContent();
        },
      }),
    );
    return { made, state, fake };
  }

  async function addLaptop() {
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });
    await user.click(await screen.findByRole("button", { name: "Add an agent that connects to us" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent that connects to us" });
    // A name is all it asks: no address, no token.
    expect(within(dialog).queryByLabelText("URL")).not.toBeInTheDocument();
    expect(within(dialog).queryByLabelText("Token")).not.toBeInTheDocument();
    await user.type(within(dialog).getByLabelText("Name"), "laptop");
    await user.click(within(dialog).getByRole("button", { name: "Make its token" }));
    // The token's dialog takes the form's place (the focus goes to its first button).
    const shown = await screen.findByRole("dialog", { name: "Add an agent that connects to us" });
    await within(shown).findByTestId("enrol-command");
    expect(within(shown).getByRole("button", { name: "Copy the command" })).toHaveFocus();
    return { user, dialog: shown };
  }

  it("shows the token once with the command, the compose service and its expiry, then the agent enrolling and connecting", async () => {
    const { made, state, fake } = newAgentRoutes();
    const { user, dialog } = await addLaptop();

    expect(await bodyOf(fake.calls("POST", "/api/agents/tunnel")[0])).toEqual({ name: "laptop" });
    expect(within(dialog).getByTestId("enrol-command")).toHaveTextContent(
      `stackyard agent --connect https://stackyard.example.com --enrol ${ENROL_TOKEN}`,
    );
    expect(within(dialog).getByTestId("enrol-compose").textContent).toBe(made.compose);
    expect(within(dialog).getByTestId("enrol-token")).toHaveTextContent(ENROL_TOKEN);
    expect(dialog).toHaveTextContent("its token is not shown again");
    expect(dialog).toHaveTextContent(`until ${formatDateTime("2025-03-01T10:15:00Z")}`);
    expect(within(dialog).getByRole("button", { name: "Copy the command" })).toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Copy the compose file" })).toBeInTheDocument();
    expect(within(dialog).getByRole("status")).toHaveTextContent("Waiting for its host to enrol");
    // The list behind shows it waiting.
    expect(within(rowOf("laptop")).getByTestId("agent-status")).toHaveTextContent("Not enrolled yet");

    // Its host enrols and dials in: the list, asked every 2 s while it settles, shows it.
    state.agents = [
      nas,
      { ...made.agent, enrolled: true, tunnel: "connected", tunnel_since: NOW, key_fingerprint: KEY_FINGERPRINT, version: "0.1.0" },
    ];
    const asked = fake.calls("GET", "/api/agents").length;
    await act(async () => {
      await vi.advanceTimersByTimeAsync(AGENTS_SETTLING_REFETCH_MS);
    });
    expect(fake.calls("GET", "/api/agents").length).toBeGreaterThan(asked);
    await waitFor(() => expect(within(dialog).getByRole("status")).toHaveTextContent("laptop enrolled and connected"));

    // Used: closing asks nothing, and nothing shows the token again.
    await user.click(within(dialog).getByRole("button", { name: "Close" }));
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(document.body).not.toHaveTextContent(ENROL_TOKEN);
    expect(within(rowOf("laptop")).getByTestId("agent-status")).toHaveTextContent("Connected");
  });

  it("warns before closing while the token is unused, as it is not shown again", async () => {
    newAgentRoutes();
    const { user, dialog } = await addLaptop();

    await user.click(within(dialog).getByRole("button", { name: "Close" }));
    let confirm = screen.getByRole("alertdialog", { name: "Close without the token?" });
    expect(confirm).toHaveTextContent("not shown again");
    await user.click(within(confirm).getByRole("button", { name: "Keep it open" }));
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(within(dialog).getByTestId("enrol-token")).toHaveTextContent(ENROL_TOKEN);

    // Escape asks too.
    await user.keyboard("{Escape}");
    confirm = screen.getByRole("alertdialog", { name: "Close without the token?" });
    await user.click(within(confirm).getByRole("button", { name: "Close" }));
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(document.body).not.toHaveTextContent(ENROL_TOKEN);
    expect(within(rowOf("laptop")).getByTestId("agent-status")).toHaveTextContent("Not enrolled yet");
  });

  it("says when the token expired unused", async () => {
    newAgentRoutes();
    const { dialog } = await addLaptop();

    expect(within(dialog).getByRole("status")).toHaveTextContent("Waiting for its host to enrol");
    await act(async () => {
      await vi.advanceTimersByTimeAsync(15 * 60_000);
    });
    expect(within(dialog).getByRole("alert")).toHaveTextContent("The token expired unused: remove laptop and add it again");
  });

  it("revokes an unused token by removing the agent", async () => {
    const { fake } = newAgentRoutes();
    const { user, dialog } = await addLaptop();
    await user.click(within(dialog).getByRole("button", { name: "Close" }));
    await user.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Close" }));

    await user.click(within(rowOf("laptop")).getByRole("button", { name: "Remove laptop" }));
    const confirm = screen.getByRole("alertdialog", { name: "Remove and revoke agent laptop?" });
    expect(confirm).toHaveTextContent("Its enrolment token stops working at once");
    await user.click(within(confirm).getByRole("button", { name: "Remove and revoke" }));

    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    expect(fake.calls("DELETE", "/api/agents/8")).toHaveLength(1);
    expect(screen.getByRole("status")).toHaveTextContent("Agent laptop removed and revoked.");
  });

  it("shows the server's refusal", async () => {
    installFakeFetch(
      routes([nas], {
        "POST /api/agents/tunnel": () => json({ detail: "An agent named 'nas' exists" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });
    await user.click(await screen.findByRole("button", { name: "Add an agent that connects to us" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent that connects to us" });
    await user.type(within(dialog).getByLabelText("Name"), "nas");
    await user.click(within(dialog).getByRole("button", { name: "Make its token" }));

    expect(await within(dialog).findByText("An agent named 'nas' exists")).toBeInTheDocument();
    expect(within(dialog).queryByTestId("enrol-command")).not.toBeInTheDocument();
  });
});

describe("managing an agent that connects to us", () => {
  it("rotates its key: rotating until the agent dials with the new one, then its new key", async () => {
    const newKey = "SHA256:n3wK3yFb0mYx8pT2dXo3kZ1rW9cVn4LhE7sJ6aGuB0i";
    let agents = [homeNas];
    const fake = installFakeFetch(
      routes([], {
        "GET /api/agents": () => json(agents),
        "POST /api/agents/7/rotate-key": () => {
          agents = [{ ...homeNas, rotating: true }];
          return json(agents[0]);
        },
      }),
    );
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });

    await screen.findByRole("table", { name: "Agents" });
    await user.click(within(rowOf("home-nas")).getByRole("button", { name: "Rotate the key of home-nas" }));
    expect(fake.calls("POST", "/api/agents/7/rotate-key")).toHaveLength(1);
    const button = await within(rowOf("home-nas")).findByRole("button", { name: "Rotate the key of home-nas" });
    await waitFor(() => expect(button).toHaveTextContent("Rotating…"));
    expect(button).toBeDisabled();
    expect(rowOf("home-nas")).toHaveTextContent("Rotating its key");

    // The agent dials with its new key: the list, asked sooner while it rotates, shows it.
    agents = [{ ...homeNas, tunnel_since: NOW, key_fingerprint: newKey }];
    await act(async () => {
      await vi.advanceTimersByTimeAsync(AGENTS_SETTLING_REFETCH_MS);
    });
    await waitFor(() => expect(within(rowOf("home-nas")).getByTestId("agent-key")).toHaveTextContent(newKey));
    expect(rowOf("home-nas")).not.toHaveTextContent("Rotating its key");
    expect(within(rowOf("home-nas")).getByRole("button", { name: "Rotate the key of home-nas" })).toHaveTextContent(
      "Rotate key",
    );
    expect(within(rowOf("home-nas")).getByTestId("agent-status-note")).toHaveTextContent(`since ${formatDateTime(NOW)}`);
  });

  it("says why a rotation failed", async () => {
    installFakeFetch(
      routes([homeNas], {
        "POST /api/agents/7/rotate-key": () =>
          json({ detail: "Agent 'home-nas' cannot be reached: its tunnel closed" }, { status: 502 }),
      }),
    );
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });

    await screen.findByRole("table", { name: "Agents" });
    await user.click(within(rowOf("home-nas")).getByRole("button", { name: "Rotate the key of home-nas" }));
    expect(await within(rowOf("home-nas")).findByRole("alert")).toHaveTextContent(
      "Rotation failed: Agent 'home-nas' cannot be reached: its tunnel closed",
    );
  });

  it("edits only its name and whether it is enabled", async () => {
    const fake = installFakeFetch(
      routes([homeNas], {
        "PUT /api/agents/7": async (request) => json({ ...homeNas, ...(await bodyOf<AgentSpec>(request)), url: "tunnel" }),
      }),
    );
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });

    await screen.findByRole("table", { name: "Agents" });
    await user.click(within(rowOf("home-nas")).getByRole("button", { name: "Edit home-nas" }));
    const dialog = screen.getByRole("dialog", { name: "Edit home-nas" });
    expect(within(dialog).queryByLabelText("URL")).not.toBeInTheDocument();
    expect(within(dialog).queryByLabelText("Token")).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("button", { name: "Test" })).not.toBeInTheDocument();
    const name = within(dialog).getByLabelText("Name");
    await user.clear(name);
    await user.type(name, "attic");
    await user.click(within(dialog).getByRole("checkbox", { name: /Enabled/ }));
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await bodyOf(fake.calls("PUT", "/api/agents/7")[0])).toEqual({
      name: "attic",
      url: "tunnel",
      token: null,
      enabled: false,
    });
    expect(screen.getByRole("status")).toHaveTextContent("Agent attic saved.");
  });

  it("says that removing it cuts its tunnel at once and for good", async () => {
    let agents = [homeNas, nas];
    const fake = installFakeFetch(
      routes([], {
        "GET /api/agents": () => json(agents),
        "DELETE /api/agents/7": () => {
          agents = [nas];
          return noContent();
        },
      }),
    );
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });

    await screen.findByRole("table", { name: "Agents" });
    // A direct agent is still deleted as before.
    expect(within(rowOf("nas")).getByRole("button", { name: "Delete nas" })).toBeInTheDocument();
    await user.click(within(rowOf("home-nas")).getByRole("button", { name: "Remove home-nas" }));
    const confirm = screen.getByRole("alertdialog", { name: "Remove and revoke agent home-nas?" });
    expect(confirm).toHaveTextContent("Its tunnel is cut at once and its key forgotten: it cannot connect again");
    expect(fake.calls("DELETE", "/api/agents/7")).toHaveLength(0);
    await user.click(within(confirm).getByRole("button", { name: "Remove and revoke" }));

    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    expect(fake.calls("DELETE", "/api/agents/7")).toHaveLength(1);
    await waitFor(() => expect(screen.queryByRole("rowheader", { name: /^home-nas/ })).not.toBeInTheDocument());
  });
});
