import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Stack } from "../../api/types";
import { codeEditorIn, setText, textOf, typeAtEnd } from "../../test/codeEditor";
import { installFakeEventSource, openSource } from "../../test/fakeEventSource";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { makeAgent } from "../../test/agentFixtures";
import { renderApp } from "../../test/renderApp";
import {
  makeDetail,
  makeImageUpdate,
  makeRun,
  makeStack,
  makeStackUpdate,
  makeSummary,
} from "../../test/stackFixtures";
import { stackUpdatesQueryOptions, stacksQueryOptions } from "./queries";
import { biggestJump } from "./UpdatePill";

const stacks: Stack[] = [
  makeStack({ id: "web" }),
  makeStack({
    id: "db",
    state: "partial",
    services: [
      { name: "pg", image: "postgres:16", running: true, containers: [] },
      { name: "backup", image: "busybox", running: false, containers: [] },
    ],
  }),
  makeStack({ id: "broken", state: "invalid", error: "services.app.image must be a string", services: [] }),
  makeStack({ id: "idle", state: "stopped", busy: "update", services: [] }),
];

const summary = makeSummary(
  [
    makeStackUpdate({ stack: "web", has_update: true }),
    makeStackUpdate({ stack: "db", has_update: false }),
    makeStackUpdate({ stack: "broken", has_update: false, images: [] }),
    makeStackUpdate({ stack: "idle", has_update: false }),
  ],
  "2025-03-01T09:00:00Z",
);

function stackRoutes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/stacks": stacks,
    "GET /api/stacks/updates": summary,
    ...extra,
  };
}

function rowOf(name: string): HTMLElement {
  const link = screen.getByRole("link", { name });
  const row = link.closest("tr");
  if (!row) throw new Error(`no row for ${name}`);
  return row;
}

