import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { StackDetail, UpdatePolicy } from "../../api/types";
import { codeEditorIn, setText, textOf, typeAtEnd } from "../../test/codeEditor";
import { installFakeEventSource, openSource } from "../../test/fakeEventSource";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeAgent } from "../../test/agentFixtures";
import { makeDetail, makeImageUpdate, makeRun, makeStack, makeStackUpdate, makeSummary } from "../../test/stackFixtures";

const detail = makeDetail();

function detailRoutes(extra: Routes = {}, user = adminUser): Routes {
  return {
    ...signedInAs(user),
    "GET /api/stacks/web": detail,
    "GET /api/stacks/updates": makeSummary([
      makeStackUpdate({
        stack: "web",
        has_update: true,
        auto_update: true,
        last_auto_update: {
          at: "2025-03-01T04:00:00Z",
          outcome: "failed",
          detail: "pull access denied",
          by: "auto-update",
          logs: [],
        },
        images: [
          makeImageUpdate({
            state: "update_available",
            local_digest: "sha256:0123456789abcdef0000000000000000000000000000000000000000000000",
            remote_digest: "sha256:fedcba9876543210ffffffffffffffffffffffffffffffffffffffffffffffff",
          }),
        ],
      }),
    ]),
    "GET /api/stacks/web/run": makeRun({ status: "succeeded", finished_at: "2025-03-01T10:00:20Z", exit_code: 0 }, { percent: 100 }),
    ...extra,
  };
}

