import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ArchiveInfo } from "../../api/types";
import { makeAgent } from "../../test/agentFixtures";
import { openSource } from "../../test/fakeEventSource";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { installFakeXhr, pendingXhr } from "../../test/fakeXhr";
import { makeEntry, makeFile, makeFolder } from "../../test/fileFixtures";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeRun, makeStack, makeStackUpdate, makeSummary } from "../../test/stackFixtures";
import { filesInput, pick } from "../files/filesTesting";

const nas = makeAgent({ id: 3, name: "nas" });
const pi = makeAgent({
  id: 5,
  name: "pi",
  url: "https://pi.lan:8443",
  capabilities: ["stacks", "updates", "logs", "usage", "backups", "fleet"],
});
const off = makeAgent({ id: 6, name: "off", enabled: false });

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/agents": [nas, pi, off],
    "GET /api/stacks": [makeStack({ id: "local-only" })],
    "GET /api/stacks/updates": makeSummary([]),
    "GET /api/agents/3/stacks": [makeStack({ id: "on-nas" })],
    "GET /api/agents/3/stacks/updates": makeSummary([makeStackUpdate({ stack: "on-nas", has_update: true })]),
    ...extra,
  };
}

function paths(requests: Request[], method = "GET"): string[] {
  return requests.filter((r) => r.method === method).map((r) => new URL(r.url).pathname);
}

describe("the host switcher", () => {
  it("is not shown while there are no agents", async () => {
    installFakeFetch({ ...routes(), "GET /api/agents": [] });
    renderApp("/stacks");

    await screen.findByRole("link", { name: "local-only" });
    expect(screen.queryByRole("combobox", { name: "Host" })).not.toBeInTheDocument();
  });

  it("offers this host and the enabled agents, and moves the Stacks page to the chosen host", async () => {
    const fake = installFakeFetch(routes());
    const { user } = renderApp("/stacks");

    await screen.findByRole("link", { name: "local-only" });
    const host = await screen.findByRole("combobox", { name: "Host" });
    expect(within(host).getAllByRole("option").map((o) => o.textContent)).toEqual(["This host", "nas", "pi"]);
    expect(host).toHaveValue("");

    await user.selectOptions(host, "nas");

    expect(screen.getByTestId("location")).toHaveTextContent("/stacks");
    expect(await screen.findByRole("link", { name: "on-nas" })).toHaveAttribute("href", "/stacks/on-nas?host=3");
    expect(screen.queryByRole("link", { name: "local-only" })).not.toBeInTheDocument();
    expect(screen.getByRole("combobox", { name: "Host" })).toHaveValue("3");
    expect(screen.getByText(/On agent/)).toHaveTextContent("On agent nas at https://nas.lan:8443");
    // The agent's update summary, through the proxy: its stack shows the Update pill.
    expect(await screen.findByTitle("A newer image is available in the registry")).toHaveTextContent("Update");
    expect(paths(fake.requests)).toContain("/api/agents/3/stacks/updates");

    await user.selectOptions(screen.getByRole("combobox", { name: "Host" }), "This host");
    expect(await screen.findByRole("link", { name: "local-only" })).toHaveAttribute("href", "/stacks/local-only");
  });

  it("keeps the host in the address: a reload shows the agent's stacks, none of this host's", async () => {
    const fake = installFakeFetch(routes());
    renderApp("/stacks?host=3");

    expect(await screen.findByRole("link", { name: "on-nas" })).toBeInTheDocument();
    expect(await screen.findByRole("combobox", { name: "Host" })).toHaveValue("3");
    expect(paths(fake.requests)).not.toContain("/api/stacks");
    expect(paths(fake.requests)).not.toContain("/api/stacks/updates");
  });

  it("says a feature the agent lacks is not available there, and asks it nothing", async () => {
    const fake = installFakeFetch(routes());
    renderApp("/files?host=5");

    expect(await screen.findByText(/Not available on pi/)).toHaveTextContent(
      "Not available on pi: its agent (version 0.1.0) does not offer the file browser.",
    );
    expect(paths(fake.requests).filter((p) => p.includes("/files"))).toEqual([]);
  });

  it("says a disabled agent cannot be used", async () => {
    installFakeFetch(routes());
    renderApp("/backups?host=6");

    expect(await screen.findByText(/off is disabled/)).toBeInTheDocument();
  });
});