describe("stacks list", () => {
  it("lists stacks with their state, services and an Update pill only where an image is newer", async () => {
    installFakeFetch(stackRoutes());
    renderApp("/stacks");

    expect(await screen.findByRole("heading", { level: 1, name: "Stacks" })).toBeInTheDocument();
    const table = await screen.findByRole("table", { name: "Stacks" });
    // Sorted by name; a published port opens the service on this host, in a new tab.
    expect(within(table).getAllByRole("link").map((a) => [a.textContent, a.getAttribute("href")])).toEqual([
      ["broken", "/stacks/broken"],
      ["db", "/stacks/db"],
      ["idle", "/stacks/idle"],
      ["web", "/stacks/web"],
      ["0.0.0.0:8080->80/tcp", "http://localhost:8080"],
    ]);
    expect(within(rowOf("web")).getByRole("link", { name: "0.0.0.0:8080->80/tcp" })).toHaveAttribute("target", "_blank");

    expect(await within(rowOf("web")).findByText("Update", { selector: ".pill" })).toBeInTheDocument();
    for (const name of ["db", "broken", "idle"]) {
      expect(within(rowOf(name)).queryByText("Update", { selector: ".pill" })).not.toBeInTheDocument();
    }

    expect(within(rowOf("web")).getByText("Running")).toBeInTheDocument();
    expect(within(rowOf("web")).getByText("1 of 1 running")).toBeInTheDocument();
    expect(within(rowOf("db")).getByText("Partly running")).toBeInTheDocument();
    expect(within(rowOf("db")).getByText("1 of 2 running")).toBeInTheDocument();
    expect(within(rowOf("broken")).getByText("Invalid")).toHaveAttribute("title", "services.app.image must be a string");
    expect(within(rowOf("broken")).getByText("services.app.image must be a string")).toBeInTheDocument();
    expect(within(rowOf("idle")).getByText("Stopped")).toBeInTheDocument();

    // Busy: an indicator, and no action can start.
    expect(within(rowOf("idle")).getByRole("status")).toHaveTextContent("update in progress…");
    const idleActions = within(rowOf("idle")).getByRole("group", { name: "Actions for idle" });
    for (const button of within(idleActions).getAllByRole("button")) expect(button).toBeDisabled();
    // The Update button stands out where an update is available.
    const webActions = within(rowOf("web")).getByRole("group", { name: "Actions for web" });
    expect(within(webActions).getByRole("button", { name: "Update" })).toHaveClass("primary");
    expect(screen.getByTestId("last-check")).toHaveTextContent("Last checked");
  });

  it("polls the update summary every 60 seconds and the stacks every 5, on every host", () => {
    for (const host of [null, 3]) {
      expect(stackUpdatesQueryOptions(host).refetchInterval).toBe(60_000);
      expect(stacksQueryOptions(host).refetchInterval).toBe(5_000);
    }
    expect(stackUpdatesQueryOptions(3).queryKey).toEqual(["stack-updates", 3]);
    expect(stackUpdatesQueryOptions(null).queryKey).toEqual(["stack-updates", "local"]);
  });

  it("starts an action: POSTs to its URL, follows the run and refreshes the stacks and updates", async () => {
    document.cookie = "stackyard_csrf=tok3n";
    installFakeEventSource();
    let started = false;
    const fake = installFakeFetch(
      stackRoutes({
        "GET /api/stacks": () =>
          json(started ? stacks.map((s) => (s.id === "db" ? { ...s, busy: "start" } : s)) : stacks),
        "POST /api/stacks/:id/actions/:action": (_req, params) => {
          started = true;
          return json(makeRun({ stack: params.id, action: params.action }, { percent: 0 }), { status: 202 });
        },
      }),
    );
    const { user } = renderApp("/stacks");

    await screen.findByRole("table", { name: "Stacks" });
    const listReads = fake.calls("GET", "/api/stacks").length;
    const updateReads = fake.calls("GET", "/api/stacks/updates").length;
    const actions = within(rowOf("db")).getByRole("group", { name: "Actions for db" });
    await user.click(within(actions).getByRole("button", { name: "Start" }));

    await waitFor(() => expect(fake.calls("POST", "/api/stacks/db/actions/start")).toHaveLength(1));
    expect(fake.calls("POST", "/api/stacks/db/actions/start")[0]?.headers.get("X-CSRF-Token")).toBe("tok3n");
    await waitFor(() => expect(fake.calls("GET", "/api/stacks").length).toBeGreaterThan(listReads));
    await waitFor(() => expect(fake.calls("GET", "/api/stacks/updates").length).toBeGreaterThan(updateReads));

    // The run's console opens and follows the run.
    const consoleRegion = await screen.findByRole("region", { name: "Deploy db" });
    expect(within(consoleRegion).getByRole("status")).toHaveTextContent("Running start…");
    await waitFor(() => expect(openSource()?.url).toBe("/api/stacks/db/run/events"));
    await openSource()?.emit("state", makeRun({ stack: "db", status: "succeeded", exit_code: 0 }, { percent: 100 }));
    expect(within(consoleRegion).getByRole("progressbar", { name: "Deploy progress" })).toHaveAttribute(
      "aria-valuenow",
      "100",
    );
    await user.click(within(consoleRegion).getByRole("button", { name: "Close console of db" }));
    expect(screen.queryByRole("region", { name: "Deploy db" })).not.toBeInTheDocument();
  });

  it("asks before Down, then POSTs it", async () => {
    installFakeEventSource();
    const fake = installFakeFetch(
      stackRoutes({
        "POST /api/stacks/:id/actions/:action": (_req, params) =>
          json(makeRun({ stack: params.id, action: params.action }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/stacks");

    await screen.findByRole("table", { name: "Stacks" });
    const actions = within(rowOf("web")).getByRole("group", { name: "Actions for web" });
    await user.click(within(actions).getByRole("button", { name: "Down" }));
    expect(fake.calls("POST", "/api/stacks/web/actions/down")).toHaveLength(0);
    expect(within(actions).getByRole("group", { name: "Down" })).toHaveTextContent(
      "Removes the stack's containers and its networks; its volumes and files stay.",
    );
    await user.click(within(actions).getByRole("button", { name: "Confirm" }));
    await waitFor(() => expect(fake.calls("POST", "/api/stacks/web/actions/down")).toHaveLength(1));
  });

  it("shows the server's detail when the stack is busy (409)", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes({
        "POST /api/stacks/web/actions/restart": () =>
          json({ detail: "Stack 'web' is busy (update in progress)" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/stacks");

    await screen.findByRole("table", { name: "Stacks" });
    const row = rowOf("web");
    await user.click(within(row).getByRole("button", { name: "Restart" }));
    expect(await within(row).findByRole("alert")).toHaveTextContent("Stack 'web' is busy (update in progress)");
    expect(screen.queryByRole("region", { name: "Deploy web" })).not.toBeInTheDocument();
  });

  it("checks for updates now: Checking… while it runs, then the new check time and pills", async () => {
    let answer: (response: Response) => void = () => undefined;
    const fake = installFakeFetch(
      stackRoutes({
        "GET /api/stacks/updates": makeSummary([makeStackUpdate({ stack: "web" })], null),
        "POST /api/stacks/updates/check": () =>
          new Promise<Response>((resolve) => {
            answer = resolve;
          }),
      }),
    );
    const { user } = renderApp("/stacks");

    await screen.findByRole("table", { name: "Stacks" });
    expect(await screen.findByText("Images not checked yet")).toBeInTheDocument();
    expect(within(rowOf("db")).queryByText("Update", { selector: ".pill" })).not.toBeInTheDocument();

    await user.click(screen.getByRole("button", { name: "Check now" }));
    expect(await screen.findByRole("button", { name: "Checking…" })).toBeDisabled();
    await waitFor(() => expect(fake.calls("POST", "/api/stacks/updates/check")).toHaveLength(1));
    answer(json(makeSummary([makeStackUpdate({ stack: "db", has_update: true })], "2025-03-02T08:30:00Z")));

    expect(await screen.findByRole("button", { name: "Check now" })).toBeEnabled();
    const lastCheck = screen.getByTestId("last-check");
    expect(lastCheck).toHaveTextContent("Last checked");
    expect(within(lastCheck).getByText(/2025|Mar/)).toHaveAttribute("datetime", "2025-03-02T08:30:00Z");
    expect(within(rowOf("db")).getByText("Update", { selector: ".pill" })).toBeInTheDocument();
  });
});

describe("update pills and registry quotas", () => {
  const rolledBack = {
    at: "2025-03-01T04:00:00Z",
    outcome: "rolled_back" as const,
    detail: "rolled back: app is unhealthy",
    by: "auto-update",
    logs: [],
  };

  it("says the last try rolled back where the update is still there, with the biggest version step", async () => {
    installFakeFetch(
      stackRoutes({
        "GET /api/stacks/updates": makeSummary([
          makeStackUpdate({
            stack: "web",
            has_update: true,
            last_update: rolledBack,
            images: [
              makeImageUpdate({ state: "update_available", jump: "patch" }),
              makeImageUpdate({ service: "side", state: "update_available", jump: "major" }),
            ],
          }),
          // Rolled back, then updated by hand since: nothing left to say.
          makeStackUpdate({
            stack: "db",
            has_update: false,
            last_update: { ...rolledBack, outcome: "rollback_failed" },
          }),
          makeStackUpdate({
            stack: "idle",
            has_update: true,
            last_update: { ...rolledBack, outcome: "updated", detail: null },
          }),
        ]),
      }),
    );
    renderApp("/stacks");

    const web = await within(await screen.findByRole("table", { name: "Stacks" })).findByRole("row", { name: /web/ });
    const pill = await within(web).findByText("Update: last try rolled back");
    expect(pill).toHaveClass("pill", "tone-warn");
    expect(within(web).getByTestId("jump")).toHaveTextContent("major");
    expect(within(rowOf("db")).queryByText(/Update/, { selector: ".pill" })).not.toBeInTheDocument();
    expect(within(rowOf("idle")).getByText("Update", { selector: ".pill" })).toHaveClass("pill-update");
    expect(within(rowOf("idle")).queryByTestId("jump")).not.toBeInTheDocument();

    // No blue Update where the last try was rolled back: said, and when.
    const update = within(within(web).getByRole("group", { name: "Actions for web" })).getByRole("button", {
      name: "Update",
    });
    expect(update).not.toHaveClass("primary");
    expect(update.title).toMatch(/^The last update \(.+\) failed its health gate and was rolled back: app is unhealthy\. Update/);
    expect(within(web).getByTestId("rolled-back-note")).toHaveTextContent(/^Last update rolled back .+ ago\.$/);
    const idle = within(rowOf("idle")).getByRole("group", { name: "Actions for idle" });
    expect(within(idle).getByRole("button", { name: "Update" })).toHaveClass("primary");
    expect(within(rowOf("idle")).queryByTestId("rolled-back-note")).not.toBeInTheDocument();
  });

  it("lists each registry's quota, and the ones the background check waits for", async () => {
    installFakeFetch(
      stackRoutes({
        "GET /api/stacks/updates": makeSummary([], "2025-03-01T09:00:00Z", [
          {
            registry: "registry-1.docker.io",
            limit: 100,
            remaining: 87,
            window_seconds: 21600,
            seen_at: "2025-03-01T09:00:00Z",
            waiting: false,
          },
          { registry: "ghcr.io", limit: 60, remaining: 2, window_seconds: 3600, seen_at: null, waiting: true },
        ]),
      }),
    );
    renderApp("/stacks");

    const list = await screen.findByRole("list", { name: "Registry pull quotas:" });
    const items = within(list).getAllByRole("listitem");
    expect(items.map((li) => li.textContent)).toEqual([
      "registry-1.docker.io: 87/100 left per 6 h",
      "ghcr.io: 2/60 left per 1 h · waiting for the quota (the background check leaves it alone until its window passes)",
    ]);
    expect(items[1]).toHaveClass("warn-text");
  });

  it("shows no quotas when no registry announced one", async () => {
    installFakeFetch(stackRoutes());
    renderApp("/stacks");

    await waitFor(() => expect(screen.getByTestId("last-check")).toHaveTextContent("Last checked"));
    expect(screen.queryByRole("list", { name: /quotas/ })).not.toBeInTheDocument();
  });

  it("takes the biggest version step of a stack's images", () => {
    expect(biggestJump([])).toBeNull();
    expect(biggestJump([makeImageUpdate()])).toBeNull();
    expect(
      biggestJump([makeImageUpdate({ jump: "minor" }), makeImageUpdate({ jump: "patch" }), makeImageUpdate()]),
    ).toBe("minor");
  });
});

describe("search and sort", () => {
  function names(): string[] {
    const table = screen.getByRole("table", { name: "Stacks" });
    return within(table)
      .getAllByRole("link")
      .filter((a) => a.getAttribute("href")?.startsWith("/stacks/"))
      .map((a) => a.textContent ?? "");
  }

  it("finds stacks by name, service and image", async () => {
    installFakeFetch(stackRoutes());
    const { user } = renderApp("/stacks");
    await screen.findByRole("table", { name: "Stacks" });
    const search = screen.getByRole("searchbox", { name: "Search" });

    await user.type(search, "postgres");
    expect(names()).toEqual(["db"]);
    await user.clear(search);
    await user.type(search, "BACKUP");
    expect(names()).toEqual(["db"]);
    await user.clear(search);
    await user.type(search, "nginx");
    expect(names()).toEqual(["web"]);
    await user.clear(search);
    await user.type(search, "we");
    expect(names()).toEqual(["web"]);
    expect(screen.getByTestId("location")).toHaveTextContent("/stacks");
    await user.type(search, "zzz");
    expect(screen.queryByRole("table", { name: "Stacks" })).not.toBeInTheDocument();
    expect(screen.getByText("No stack matches “wezzz”.")).toBeInTheDocument();
  });

  it("sorts by name, state and update available", async () => {
    installFakeFetch(stackRoutes({ "GET /api/stacks/updates": makeSummary([makeStackUpdate({ stack: "idle", has_update: true })]) }));
    const { user } = renderApp("/stacks");
    await screen.findByRole("table", { name: "Stacks" });
    expect(names()).toEqual(["broken", "db", "idle", "web"]);

    const sort = screen.getByRole("combobox", { name: "Sort by" });
    await user.selectOptions(sort, "State");
    expect(names()).toEqual(["web", "db", "idle", "broken"]);
    await user.selectOptions(sort, "Update available");
    await waitFor(() => expect(names()).toEqual(["idle", "broken", "db", "web"]));
  });
});

describe("new stack", () => {
  it("shows compose's error detail when the server refuses the stack", async () => {
    const fake = installFakeFetch(
      stackRoutes({
        "POST /api/stacks": () =>
          json({ detail: "services.app Additional property imagee is not allowed" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/stacks");

    await user.click(await screen.findByRole("button", { name: "New stack" }));
    const form = screen.getByRole("form", { name: "New stack" });
    await user.type(within(form).getByLabelText("Name"), "My App");
    const editor = await codeEditorIn(form, "Compose file");
    setText(editor, "services:\n  app:\n    imagee: x");
    await user.click(within(form).getByRole("button", { name: "Create stack" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent(
      "services.app Additional property imagee is not allowed",
    );
    expect(textOf(editor)).toBe("services:\n  app:\n    imagee: x");
    expect(await fake.calls("POST", "/api/stacks")[0]?.json()).toEqual({
      name: "My App",
      compose: "services:\n  app:\n    imagee: x",
      env: "",
    });
  });

  it("creates the stack and opens it", async () => {
    const created = makeDetail({ id: "my-app", state: "stopped" });
    installFakeEventSource();
    installFakeFetch(
      stackRoutes({
        "POST /api/stacks": () => json(created, { status: 201 }),
        "GET /api/stacks/my-app": created,
        "GET /api/stacks/my-app/run": () => json({ detail: "No run" }, { status: 404 }),
      }),
    );
    const { user } = renderApp("/stacks");

    await user.click(await screen.findByRole("button", { name: "New stack" }));
    const form = screen.getByRole("form", { name: "New stack" });
    await user.type(within(form).getByLabelText("Name"), "My App");
    setText(await codeEditorIn(form, "Compose file"), "services:\n  app:\n    image: busybox");
    setText(await codeEditorIn(form, ".env (optional)"), "A=1");
    await user.click(within(form).getByRole("button", { name: "Create stack" }));

    expect(await screen.findByRole("heading", { level: 1, name: "my-app" })).toBeInTheDocument();
    expect(screen.getByTestId("location")).toHaveTextContent("/stacks/my-app");
  });
});

describe("new stack in the code editor", () => {
  it("opens with an empty editor, offers an example as real text, and asks for a compose file", async () => {
    const fake = installFakeFetch(stackRoutes());
    const { user } = renderApp("/stacks?new=1"); // the empty dashboard's "New stack"

    const form = await screen.findByRole("form", { name: "New stack" });
    const editor = await codeEditorIn(form, "Compose file");
    expect(textOf(editor)).toBe("");
    await user.type(within(form).getByLabelText("Name"), "web");
    await user.click(within(form).getByRole("button", { name: "Create stack" }));
    expect(within(form).getByRole("alert")).toHaveTextContent("Write the compose file first");
    expect(fake.calls("POST", "/api/stacks")).toHaveLength(0);

    await user.click(within(form).getByRole("button", { name: "start from an example" }));
    expect(textOf(editor)).toContain("image: nginx:1.27");
    expect(within(form).queryByRole("alert")).toBeNull();
  });
});

describe("new stack from a docker run command", () => {
  const converted = {
    compose: "services:\n  web:\n    image: nginx:1.27\n    container_name: web\n",
    service: "web",
    notes: ["--rm: compose removes a service's container with `down`"],
    warnings: [],
  };

  it("fills the compose file and the name, says what it left out, and asks before replacing", async () => {
    const fake = installFakeFetch(stackRoutes({ "POST /api/stacks/convert": converted }));
    const { user } = renderApp("/stacks");

    await user.click(await screen.findByRole("button", { name: "New stack" }));
    const form = screen.getByRole("form", { name: "New stack" });
    await user.click(within(form).getByText("From a docker run command"));
    await user.type(within(form).getByLabelText("docker run command"), "docker run --rm --name web nginx:1.27");
    await user.click(within(form).getByRole("button", { name: "Convert to compose" }));

    const editor = await codeEditorIn(form, "Compose file");
    await waitFor(() => expect(textOf(editor)).toBe(converted.compose));
    expect(within(form).getByLabelText("Name")).toHaveValue("web");
    expect(within(form).getByRole("list", { name: "Left out" })).toHaveTextContent("Left out --rm");
    expect(await fake.calls("POST", "/api/stacks/convert")[0]?.json()).toEqual({
      command: "docker run --rm --name web nginx:1.27",
    });

    // A compose file the user changed is replaced only when they say so.
    typeAtEnd(editor, "# mine");
    await user.click(within(form).getByRole("button", { name: "Convert to compose" }));
    const ask = await screen.findByRole("alertdialog", { name: "Replace the compose file?" });
    await user.click(within(ask).getByRole("button", { name: "Cancel" }));
    expect(textOf(editor)).toBe(`${converted.compose}# mine`);
    await user.click(within(form).getByRole("button", { name: "Convert to compose" }));
    await user.click(within(await screen.findByRole("alertdialog")).getByRole("button", { name: "Replace" }));
    expect(textOf(editor)).toBe(converted.compose);
  });

  it("names each option that gives the container the host, before the stack is made", async () => {
    installFakeFetch(
      stackRoutes({
        "POST /api/stacks/convert": {
          compose: "services:\n  alpine:\n    image: alpine\n    privileged: true\n",
          service: "alpine",
          notes: [],
          warnings: [
            "--privileged: every capability and every device of the host: root on it",
            "-v /:/host: the host's /: the container reads and writes it",
          ],
        },
      }),
    );
    const { user } = renderApp("/stacks");

    await user.click(await screen.findByRole("button", { name: "New stack" }));
    const form = screen.getByRole("form", { name: "New stack" });
    await user.click(within(form).getByText("From a docker run command"));
    await user.type(within(form).getByLabelText("docker run command"), "docker run --privileged -v /:/host alpine");
    await user.click(within(form).getByRole("button", { name: "Convert to compose" }));

    const warning = await within(form).findByRole("alert");
    expect(warning).toHaveTextContent("This gives the container the host (root on it, as a rule)");
    const items = within(within(warning).getByRole("list", { name: "Gives the container the host" })).getAllByRole(
      "listitem",
    );
    expect(items.map((item) => item.textContent)).toEqual([
      "--privileged: every capability and every device of the host: root on it",
      "-v /:/host: the host's /: the container reads and writes it",
    ]);
    expect(textOf(await codeEditorIn(form, "Compose file"))).toBe(
      "services:\n  alpine:\n    image: alpine\n    privileged: true\n",
    );
  });

  it("shows why a command cannot be converted and changes nothing", async () => {
    installFakeFetch(
      stackRoutes({
        "POST /api/stacks/convert": () =>
          json({ detail: "Not a docker run command this can convert: unrecognized arguments: --x" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/stacks");

    await user.click(await screen.findByRole("button", { name: "New stack" }));
    const form = screen.getByRole("form", { name: "New stack" });
    await user.click(within(form).getByText("From a docker run command"));
    await user.type(within(form).getByLabelText("docker run command"), "docker run --x y");
    await user.click(within(form).getByRole("button", { name: "Convert to compose" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent("unrecognized arguments: --x");
    expect(textOf(await codeEditorIn(form, "Compose file"))).toBe("");
    expect(within(form).getByLabelText("Name")).toHaveValue("");
  });
});

describe("stacks of an agent that is offline", () => {
  it("says why once, with one Retry", async () => {
    const offline = () => json({ detail: "Agent 'nas' is unreachable: cannot connect to nas.lan:8443" }, { status: 502 });
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/agents": [makeAgent({ id: 3 })],
      "GET /api/agents/3/stacks": offline,
      "GET /api/agents/3/stacks/updates": offline,
    });
    renderApp("/stacks?host=3");

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Agent 'nas' is unreachable");
    await waitFor(() => expect(screen.getAllByRole("alert")).toHaveLength(1));
    expect(screen.getAllByRole("button", { name: "Retry" })).toHaveLength(1);
  });
});

describe("stacks for an operator", () => {
  it("has actions and Check now, but no New stack", async () => {
    installFakeFetch({ ...stackRoutes(), ...signedInAs(operatorUser) });
    renderApp("/stacks");

    await screen.findByRole("table", { name: "Stacks" });
    expect(screen.queryByRole("button", { name: "New stack" })).not.toBeInTheDocument();
    expect(within(rowOf("web")).getByRole("group", { name: "Actions for web" })).toBeInTheDocument();
    expect(within(rowOf("web")).getByRole("button", { name: "Start" })).toBeEnabled();
    expect(within(rowOf("web")).getByRole("button", { name: "Down" })).toBeEnabled();
    expect(screen.getByRole("button", { name: "Check now" })).toBeEnabled();
  });
});

describe("stacks for a viewer", () => {
  it("lists the stacks with their state and updates but offers no action, Check now or New stack", async () => {
    installFakeFetch({ ...stackRoutes(), ...signedInAs(viewerUser) });
    renderApp("/stacks");

    const table = await screen.findByRole("table", { name: "Stacks" });
    expect(within(rowOf("web")).getByText("Running")).toBeInTheDocument();
    expect(await within(rowOf("web")).findByText("Update", { selector: ".pill" })).toBeInTheDocument();
    expect(screen.getByTestId("last-check")).toHaveTextContent("Last checked");
    expect(within(rowOf("idle")).getByRole("status")).toHaveTextContent("update in progress…");

    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual([
      "Name",
      "State",
      "Services",
      "Ports",
    ]);
    expect(screen.queryByRole("group", { name: /^Actions for/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Check now" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "New stack" })).not.toBeInTheDocument();
    // Nothing on the page can change anything (the menu button only shows the navigation).
    expect(screen.getAllByRole("button").map((b) => b.textContent)).toEqual(["☰ Menu", "Sign out"]);
  });

  it("says how stacks appear without pointing at New stack", async () => {
    installFakeFetch({ ...stackRoutes({ "GET /api/stacks": [] }), ...signedInAs(viewerUser) });
    renderApp("/stacks");

    expect(await screen.findByText(/No stacks yet/)).toHaveTextContent("No stacks yet. Put a folder with a compose file");
  });
});