describe("stack detail", () => {
  it("shows services, containers, image updates and the last run", async () => {
    installFakeEventSource();
    installFakeFetch(detailRoutes());
    const { user } = renderApp("/stacks/web");

    expect(await screen.findByRole("heading", { level: 1, name: "web" })).toBeInTheDocument();
    const services = await screen.findByRole("table", { name: "Services" });
    const row = within(services).getByRole("row", { name: /web-app-1/ });
    expect(row).toHaveTextContent("app");
    expect(row).toHaveTextContent("running");
    expect(row).toHaveTextContent("Up 2 hours");
    expect(row).toHaveTextContent("healthy");
    expect(row).toHaveTextContent("nginx:1.27");
    expect(row).toHaveTextContent("0.0.0.0:8080->80/tcp");

    const images = await screen.findByRole("table", { name: "Image updates" });
    const imageRow = within(images).getByRole("row", { name: /nginx/ });
    expect(imageRow).toHaveTextContent("Update available");
    expect(imageRow).toHaveTextContent("0123456789ab");
    expect(imageRow).toHaveTextContent("fedcba987654");
    expect(screen.getByText("Update", { selector: ".pill" })).toBeInTheDocument();
    // One control: the policy's Mode (saved with the policy); the card only says it.
    expect(screen.getByTestId("auto-update-state")).toHaveTextContent("Auto-update is on (the update policy's Mode, below).");
    expect(screen.queryByRole("checkbox", { name: "Auto-update" })).not.toBeInTheDocument();
    expect(screen.getByTestId("last-auto-update")).toHaveTextContent(/Last auto-update .+: failed \(pull access denied\)/);

    // The last run succeeded: the console beside the editor opens on the logs, and its
    // Deploy tab has the run.
    const console = screen.getByRole("region", { name: "Console" });
    expect(within(console).getByRole("tab", { name: "Logs" })).toHaveAttribute("aria-selected", "true");
    expect(within(console).queryByRole("region", { name: "Deploy web" })).toBeNull();
    await user.click(within(console).getByRole("tab", { name: "Deploy" }));
    const deploy = within(console).getByRole("region", { name: "Deploy web" });
    await waitFor(() => expect(within(deploy).getByRole("status")).toHaveTextContent("start succeeded"));
    expect(within(deploy).getByRole("progressbar", { name: "Deploy progress" })).toHaveAttribute("aria-valuenow", "100");
    expect(openSource()).toBeUndefined();
  });

  it("starts an action and follows it in the console", async () => {
    installFakeEventSource();
    const fake = installFakeFetch(
      detailRoutes({
        "POST /api/stacks/web/actions/update": () =>
          json(makeRun({ id: "run-2", action: "update" }, { percent: 0 }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/stacks/web");

    const console = await screen.findByRole("region", { name: "Console" });
    expect(within(console).getByRole("tab", { name: "Logs" })).toHaveAttribute("aria-selected", "true");
    const reads = fake.calls("GET", "/api/stacks/web").length;
    await user.click(within(screen.getByRole("group", { name: "Actions for web" })).getByRole("button", { name: "Update" }));

    // The run that began brings the deploy console forward.
    const deploy = await within(console).findByRole("region", { name: "Deploy web" });
    expect(within(console).getByRole("tab", { name: "Deploy" })).toHaveAttribute("aria-selected", "true");
    expect(await within(deploy).findByText("Running update…")).toBeInTheDocument();
    await waitFor(() => expect(openSource()?.url).toBe("/api/stacks/web/run/events"));
    await waitFor(() => expect(fake.calls("GET", "/api/stacks/web").length).toBeGreaterThan(reads));
    await openSource()?.emit("state", makeRun({ id: "run-2", action: "update" }, { percent: 33 }));
    expect(within(deploy).getByRole("progressbar", { name: "Deploy progress" })).toHaveAttribute("aria-valuenow", "33");
  });

  it("shows compose's error when a save is refused, keeps the text, and confirms a good save", async () => {
    let saved: StackDetail | null = null;
    const fake = installFakeFetch(
      detailRoutes({
        "GET /api/stacks/web": () => json(saved ?? detail),
        "PUT /api/stacks/web/compose": async (request) => {
          const { content } = (await request.json()) as { content: string };
          if (content.includes("imagee")) {
            return json(
              { detail: "validating compose.yaml: services.app additional properties 'imagee' not allowed" },
              { status: 400 },
            );
          }
          saved = { ...detail, compose: content };
          return json(saved);
        },
      }),
    );
    const { user } = renderApp("/stacks/web");

    const form = await screen.findByRole("form", { name: "compose.yaml" });
    const editor = await codeEditorIn(form, "compose.yaml");
    expect(textOf(editor)).toBe(detail.compose);
    setText(editor, "services:\n  app:\n    imagee: nginx");
    await user.click(within(form).getByRole("button", { name: "Save compose.yaml" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent(
      "validating compose.yaml: services.app additional properties 'imagee' not allowed",
    );
    expect(textOf(editor)).toBe("services:\n  app:\n    imagee: nginx");
    expect(await fake.calls("PUT", "/api/stacks/web/compose")[0]?.json()).toEqual({
      content: "services:\n  app:\n    imagee: nginx",
    });

    setText(editor, "services:\n  app:\n    image: nginx:1.28\n");
    await user.click(within(form).getByRole("button", { name: "Save compose.yaml" }));
    expect(await within(form).findByRole("status")).toHaveTextContent("compose.yaml saved.");
    expect(within(form).queryByRole("alert")).not.toBeInTheDocument();
    expect(textOf(editor)).toBe("services:\n  app:\n    image: nginx:1.28\n");
  });

  it("saves .env", async () => {
    const fake = installFakeFetch(detailRoutes({ "PUT /api/stacks/web/env": () => json({ ...detail, env: "PORT=9090\n" }) }));
    const { user } = renderApp("/stacks/web");

    const form = await screen.findByRole("form", { name: ".env" });
    setText(await codeEditorIn(form, ".env"), "PORT=9090\n");
    await user.click(within(form).getByRole("button", { name: "Save .env" }));
    expect(await within(form).findByRole("status")).toHaveTextContent(".env saved.");
    expect(await fake.calls("PUT", "/api/stacks/web/env")[0]?.json()).toEqual({ content: "PORT=9090\n" });
  });

  it("loads the secrets only when the admin asks, and saves them", async () => {
    const fake = installFakeFetch(
      detailRoutes({
        "GET /api/stacks/web/secrets": { content: "DB_PASSWORD=hunter2\n" },
        "PUT /api/stacks/web/secrets": () => noContent(),
      }),
    );
    const { user } = renderApp("/stacks/web");

    await screen.findByRole("form", { name: "compose.yaml" });
    expect(screen.queryByText(/hunter2/)).not.toBeInTheDocument();
    expect(fake.calls("GET", "/api/stacks/web/secrets")).toHaveLength(0);

    await user.click(screen.getByRole("button", { name: "Show secrets" }));
    const form = await screen.findByRole("form", { name: ".secrets" });
    const editor = await codeEditorIn(form, ".secrets");
    expect(textOf(editor)).toBe("DB_PASSWORD=hunter2\n");
    typeAtEnd(editor, "API_KEY=x\n");
    await user.click(within(form).getByRole("button", { name: "Save .secrets" }));
    expect(await within(form).findByRole("status")).toHaveTextContent(".secrets saved.");
    expect(await fake.calls("PUT", "/api/stacks/web/secrets")[0]?.json()).toEqual({
      content: "DB_PASSWORD=hunter2\nAPI_KEY=x\n",
    });

    await user.click(screen.getByRole("button", { name: "Hide secrets" }));
    expect(screen.queryByRole("form", { name: ".secrets" })).not.toBeInTheDocument();
  });

  /** An agent of an earlier version: no update policies, auto-update a switch of its own. */
  const withoutPolicy = (enabled: boolean) =>
    makeSummary([{ ...makeStackUpdate({ stack: "web", auto_update: enabled }), policy: undefined as unknown as UpdatePolicy }]);

  it("turns auto-update on where the host has no policies (a switch saved at once)", async () => {
    let enabled = false;
    const fake = installFakeFetch(
      detailRoutes({
        "GET /api/stacks/updates": () => json(withoutPolicy(enabled)),
        "PUT /api/stacks/web/auto-update": async (request) => {
          enabled = ((await request.json()) as { enabled: boolean }).enabled;
          return noContent();
        },
      }),
    );
    const { user } = renderApp("/stacks/web");

    const box = await screen.findByRole("checkbox", { name: "Auto-update" });
    await waitFor(() => expect(fake.calls("GET", "/api/stacks/updates")).toHaveLength(1));
    expect(box).not.toBeChecked();
    await user.click(box);
    expect(box).toBeChecked(); // at once, not after the round trip
    await waitFor(() => expect(fake.calls("PUT", "/api/stacks/web/auto-update")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/stacks/web/auto-update")[0]?.json()).toEqual({ enabled: true });
    await waitFor(() => expect(fake.calls("GET", "/api/stacks/updates").length).toBeGreaterThanOrEqual(2));
    await waitFor(() => expect(screen.getByRole("checkbox", { name: "Auto-update" })).toBeChecked());
  });

  it("puts the box back and shows the detail when auto-update cannot be saved", async () => {
    installFakeFetch(
      detailRoutes({
        "GET /api/stacks/updates": withoutPolicy(true),
        "PUT /api/stacks/web/auto-update": () => json({ detail: "Stack 'web' not found" }, { status: 404 }),
      }),
    );
    const { user } = renderApp("/stacks/web");

    const box = await screen.findByRole("checkbox", { name: "Auto-update" });
    await waitFor(() => expect(box).toBeChecked());
    await user.click(box);
    const region = screen.getByRole("region", { name: "Updates" });
    expect(await within(region).findByRole("alert")).toHaveTextContent("Stack 'web' not found");
    expect(box).toBeChecked();
  });

  const plan = {
    stack: "web",
    error: null,
    containers: [{ name: "web-app-1", service: "app", state: "running" }],
    networks: ["web_default"],
    volumes: [{ key: "data", name: "web_data", exists: true }],
    external_binds: [{ path: "/srv/media", services: ["app"] }],
    folder: {
      path: "/stacks/web",
      trash: ".trash/web-20250301T100000Z",
      files: 12,
      bytes: 2_500_000,
      complete: true,
      binds: [{ path: "data", services: ["app"] }],
    },
  };

  it("says what deleting removes, asks for the stack's name, then deletes with the volumes", async () => {
    const fake = installFakeFetch(
      detailRoutes({
        "GET /api/stacks/web/delete-plan": plan,
        "DELETE /api/stacks/web": () =>
          json({
            stack: "web",
            trash: ".trash/web-20250301T100005Z",
            containers: ["web-app-1"],
            networks: ["web_default"],
            volumes_removed: ["web_data"],
            volumes_kept: [],
          }),
        "GET /api/stacks": [],
      }),
    );
    const { user } = renderApp("/stacks/web");

    const zone = await screen.findByRole("region", { name: "Delete stack" });
    const open = within(zone).getByRole("button", { name: "Delete stack web" });
    await user.click(open);
    const dialog = await screen.findByRole("dialog", { name: "Delete stack web?" });
    expect(await within(dialog).findByText(/stops and removes 1 container: web-app-1/)).toBeInTheDocument();
    expect(dialog).toHaveTextContent("Networks removed: web_default.");
    expect(within(dialog).getByTestId("delete-plan-volumes")).toHaveTextContent("Named volumes kept: web_data.");
    const folder = within(dialog).getByTestId("delete-plan-folder");
    expect(folder).toHaveTextContent(
      "The folder /stacks/web (12 files, 2.5 MB) is moved to .trash/web-20250301T100000Z in the stacks folder, not erased.",
    );
    expect(folder).toHaveTextContent("Your data in ./data goes with the folder to .trash/web-20250301T100000Z.");
    expect(dialog).toHaveTextContent("Left alone (outside the stack folder): /srv/media.");

    const name = within(dialog).getByLabelText("Type the stack's name, web, to confirm");
    expect(name).toHaveFocus();
    const remove = within(dialog).getByRole("button", { name: "Delete stack" });
    expect(remove).toBeDisabled();
    await user.type(name, "We");
    expect(remove).toBeDisabled();
    await user.click(within(dialog).getByRole("checkbox", { name: /Also remove named volumes/ }));
    expect(within(dialog).getByTestId("delete-plan-volumes")).toHaveTextContent(
      "Named volumes removed, with their data: web_data.",
    );
    await user.clear(name);
    await user.type(name, "web");
    expect(fake.calls("DELETE", "/api/stacks/web")).toHaveLength(0);
    await user.click(remove);

    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent(/^\/stacks$/));
    const [request] = fake.calls("DELETE", "/api/stacks/web");
    const params = new URL(request?.url ?? "").searchParams;
    expect(params.get("confirm")).toBe("web");
    expect(params.get("remove_volumes")).toBe("true");
    expect(await screen.findByRole("status")).toHaveTextContent(
      "Stack web deleted. Its folder is in .trash/web-20250301T100005Z in the stacks folder.",
    );
    expect(await screen.findByText(/No stacks yet/)).toBeInTheDocument();
  });

  it("closes the delete dialog on Escape without deleting, and gives the focus back", async () => {
    const fake = installFakeFetch(detailRoutes({ "GET /api/stacks/web/delete-plan": plan }));
    const { user } = renderApp("/stacks/web");
    const open = within(await screen.findByRole("region", { name: "Delete stack" })).getByRole("button", {
      name: "Delete stack web",
    });
    await user.click(open);
    await screen.findByRole("dialog", { name: "Delete stack web?" });
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(open).toHaveFocus();
    expect(fake.calls("DELETE", "/api/stacks/web")).toHaveLength(0);
  });

  it("shows the server's refusal in the delete dialog", async () => {
    installFakeFetch(
      detailRoutes({
        "GET /api/stacks/web/delete-plan": plan,
        "DELETE /api/stacks/web": () =>
          json({ detail: "Stack 'web' was not deleted: compose down failed: boom" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/stacks/web");
    await user.click(
      within(await screen.findByRole("region", { name: "Delete stack" })).getByRole("button", { name: "Delete stack web" }),
    );
    const dialog = await screen.findByRole("dialog", { name: "Delete stack web?" });
    await within(dialog).findByTestId("delete-plan-folder");
    await user.type(within(dialog).getByLabelText("Type the stack's name, web, to confirm"), "web");
    await user.click(within(dialog).getByRole("button", { name: "Delete stack" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("compose down failed: boom");
    expect(screen.getByTestId("location")).toHaveTextContent("/stacks/web");
  });

  it("shows the error for an unknown stack", async () => {
    installFakeFetch(
      detailRoutes({ "GET /api/stacks/nope": () => json({ detail: "No stack 'nope'" }, { status: 404 }) }),
    );
    renderApp("/stacks/nope");
    expect(await screen.findByRole("alert")).toHaveTextContent("No stack 'nope'");
  });
});

describe("stack file editors", () => {
  it("saves and deploys: the file first, then compose up, followed in the console", async () => {
    const order: string[] = [];
    installFakeFetch(
      detailRoutes({
        "PUT /api/stacks/web/compose": async (request) => {
          order.push("save");
          const { content } = (await request.json()) as { content: string };
          return json({ ...detail, compose: content });
        },
        "POST /api/stacks/web/actions/start": () => {
          order.push("start");
          return json(makeRun({ id: "run-9", action: "start" }, { percent: 0 }), { status: 202 });
        },
      }),
    );
    const { user } = renderApp("/stacks/web");
    const form = await screen.findByRole("form", { name: "compose.yaml" });
    typeAtEnd(await codeEditorIn(form, "compose.yaml"), "# deployed\n");
    await user.click(within(form).getByRole("button", { name: "Save and deploy" }));
    await waitFor(() => expect(order).toEqual(["save", "start"]));
    await waitFor(() => expect(openSource()?.url).toBe("/api/stacks/web/run/events"));
    // The console calls it what the user asked for: a deploy, not a "start".
    const deploy = screen.getByRole("region", { name: "Deploy web" });
    expect(await within(deploy).findByText("Running deploy…")).toBeInTheDocument();
  });

  it("refuses to deploy what compose refused: nothing starts", async () => {
    const fake = installFakeFetch(
      detailRoutes({
        "PUT /api/stacks/web/compose": () => json({ detail: "Invalid compose file: nope" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/stacks/web");
    const form = await screen.findByRole("form", { name: "compose.yaml" });
    typeAtEnd(await codeEditorIn(form, "compose.yaml"), "broken: [\n");
    await user.click(within(form).getByRole("button", { name: "Save and deploy" }));
    expect(await within(form).findByRole("alert")).toHaveTextContent("nope");
    expect(fake.calls("POST", "/api/stacks/web/actions/start")).toHaveLength(0);
  });

  it("labels a refused .env as an invalid .env file, not a compose file", async () => {
    installFakeFetch(
      detailRoutes({
        "PUT /api/stacks/web/env": () =>
          json({ detail: "Invalid compose file: line 1: unexpected character" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/stacks/web");
    const form = await screen.findByRole("form", { name: ".env" });
    typeAtEnd(await codeEditorIn(form, ".env"), "=oops");
    await user.click(within(form).getByRole("button", { name: "Save .env" }));
    const alert = await within(form).findByRole("alert");
    expect(alert).toHaveTextContent(/^Invalid \.env fileline 1: unexpected character$/);
    expect(alert).not.toHaveTextContent("compose");
  });

  it("asks before leaving with unsaved edits", async () => {
    const confirm = vi.spyOn(window, "confirm").mockReturnValue(false);
    installFakeFetch(detailRoutes());
    const { user } = renderApp("/stacks/web");
    const form = await screen.findByRole("form", { name: "compose.yaml" });
    const editor = await codeEditorIn(form, "compose.yaml");
    typeAtEnd(editor, "# note\n");
    await within(form).findByText("Unsaved changes"); // the guard is armed
    await user.click(screen.getByRole("link", { name: "Settings" }));
    expect(confirm).toHaveBeenCalledWith("Your changes to compose.yaml are not saved. Leave and discard them?");
    expect(screen.getByTestId("location")).toHaveTextContent("/stacks/web");
    expect(textOf(editor)).toBe(`${detail.compose}# note\n`);

    confirm.mockReturnValue(true);
    await user.click(screen.getByRole("link", { name: "Settings" }));
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/settings"));
  });

  it("asks before signing out with unsaved edits, and stays signed in when told to", async () => {
    const confirm = vi.spyOn(window, "confirm").mockReturnValue(false);
    const fake = installFakeFetch(detailRoutes({ "POST /api/auth/logout": { provider_logout_url: null } }));
    const { user } = renderApp("/stacks/web");
    const form = await screen.findByRole("form", { name: "compose.yaml" });
    typeAtEnd(await codeEditorIn(form, "compose.yaml"), "# unsaved\n");
    await within(form).findByText("Unsaved changes"); // the guard is armed
    await user.click(screen.getByRole("button", { name: "Sign out" }));
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(fake.calls("POST", "/api/auth/logout")).toHaveLength(0);
    expect(screen.getByTestId("location")).toHaveTextContent("/stacks/web");

    confirm.mockReturnValue(true);
    await user.click(screen.getByRole("button", { name: "Sign out" }));
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/login"));
    expect(fake.calls("POST", "/api/auth/logout")).toHaveLength(1);
    expect(confirm).toHaveBeenCalledTimes(2); // not asked again by the navigation
  });

  it("keeps the text across a sign-in when the session expired at Save, and restores it", async () => {
    const confirm = vi.spyOn(window, "confirm");
    let signedIn = true;
    const saved: string[] = [];
    installFakeFetch(
      detailRoutes({
        "GET /api/auth/me": () => (signedIn ? json(adminUser) : json({ detail: "Not authenticated" }, { status: 401 })),
        "GET /api/stacks/web": () => (signedIn ? json(detail) : json({ detail: "Not authenticated" }, { status: 401 })),
        "PUT /api/stacks/web/env": async (request) => {
          if (!signedIn) return json({ detail: "Not authenticated" }, { status: 401 });
          const { content } = (await request.json()) as { content: string };
          saved.push(content);
          return json({ ...detail, env: content });
        },
        "POST /api/auth/login": () => {
          signedIn = true;
          return json({ user: adminUser });
        },
      }),
    );
    const { user } = renderApp("/stacks/web");
    const form = await screen.findByRole("form", { name: ".env" });
    typeAtEnd(await codeEditorIn(form, ".env"), "DEBUG=1\n");
    signedIn = false; // the session expires
    await user.click(within(form).getByRole("button", { name: "Save .env" }));

    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent(/^\/login$/));
    expect(confirm).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "pw");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/stacks/web"));
    const again = await screen.findByRole("form", { name: ".env" });
    expect(textOf(await codeEditorIn(again, ".env"))).toBe("PORT=8080\nDEBUG=1\n");
    expect(within(again).getByRole("status")).toHaveTextContent(
      "Your unsaved changes to .env were kept while you signed in again, and are restored here.",
    );
    await user.click(within(again).getByRole("button", { name: "Save .env" }));
    await waitFor(() => expect(saved).toEqual(["PORT=8080\nDEBUG=1\n"]));
    expect(sessionStorage.length).toBe(0);
  });
});

/** What the server sends roles below admin: no .env. */
const detailBelowAdmin = makeDetail({ env: null });

describe("stack detail for an operator", () => {
  it("has the actions, Check now and auto-update, shows compose read-only, and no .env, secrets or Delete", async () => {
    installFakeEventSource();
    const fake = installFakeFetch(detailRoutes({ "GET /api/stacks/web": detailBelowAdmin }, operatorUser));
    renderApp("/stacks/web");

    const compose = await screen.findByLabelText("compose.yaml");
    expect(compose).toHaveAttribute("readonly");
    expect(compose).toHaveValue(detail.compose);
    expect(compose).toHaveAccessibleDescription(/only admins edit them/);
    expect(screen.queryByRole("form", { name: "compose.yaml" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /^Save (compose|\.env)/ })).not.toBeInTheDocument();
    // An operator sets the stack's update policy, though.
    expect(await screen.findByRole("button", { name: "Save policy" })).toBeEnabled();
    expect(screen.queryByRole("form", { name: ".env" })).not.toBeInTheDocument();
    expect(screen.queryByLabelText(".env")).not.toBeInTheDocument();
    expect(screen.getByText("The .env file is shown to admins only.")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Show secrets" })).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Delete stack" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Delete/ })).not.toBeInTheDocument();

    const actions = screen.getByRole("group", { name: "Actions for web" });
    expect(within(actions).getByRole("button", { name: "Restart" })).toBeEnabled();
    expect(screen.getByRole("button", { name: "Check now" })).toBeInTheDocument();
    expect(screen.getByRole("combobox", { name: "Mode" })).toBeEnabled();
    expect(fake.calls("GET", "/api/stacks/web/secrets")).toHaveLength(0);
  });
});

describe("stack detail for a viewer", () => {
  it("shows status, updates and the last run, with no control that changes anything", async () => {
    installFakeEventSource();
    installFakeFetch(detailRoutes({ "GET /api/stacks/web": detailBelowAdmin }, viewerUser));
    renderApp("/stacks/web");

    expect(await screen.findByRole("table", { name: "Services" })).toBeInTheDocument();
    expect(await screen.findByRole("table", { name: "Image updates" })).toBeInTheDocument();
    // No logs for a viewer: the console is the deploy console alone, no tabs.
    const deploy = screen.getByRole("region", { name: "Deploy web" });
    expect(screen.queryByRole("tab")).toBeNull();
    await waitFor(() => expect(within(deploy).getByRole("status")).toHaveTextContent("start succeeded"));
    expect(screen.getByTestId("auto-update-state")).toHaveTextContent("Auto-update is on (the update policy's Mode, below).");
    expect(screen.getByLabelText("compose.yaml")).toHaveAttribute("readonly");

    expect(screen.queryByRole("group", { name: "Actions for web" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Check now" })).not.toBeInTheDocument();
    expect(screen.queryByRole("checkbox", { name: "Auto-update" })).not.toBeInTheDocument();
    expect(screen.queryByRole("form")).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Delete stack" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Show secrets" })).not.toBeInTheDocument();
    // Nothing on the page can change anything (the menu button only shows the navigation).
    expect(screen.getAllByRole("button").map((b) => b.textContent)).toEqual(["☰ Menu", "Sign out"]);
  });
});

describe("the stack workspace", () => {
  it("lists the host's stacks beside the stack, the current one marked, and finds one by name", async () => {
    installFakeEventSource();
    installFakeFetch(
      detailRoutes({
        "GET /api/stacks": [makeStack({ id: "web" }), makeStack({ id: "db", state: "stopped" }), makeStack({ id: "cache" })],
      }),
    );
    const { user } = renderApp("/stacks/web");

    const pane = await screen.findByRole("navigation", { name: "Stacks of this host" });
    await waitFor(() => expect(within(pane).getAllByRole("link")).toHaveLength(3));
    expect(within(pane).getAllByRole("link").map((a) => a.textContent)).toEqual([
      "cache (Running)",
      "db (Stopped)",
      "web (Running)",
    ]);
    expect(within(pane).getByRole("link", { name: /web/ })).toHaveAttribute("aria-current", "page");
    expect(within(pane).getByRole("link", { name: /db/ })).toHaveAttribute("href", "/stacks/db");

    await user.type(within(pane).getByRole("searchbox", { name: "Find a stack" }), "ca");
    expect(within(pane).getAllByRole("link").map((a) => a.textContent)).toEqual(["cache (Running)"]);
  });

  it("links a stack's published ports on an agent to the agent's host, not this page's", async () => {
    installFakeEventSource();
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/agents": [makeAgent({ id: 3, url: "https://nas.lan:8443" })],
      "GET /api/agents/3/stacks/web": detail,
      "GET /api/agents/3/stacks/updates": makeSummary([]),
      "GET /api/agents/3/stacks/web/run": null,
      "GET /api/agents/3/stacks": [makeStack()],
    });
    renderApp("/stacks/web?host=3");

    const services = await screen.findByRole("table", { name: "Services" });
    expect(within(services).getByRole("link", { name: /8080/ })).toHaveAttribute("href", "http://nas.lan:8080");
  });
});

describe("the console beside the editor", () => {
  it("opens on the deploy when the last run did not succeed, and moves between its tabs with the arrow keys", async () => {
    installFakeEventSource();
    installFakeFetch(
      detailRoutes({
        "GET /api/stacks/web/run": makeRun(
          { status: "failed", finished_at: "2025-03-01T10:00:20Z", exit_code: 1 },
          { errors: ["pull access denied"] },
        ),
      }),
    );
    const { user } = renderApp("/stacks/web");

    const console = await screen.findByRole("region", { name: "Console" });
    const deployTab = await within(console).findByRole("tab", { name: "Deploy", selected: true });
    expect(within(console).getByRole("region", { name: "Deploy web" })).toHaveTextContent("pull access denied");
    deployTab.focus();
    await user.keyboard("{ArrowRight}");
    expect(within(console).getByRole("tab", { name: "Logs" })).toHaveAttribute("aria-selected", "true");
    expect(within(console).getByRole("tab", { name: "Logs" })).toHaveFocus();
    expect(within(console).getByRole("region", { name: "Logs" })).toBeInTheDocument();
    expect(within(console).queryByRole("region", { name: "Deploy web" })).toBeNull();
  });

  it("says beside the editor what became of Save and deploy, to its end", async () => {
    installFakeFetch(
      detailRoutes({
        "PUT /api/stacks/web/compose": async (request) => {
          const { content } = (await request.json()) as { content: string };
          return json({ ...detail, compose: content });
        },
        "POST /api/stacks/web/actions/start": () =>
          json(makeRun({ id: "run-9", action: "start" }, { percent: 0 }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/stacks/web");
    const form = await screen.findByRole("form", { name: "compose.yaml" });
    typeAtEnd(await codeEditorIn(form, "compose.yaml"), "# deployed\n");
    await user.click(within(form).getByRole("button", { name: "Save and deploy" }));

    expect(await within(form).findByText(/^compose\.yaml saved\. Deploying it \(compose up\)/)).toHaveAttribute(
      "role",
      "status",
    );
    expect(screen.getByRole("tab", { name: "Deploy" })).toHaveAttribute("aria-selected", "true");
    await waitFor(() => expect(openSource()?.url).toBe("/api/stacks/web/run/events"));
    await openSource()?.emit(
      "state",
      makeRun({ id: "run-9", action: "start", status: "failed", finished_at: "2025-03-01T10:00:20Z" }, {
        errors: ["port 8080 is already allocated"],
      }),
    );
    expect(
      await within(form).findByText(
        "compose.yaml saved, but the deploy failed: port 8080 is already allocated. The deploy console has its output.",
      ),
    ).toBeInTheDocument();
    // The deploy stays in view after it ended, for its outcome to be read.
    expect(screen.getByRole("tab", { name: "Deploy" })).toHaveAttribute("aria-selected", "true");
  });
});
