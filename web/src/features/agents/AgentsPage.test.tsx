import { act, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Agent, AgentSpec } from "../../api/types";
import { FINGERPRINT, makeAgent, makeProbe } from "../../test/agentFixtures";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeLastUpdate, makeUpdateStatus, notSupported, updateAvailable } from "../../test/systemFixtures";

const nas = makeAgent();
const old = makeAgent({
  id: 4,
  name: "old-box",
  url: "https://old.lan:8443",
  version: "0.0.9",
  compatible: false,
  incompatibility: "The agent runs version 0.0.9; this central (0.1.0) talks to agents 0.1.x: update the agent",
  last_error: "The agent runs version 0.0.9; this central (0.1.0) talks to agents 0.1.x: update the agent",
});
const pi = makeAgent({
  id: 5,
  name: "pi",
  url: "https://pi.lan:8443",
  capabilities: ["stacks", "updates", "logs", "usage", "backups", "fleet"],
  last_error: "Agent 'pi' cannot be reached: connection refused",
});
const lab = makeAgent({ id: 6, name: "lab", url: "http://lab.lan:8080", fingerprint: null, enabled: false });

function routes(agents: Agent[] = [nas, old, pi, lab], extra: Routes = {}): Routes {
  return { ...signedInAs(adminUser), "GET /api/agents": agents, ...extra };
}

function rowOf(name: string): HTMLElement {
  const table = screen.getByRole("table", { name: "Agents" });
  const row = within(table)
    .getAllByRole("row")
    .find((r) => within(r).queryByRole("rowheader")?.textContent?.startsWith(name));
  if (!row) throw new Error(`no row for ${name}`);
  return row;
}

async function bodyOf(request: Request | undefined): Promise<AgentSpec> {
  return (await request?.clone().json()) as AgentSpec;
}

describe("the agents list", () => {
  it("shows each agent's status, version beside its compatibility, capabilities and pinned certificate", async () => {
    installFakeFetch(routes());
    renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    const nasRow = rowOf("nas");
    expect(nasRow).toHaveTextContent("https://nas.lan:8443");
    expect(within(nasRow).getByTestId("agent-status")).toHaveTextContent("Online");
    expect(nasRow).toHaveTextContent("0.1.0 Compatible");
    expect(within(within(nasRow).getByRole("list", { name: "Capabilities of nas" })).getAllByRole("listitem")).toHaveLength(9);
    expect(nasRow).toHaveTextContent(`Pinned: ${FINGERPRINT}`);
    expect(within(nasRow).getByRole("link", { name: "Stacks" })).toHaveAttribute("href", "/stacks?host=3");

    // An incompatible version is said as such, with its reason, not as an unreachable agent.
    const oldRow = rowOf("old-box");
    expect(within(oldRow).getByTestId("agent-status")).toHaveTextContent("Incompatible version");
    expect(oldRow).toHaveTextContent("0.0.9 Incompatible");
    expect(oldRow).toHaveTextContent("talks to agents 0.1.x: update the agent");
    expect(within(oldRow).queryByText(/Unreachable/)).not.toBeInTheDocument();

    const piRow = rowOf("pi");
    expect(within(piRow).getByTestId("agent-status")).toHaveTextContent("Unreachable");
    expect(piRow).toHaveTextContent("connection refused");
    expect(piRow).toHaveTextContent("Not offered: shell, files");

    const labRow = rowOf("lab");
    expect(within(labRow).getByTestId("agent-status")).toHaveTextContent("Disabled");
    expect(labRow).toHaveTextContent("Plain HTTP (no TLS)");
    expect(within(labRow).getByRole("button", { name: "Enable lab" })).toBeInTheDocument();
  });

  it("is read-only for users who are not admins", async () => {
    installFakeFetch({ ...routes(), ...signedInAs(viewerUser) });
    renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    expect(rowOf("nas")).toHaveTextContent("Online");
    expect(screen.queryByRole("button", { name: "Add an agent" })).not.toBeInTheDocument();
    expect(within(screen.getByRole("table", { name: "Agents" })).queryAllByRole("button")).toHaveLength(0);
  });

  it("says when there are none yet", async () => {
    installFakeFetch(routes([]));
    renderApp("/agents");

    expect(await screen.findByText(/No agents yet/)).toBeInTheDocument();
  });
});