describe("a stack on an agent", () => {
  it("reads it, runs its actions and follows its run through the proxy, and links within the host", async () => {
    const fake = installFakeFetch(
      routes({
        "GET /api/agents/3/stacks/web": makeDetail(),
        "GET /api/agents/3/stacks/web/run": () => json({ detail: "No run" }, { status: 404 }),
        "GET /api/agents/3/usage": {
          containers: [],
          stacks: {},
          total: { containers: 0, cpu_percent: 0, memory_used: 0, network_rx: 0, network_tx: 0, block_read: 0, block_write: 0 },
        },
        "POST /api/agents/3/stacks/web/actions/start": () => json(makeRun({ stack: "web" }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/stacks/web?host=3");

    await screen.findByRole("table", { name: "Services" });
    expect(within(screen.getByRole("main")).getByRole("link", { name: "Stacks" })).toHaveAttribute("href", "/stacks?host=3");
    expect(screen.getByRole("link", { name: "Shell in web-app-1" })).toHaveAttribute(
      "href",
      "/stacks/web/shell/web-app-1?host=3",
    );
    await waitFor(() => expect(openSource("/logs")?.url).toBe("/api/agents/3/stacks/web/logs"));

    const updateReads = fake.calls("GET", "/api/agents/3/stacks/updates").length;
    const actions = screen.getByRole("group", { name: "Actions for web" });
    await user.click(within(actions).getByRole("button", { name: "Start" }));

    await waitFor(() => expect(fake.calls("POST", "/api/agents/3/stacks/web/actions/start")).toHaveLength(1));
    await waitFor(() => expect(openSource()?.url).toBe("/api/agents/3/stacks/web/run/events"));
    // After an action, the host's update summary is read again.
    await waitFor(() => expect(fake.calls("GET", "/api/agents/3/stacks/updates").length).toBeGreaterThan(updateReads));
    expect(paths(fake.requests).filter((p) => p.startsWith("/api/stacks"))).toEqual([]);
  });

  it("goes to the chosen host's stacks when the host is switched", async () => {
    installFakeFetch(routes({ "GET /api/agents/3/stacks/web": makeDetail() }));
    const { user } = renderApp("/stacks/web?host=3");

    await screen.findByRole("heading", { level: 1, name: "web" });
    await user.selectOptions(await screen.findByRole("combobox", { name: "Host" }), "This host");

    expect(await screen.findByRole("link", { name: "local-only" })).toBeInTheDocument();
    expect(screen.getByTestId("location")).toHaveTextContent(/^\/stacks$/);
  });
});

describe("files and backups on an agent", () => {
  it("lists, links and uploads in the agent's stacks folder", async () => {
    installFakeXhr();
    const fake = installFakeFetch(
      routes({
        "GET /api/agents/3/files": makeFolder("web", [makeEntry({ path: "web/conf", type: "dir" }), makeEntry({ path: "web/compose.yaml" })]),
        "POST /api/agents/3/files/exists": { existing: [] },
      }),
    );
    renderApp("/files?path=web&host=3");

    const table = await screen.findByRole("table", { name: "Files" });
    expect(within(table).getByRole("link", { name: "conf" })).toHaveAttribute("href", "/files?path=web/conf&host=3");
    expect(within(table).getByRole("link", { name: "compose.yaml" })).toHaveAttribute(
      "href",
      "/files?path=web&edit=web/compose.yaml&host=3",
    );
    const crumbs = screen.getByRole("navigation", { name: "Breadcrumb" });
    expect(within(crumbs).getByRole("link", { name: "Stacks folder" })).toHaveAttribute("href", "/files?host=3");
    expect(new URL(fake.calls("GET", "/api/agents/3/files")[0]?.url ?? "").searchParams.get("path")).toBe("web");

    pick(filesInput(), [makeFile("notes.txt", 5)]);
    await waitFor(() => expect(pendingXhr()).toBeDefined());
    expect(pendingXhr()?.pathname).toBe("/api/agents/3/files/upload");
  });

  it("lists the agent's archives, downloads them through the proxy, and pushes one through the central", async () => {
    const archive: ArchiveInfo = {
      name: "web--nas--20261123T150405Z.tar",
      size: 1000,
      stack_id: "web",
      host: "nas",
      created_at: "2026-11-23T15:04:05Z",
      format_version: 2,
      assets: [],
      error: null,
    };
    const offsite = {
      id: 4,
      name: "offsite",
      settings: { type: "sftp", host: "backup.example", port: 22, username: "u", folder: "" },
      secrets_set: ["password"],
      host_key_fingerprint: null,
      created_at: "2026-11-01T10:00:00Z",
      updated_at: null,
    };
    const fake = installFakeFetch(
      routes({
        "GET /api/agents/3/backups": [archive],
        "GET /api/destinations": [offsite],
        [`POST /api/agents/3/backups/${archive.name}/push`]: () =>
          json(makeRun({ id: "t1", stack: "web", action: "push" }, { mode: "transfer" }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/backups?host=3");

    const table = await screen.findByRole("table", { name: "Archives" });
    expect(within(table).getByRole("link", { name: "Download" })).toHaveAttribute(
      "href",
      `/api/agents/3/backups/${archive.name}/download`,
    );
    expect(within(table).getByRole("link", { name: "web" })).toHaveAttribute("href", "/stacks/web?host=3");
    expect(screen.getByText(/Archives kept on nas/)).toBeInTheDocument();

    await user.click(within(table).getByRole("button", { name: "Push…" }));
    const dialog = await screen.findByRole("dialog", { name: `Push ${archive.name}` });
    await within(dialog).findByRole("combobox", { name: "Destination" });
    await user.click(within(dialog).getByRole("button", { name: "Push" }));

    const console = await screen.findByRole("region", { name: "Deploy web" });
    expect(await fake.calls("POST", `/api/agents/3/backups/${archive.name}/push`)[0]?.json()).toEqual({
      destination_id: 4,
    });
    // The central runs the transfer: its run is followed there, not the agent's stack run.
    await waitFor(() => expect(openSource()?.url).toBe("/api/agents/3/transfers/web/run/events"));
    await openSource()?.emit(
      "state",
      makeRun({ id: "t1", stack: "web", action: "push", status: "succeeded" }, { mode: "transfer", percent: 100 }),
    );
    expect(within(console).getByRole("status")).toHaveTextContent("push succeeded");
    expect(fake.calls("GET", "/api/agents/3/stacks/web/run")).toHaveLength(0);
  });
});