describe("adding an agent", () => {
  it("tests an HTTPS agent, shows its version, capabilities and fingerprint, and saves only once the fingerprint is confirmed", async () => {
    document.cookie = "stackyard_csrf=c5rf";
    const created = makeAgent({ id: 9, name: "garage" });
    const fake = installFakeFetch(
      routes([], {
        "POST /api/agents/test": makeProbe(),
        "POST /api/agents": () => json(created, { status: 201 }),
      }),
    );
    const { user } = renderApp("/agents");

    await user.click(await screen.findByRole("button", { name: "Add an agent" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent" });
    await user.type(within(dialog).getByLabelText("Name"), "garage");
    await user.type(within(dialog).getByLabelText("URL"), "https://garage.lan:8443");
    await user.type(within(dialog).getByLabelText("Token"), "s3cret-token");
    const save = within(dialog).getByRole("button", { name: "Add the agent" });
    expect(save).toBeDisabled(); // the certificate is not confirmed yet

    await user.click(within(dialog).getByRole("button", { name: "Test" }));
    const result = await within(dialog).findByRole("status");
    expect(result).toHaveTextContent("Test passed: Agent 0.1.0 answered");
    expect(result).toHaveTextContent("Version 0.1.0, compatible with this Stackyard");
    expect(result).toHaveTextContent("offers stacks, updates, logs, shell, usage, files, backups, fleet");
    expect(result).toHaveTextContent(`Certificate fingerprint (SHA-256): ${FINGERPRINT}`);
    expect(await bodyOf(fake.calls("POST", "/api/agents/test")[0])).toEqual({
      name: "garage",
      url: "https://garage.lan:8443",
      token: "s3cret-token",
      enabled: true,
      fingerprint: null,
      ca_certificate: null,
    });
    expect(save).toBeDisabled();

    await user.click(within(dialog).getByRole("checkbox", { name: /fingerprint the agent printed when it started/ }));
    expect(save).toBeEnabled();
    await user.click(save);

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const [post] = fake.calls("POST", "/api/agents");
    expect(post?.headers.get("X-CSRF-Token")).toBe("c5rf");
    expect(await bodyOf(post)).toEqual({
      name: "garage",
      url: "https://garage.lan:8443",
      token: "s3cret-token",
      enabled: true,
      fingerprint: FINGERPRINT,
      ca_certificate: null,
    });
    expect(screen.getByRole("status")).toHaveTextContent("Agent garage saved.");
  });

  it("forgets the test and the confirmation when the address changes", async () => {
    installFakeFetch(routes([], { "POST /api/agents/test": makeProbe() }));
    const { user } = renderApp("/agents");

    await user.click(await screen.findByRole("button", { name: "Add an agent" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent" });
    await user.type(within(dialog).getByLabelText("Name"), "garage");
    await user.type(within(dialog).getByLabelText("URL"), "https://garage.lan:8443");
    await user.type(within(dialog).getByLabelText("Token"), "s3cret-token");
    await user.click(within(dialog).getByRole("button", { name: "Test" }));
    await user.click(await within(dialog).findByRole("checkbox", { name: /fingerprint the agent printed/ }));
    expect(within(dialog).getByRole("button", { name: "Add the agent" })).toBeEnabled();

    await user.type(within(dialog).getByLabelText("URL"), "0");

    expect(within(dialog).queryByRole("status")).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("checkbox", { name: /fingerprint the agent printed/ })).not.toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Add the agent" })).toBeDisabled();
  });

  it("shows an incompatible version as such, with its reason", async () => {
    installFakeFetch(
      routes([], {
        "POST /api/agents/test": makeProbe({
          ok: false,
          compatible: false,
          version: "1.2.0",
          incompatibility: "The agent runs version 1.2.0; this central (0.1.0) talks to agents 0.1.x: update the central",
          detail: "The agent runs version 1.2.0; this central (0.1.0) talks to agents 0.1.x: update the central",
        }),
      }),
    );
    const { user } = renderApp("/agents");

    await user.click(await screen.findByRole("button", { name: "Add an agent" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent" });
    await user.type(within(dialog).getByLabelText("Name"), "new");
    await user.type(within(dialog).getByLabelText("URL"), "https://new.lan:8443");
    await user.type(within(dialog).getByLabelText("Token"), "t");
    await user.click(within(dialog).getByRole("button", { name: "Test" }));

    const result = await within(dialog).findByRole("status");
    expect(result).toHaveTextContent("Incompatible version: The agent runs version 1.2.0");
    expect(result).toHaveTextContent("Version 1.2.0, which this Stackyard cannot use");
    expect(result).not.toHaveTextContent("Test failed");
    expect(within(dialog).queryByRole("alert")).not.toBeInTheDocument();
  });

  it("adds a plain HTTP agent without a certificate to confirm", async () => {
    const fake = installFakeFetch(
      routes([], { "POST /api/agents": () => json(makeAgent({ name: "lab", url: "http://lab.lan:8080" }), { status: 201 }) }),
    );
    const { user } = renderApp("/agents");

    await user.click(await screen.findByRole("button", { name: "Add an agent" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent" });
    await user.type(within(dialog).getByLabelText("Name"), "lab");
    await user.type(within(dialog).getByLabelText("URL"), "http://lab.lan:8080");
    await user.type(within(dialog).getByLabelText("Token"), "t0ken");
    expect(within(dialog).queryByRole("group", { name: "The agent's certificate" })).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "Add the agent" }));

    await waitFor(() => expect(fake.calls("POST", "/api/agents")).toHaveLength(1));
    expect(await bodyOf(fake.calls("POST", "/api/agents")[0])).toMatchObject({ fingerprint: null, ca_certificate: null });
  });

  it("trusts a CA certificate instead of pinning", async () => {
    const fake = installFakeFetch(routes([], { "POST /api/agents": () => json(makeAgent(), { status: 201 }) }));
    const { user } = renderApp("/agents");

    await user.click(await screen.findByRole("button", { name: "Add an agent" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent" });
    await user.type(within(dialog).getByLabelText("Name"), "nas");
    await user.type(within(dialog).getByLabelText("URL"), "https://nas.lan:8443");
    await user.type(within(dialog).getByLabelText("Token"), "t0ken");
    await user.click(within(dialog).getByRole("radio", { name: /Trust a CA certificate instead/ }));
    await user.type(within(dialog).getByLabelText("CA certificate (PEM)"), "-----BEGIN CERTIFICATE-----");
    await user.click(within(dialog).getByRole("button", { name: "Add the agent" }));

    await waitFor(() => expect(fake.calls("POST", "/api/agents")).toHaveLength(1));
    expect(await bodyOf(fake.calls("POST", "/api/agents")[0])).toMatchObject({
      fingerprint: null,
      ca_certificate: "-----BEGIN CERTIFICATE-----",
    });
  });

  it("shows the server's refusal", async () => {
    installFakeFetch(
      routes([], {
        "POST /api/agents/test": makeProbe(),
        "POST /api/agents": () =>
          json({ detail: "The agent presents a certificate with fingerprint AA:BB, not the one given" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/agents");

    await user.click(await screen.findByRole("button", { name: "Add an agent" }));
    const dialog = screen.getByRole("dialog", { name: "Add an agent" });
    await user.type(within(dialog).getByLabelText("Name"), "nas");
    await user.type(within(dialog).getByLabelText("URL"), "https://nas.lan:8443");
    await user.type(within(dialog).getByLabelText("Token"), "t0ken");
    await user.click(within(dialog).getByRole("button", { name: "Test" }));
    await user.click(await within(dialog).findByRole("checkbox", { name: /fingerprint the agent printed/ }));
    await user.click(within(dialog).getByRole("button", { name: "Add the agent" }));

    expect(await within(dialog).findByRole("alert")).toHaveTextContent("presents a certificate with fingerprint AA:BB");
  });
});

describe("managing an agent", () => {
  it("edits an agent: an empty token keeps the stored one", async () => {
    const fake = installFakeFetch(routes([nas], { "PUT /api/agents/3": () => json(makeAgent({ name: "nas-2" })) }));
    const { user } = renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    await user.click(screen.getByRole("button", { name: "Edit nas" }));
    const dialog = screen.getByRole("dialog", { name: "Edit nas" });
    expect(within(dialog).getByLabelText("Token")).toHaveValue("");
    expect(within(dialog).getByLabelText("Token")).toHaveAttribute("placeholder", "stored — leave empty to keep");
    expect(within(dialog).getByRole("button", { name: "Test" })).toBeDisabled();
    expect(dialog).toHaveTextContent(`Pinned: ${FINGERPRINT}`);
    await user.clear(within(dialog).getByLabelText("Name"));
    await user.type(within(dialog).getByLabelText("Name"), "nas-2");
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/agents/3")).toHaveLength(1));
    expect(await bodyOf(fake.calls("PUT", "/api/agents/3")[0])).toEqual({
      name: "nas-2",
      url: "https://nas.lan:8443",
      token: null,
      enabled: true,
      fingerprint: null,
      ca_certificate: null,
    });
  });

  it("asks for a new confirmed fingerprint when an HTTPS agent's address changes", async () => {
    const fake = installFakeFetch(
      routes([nas], { "POST /api/agents/test": makeProbe(), "PUT /api/agents/3": () => json(nas) }),
    );
    const { user } = renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    await user.click(screen.getByRole("button", { name: "Edit nas" }));
    const dialog = screen.getByRole("dialog", { name: "Edit nas" });
    await user.clear(within(dialog).getByLabelText("URL"));
    await user.type(within(dialog).getByLabelText("URL"), "https://nas2.lan:8443");
    expect(within(dialog).getByRole("button", { name: "Save changes" })).toBeDisabled();
    await user.type(within(dialog).getByLabelText("Token"), "t0ken");
    await user.click(within(dialog).getByRole("button", { name: "Test" }));
    await user.click(await within(dialog).findByRole("checkbox", { name: /fingerprint the agent printed/ }));
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/agents/3")).toHaveLength(1));
    expect(await bodyOf(fake.calls("PUT", "/api/agents/3")[0])).toMatchObject({
      url: "https://nas2.lan:8443",
      token: "t0ken",
      fingerprint: FINGERPRINT,
    });
  });

  it("disables an agent, keeping its token and certificate", async () => {
    const fake = installFakeFetch(routes([nas], { "PUT /api/agents/3": () => json(makeAgent({ enabled: false })) }));
    const { user } = renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    await user.click(screen.getByRole("button", { name: "Disable nas" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/agents/3")).toHaveLength(1));
    expect(await bodyOf(fake.calls("PUT", "/api/agents/3")[0])).toEqual({
      name: "nas",
      url: "https://nas.lan:8443",
      token: null,
      enabled: false,
    });
  });

  it("tests a saved agent and shows the result in its row", async () => {
    const fake = installFakeFetch(
      routes([nas], { "POST /api/agents/3/test": makeProbe({ ok: false, detail: "The agent refused the token" }) }),
    );
    const { user } = renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    await user.click(screen.getByRole("button", { name: "Test nas" }));

    expect(await within(rowOf("nas")).findByRole("status")).toHaveTextContent("Test failed: The agent refused the token");
    expect(fake.calls("POST", "/api/agents/3/test")).toHaveLength(1);
  });

  it("deletes an agent once confirmed", async () => {
    let agents = [nas, pi];
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/agents": () => json(agents),
      "DELETE /api/agents/3": () => {
        agents = [pi];
        return noContent();
      },
    });
    const { user } = renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    await user.click(screen.getByRole("button", { name: "Delete nas" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete agent nas?" });
    expect(confirm).toHaveTextContent("Nothing changes on the agent's host");
    expect(fake.calls("DELETE", "/api/agents/3")).toHaveLength(0);
    await user.click(within(confirm).getByRole("button", { name: "Delete the agent" }));

    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    expect(fake.calls("DELETE", "/api/agents/3")).toHaveLength(1);
    await waitFor(() => expect(screen.queryByRole("rowheader", { name: /^nas/ })).not.toBeInTheDocument());
    expect(screen.getByRole("status")).toHaveTextContent("Agent nas deleted.");
  });
});

describe("agents' versions and updates", () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const unreachable = () => json({ detail: "Agent 'pi' cannot be reached: connection refused" }, { status: 502 });

  it("shows each enabled agent's latest release beside its version, read through the proxy", async () => {
    const fake = installFakeFetch(
      routes([nas, pi, lab, makeAgent({ id: 7, name: "box", url: "http://box.lan:8080", fingerprint: null })], {
        "GET /api/agents/3/system/update": updateAvailable(),
        "GET /api/agents/5/system/update": unreachable,
        "GET /api/agents/7/system/update": notSupported(),
      }),
    );
    renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    await waitFor(() => expect(rowOf("nas")).toHaveTextContent("0.1.0 Compatiblelatest 0.2.0Update available"));
    expect(within(rowOf("nas")).getByRole("button", { name: "Update nas to 0.2.0" })).toBeInTheDocument();
    // Unreadable: a dash, no update.
    await waitFor(() => expect(rowOf("pi")).toHaveTextContent("latest —"));
    expect(within(rowOf("pi")).queryByRole("button", { name: /Update pi/ })).not.toBeInTheDocument();
    await waitFor(() => expect(rowOf("box")).toHaveTextContent("latest —"));
    // A disabled agent is not asked.
    expect(rowOf("lab")).not.toHaveTextContent("latest");
    expect(fake.calls("GET", "/api/agents/6/system/update")).toHaveLength(0);
  });

  it("offers no update to users who are not admins", async () => {
    installFakeFetch({ ...routes([nas], { "GET /api/agents/3/system/update": updateAvailable() }), ...signedInAs(viewerUser) });
    renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    await waitFor(() => expect(rowOf("nas")).toHaveTextContent("latest 0.2.0Update available"));
    expect(within(rowOf("nas")).queryByRole("button")).not.toBeInTheDocument();
  });

  it("updates an agent, then reads it until it answers the new version and refreshes its record", async () => {
    let agent: "old" | "restarting" | "new" = "old";
    let record = nas;
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/agents": () => json([record]),
      "GET /api/agents/3/system/update": () => {
        if (agent === "restarting") return unreachable();
        return json(agent === "new" ? makeUpdateStatus({ current_version: "0.2.0", latest_version: "0.2.0" }) : updateAvailable());
      },
      "POST /api/agents/3/system/update": () =>
        json({ from_version: "0.1.0", to_version: "0.2.0", helper: "agent-self-update-1" }, { status: 202 }),
      "POST /api/agents/3/test": () => {
        record = makeAgent({ version: "0.2.0" });
        return json(makeProbe({ version: "0.2.0", detail: "Agent 0.2.0 answered" }));
      },
    });
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });

    await screen.findByRole("table", { name: "Agents" });
    await user.click(await within(rowOf("nas")).findByRole("button", { name: "Update nas to 0.2.0" }));
    const confirm = screen.getByRole("alertdialog", { name: "Update nas to 0.2.0?" });
    expect(confirm).toHaveTextContent("cannot be reached for a few seconds");
    await user.click(within(confirm).getByRole("button", { name: "Update now" }));

    expect(await within(rowOf("nas")).findByRole("status")).toHaveTextContent("Updating to 0.2.0…");
    expect(fake.calls("POST", "/api/agents/3/system/update")).toHaveLength(1);
    expect(within(rowOf("nas")).queryByRole("button", { name: /Update nas/ })).not.toBeInTheDocument();

    agent = "restarting";
    await act(() => vi.advanceTimersByTimeAsync(4000));
    expect(within(rowOf("nas")).getByRole("status")).toHaveTextContent("Updating to 0.2.0…");
    expect(fake.calls("POST", "/api/agents/3/test")).toHaveLength(0);

    agent = "new";
    await act(() => vi.advanceTimersByTimeAsync(2000));
    await waitFor(() => expect(within(rowOf("nas")).getByRole("status")).toHaveTextContent("Updated to 0.2.0."));
    await waitFor(() => expect(fake.calls("POST", "/api/agents/3/test")).toHaveLength(1));
    await waitFor(() => expect(rowOf("nas")).toHaveTextContent("0.2.0 Compatible"));
    await waitFor(() => expect(rowOf("nas")).toHaveTextContent("latest 0.2.0"));
    expect(rowOf("nas")).not.toHaveTextContent("Update available");
  });

  it("says so when the agent's update failed", async () => {
    let failed = false;
    installFakeFetch(
      routes([nas], {
        "GET /api/agents/3/system/update": () =>
          json(
            updateAvailable({
              last_update: failed
                ? makeLastUpdate({ status: "failed", from_version: "0.1.0", to_version: "0.2.0", output: "pull access denied" })
                : null,
            }),
          ),
        "POST /api/agents/3/system/update": () =>
          json({ from_version: "0.1.0", to_version: "0.2.0", helper: "agent-self-update-1" }, { status: 202 }),
      }),
    );
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });

    await screen.findByRole("table", { name: "Agents" });
    await user.click(await within(rowOf("nas")).findByRole("button", { name: "Update nas to 0.2.0" }));
    await user.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Update now" }));
    await within(rowOf("nas")).findByRole("status");
    failed = true;
    await act(() => vi.advanceTimersByTimeAsync(2000));

    const alert = await within(rowOf("nas")).findByRole("alert");
    expect(alert).toHaveTextContent("The update to 0.2.0 failed: it still runs 0.1.0.");
    expect(alert).toHaveTextContent("pull access denied");
  });

  it("shows the agent's refusal", async () => {
    installFakeFetch(
      routes([nas], {
        "GET /api/agents/3/system/update": updateAvailable(),
        "POST /api/agents/3/system/update": () =>
          json({ detail: "The service was not started by docker compose" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/agents", { advanceTimers: vi.advanceTimersByTime });

    await screen.findByRole("table", { name: "Agents" });
    await user.click(await within(rowOf("nas")).findByRole("button", { name: "Update nas to 0.2.0" }));
    await user.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Update now" }));

    expect(await within(rowOf("nas")).findByRole("alert")).toHaveTextContent("The service was not started by docker compose");
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
  });
});

describe("when an agent was last seen", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("stays true as time passes, though the list does not change", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const seen = new Date(Date.now() - 10_000).toISOString();
    const gone = makeAgent({ id: 5, name: "pi", last_seen_at: seen, last_error: "Agent 'pi' is unreachable: connection refused at 10.0.0.5:8443: nothing listens there" });
    installFakeFetch(routes([gone]));
    renderApp("/agents");

    await screen.findByRole("table", { name: "Agents" });
    expect(rowOf("pi")).toHaveTextContent("Last seen just now");
    await act(async () => {
      await vi.advanceTimersByTimeAsync(3 * 60_000);
    });
    expect(rowOf("pi")).toHaveTextContent("Last seen 3 min ago");
  });
});
