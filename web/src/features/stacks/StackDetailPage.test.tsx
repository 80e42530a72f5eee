import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { StackDetail } from "../../api/types";
import { installFakeEventSource, openSource } from "../../test/fakeEventSource";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeRun, makeStackUpdate, makeSummary } from "../../test/stackFixtures";

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
        last_auto_update: { at: "2025-03-01T04:00:00Z", outcome: "failed", detail: "pull access denied" },
        images: [
          {
            service: "app",
            image: "nginx:1.27",
            state: "update_available",
            local_digest: "sha256:0123456789abcdef0000000000000000000000000000000000000000000000",
            remote_digest: "sha256:fedcba9876543210ffffffffffffffffffffffffffffffffffffffffffffffff",
            checked_at: "2025-03-01T09:00:00Z",
            error: null,
          },
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
    renderApp("/stacks/web");

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
    expect(screen.getByRole("checkbox", { name: "Auto-update" })).toBeChecked();
    expect(screen.getByTestId("last-auto-update")).toHaveTextContent(/Last auto-update .+: failed \(pull access denied\)/);

    const deploy = screen.getByRole("region", { name: "Deploy web" });
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

    const deploy = await screen.findByRole("region", { name: "Deploy web" });
    expect(await within(deploy).findByText("start succeeded")).toBeInTheDocument();
    const reads = fake.calls("GET", "/api/stacks/web").length;
    await user.click(within(screen.getByRole("group", { name: "Actions for web" })).getByRole("button", { name: "Update" }));

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
    const editor = within(form).getByLabelText("compose.yaml");
    expect(editor).toHaveValue(detail.compose);
    await user.clear(editor);
    await user.type(editor, "services:\n  app:\n    imagee: nginx");
    await user.click(within(form).getByRole("button", { name: "Save compose.yaml" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent(
      "validating compose.yaml: services.app additional properties 'imagee' not allowed",
    );
    expect(editor).toHaveValue("services:\n  app:\n    imagee: nginx");
    expect(await fake.calls("PUT", "/api/stacks/web/compose")[0]?.json()).toEqual({
      content: "services:\n  app:\n    imagee: nginx",
    });

    await user.clear(editor);
    await user.type(editor, "services:\n  app:\n    image: nginx:1.28\n");
    await user.click(within(form).getByRole("button", { name: "Save compose.yaml" }));
    expect(await within(form).findByRole("status")).toHaveTextContent("compose.yaml saved.");
    expect(within(form).queryByRole("alert")).not.toBeInTheDocument();
    expect(editor).toHaveValue("services:\n  app:\n    image: nginx:1.28\n");
  });

  it("saves .env", async () => {
    const fake = installFakeFetch(detailRoutes({ "PUT /api/stacks/web/env": () => json({ ...detail, env: "PORT=9090\n" }) }));
    const { user } = renderApp("/stacks/web");

    const form = await screen.findByRole("form", { name: ".env" });
    const editor = within(form).getByLabelText(".env");
    await user.clear(editor);
    await user.type(editor, "PORT=9090\n");
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
    const editor = within(form).getByLabelText(".secrets");
    expect(editor).toHaveValue("DB_PASSWORD=hunter2\n");
    await user.type(editor, "API_KEY=x\n");
    await user.click(within(form).getByRole("button", { name: "Save .secrets" }));
    expect(await within(form).findByRole("status")).toHaveTextContent(".secrets saved.");
    expect(await fake.calls("PUT", "/api/stacks/web/secrets")[0]?.json()).toEqual({
      content: "DB_PASSWORD=hunter2\nAPI_KEY=x\n",
    });

    await user.click(screen.getByRole("button", { name: "Hide secrets" }));
    expect(screen.queryByRole("form", { name: ".secrets" })).not.toBeInTheDocument();
  });

  it("turns auto-update on", async () => {
    let enabled = false;
    const fake = installFakeFetch(
      detailRoutes({
        "GET /api/stacks/updates": () => json(makeSummary([makeStackUpdate({ stack: "web", auto_update: enabled })])),
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
        "PUT /api/stacks/web/auto-update": () => json({ detail: "Stack 'web' not found" }, { status: 404 }),
      }),
    );
    const { user } = renderApp("/stacks/web");

    const box = await screen.findByRole("checkbox", { name: "Auto-update" });
    await waitFor(() => expect(box).toBeChecked());
    await user.click(box);
    const region = screen.getByRole("region", { name: "Image updates" });
    expect(await within(region).findByRole("alert")).toHaveTextContent("Stack 'web' not found");
    expect(box).toBeChecked();
  });

  it("deletes the stack with its volumes after confirmation", async () => {
    const fake = installFakeFetch(
      detailRoutes({
        "DELETE /api/stacks/web": () => noContent(),
        "GET /api/stacks": [],
      }),
    );
    const { user } = renderApp("/stacks/web");

    const zone = await screen.findByRole("region", { name: "Delete stack" });
    await user.click(within(zone).getByRole("checkbox", { name: "Also remove named volumes" }));
    await user.click(within(zone).getByRole("button", { name: "Delete stack web" }));
    expect(fake.calls("DELETE", "/api/stacks/web")).toHaveLength(0);
    await user.click(within(zone).getByRole("button", { name: "Confirm" }));

    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent(/^\/stacks$/));
    const [request] = fake.calls("DELETE", "/api/stacks/web");
    expect(new URL(request?.url ?? "").searchParams.get("remove_volumes")).toBe("true");
    expect(await screen.findByText(/No stacks yet/)).toBeInTheDocument();
  });

  it("shows the error for an unknown stack", async () => {
    installFakeFetch(
      detailRoutes({ "GET /api/stacks/nope": () => json({ detail: "No stack 'nope'" }, { status: 404 }) }),
    );
    renderApp("/stacks/nope");
    expect(await screen.findByRole("alert")).toHaveTextContent("No stack 'nope'");
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
    expect(screen.queryByRole("button", { name: /^Save/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("form", { name: ".env" })).not.toBeInTheDocument();
    expect(screen.queryByLabelText(".env")).not.toBeInTheDocument();
    expect(screen.getByText("The .env file is shown to admins only.")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Show secrets" })).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Delete stack" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Delete/ })).not.toBeInTheDocument();

    const actions = screen.getByRole("group", { name: "Actions for web" });
    expect(within(actions).getByRole("button", { name: "Restart" })).toBeEnabled();
    expect(screen.getByRole("button", { name: "Check now" })).toBeInTheDocument();
    expect(await screen.findByRole("checkbox", { name: "Auto-update" })).toBeEnabled();
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
    const deploy = screen.getByRole("region", { name: "Deploy web" });
    await waitFor(() => expect(within(deploy).getByRole("status")).toHaveTextContent("start succeeded"));
    expect(screen.getByTestId("auto-update-state")).toHaveTextContent("Auto-update is on.");
    expect(screen.getByLabelText("compose.yaml")).toHaveAttribute("readonly");

    expect(screen.queryByRole("group", { name: "Actions for web" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Check now" })).not.toBeInTheDocument();
    expect(screen.queryByRole("checkbox", { name: "Auto-update" })).not.toBeInTheDocument();
    expect(screen.queryByRole("form")).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Delete stack" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Show secrets" })).not.toBeInTheDocument();
    // Nothing on the page can change anything.
    expect(screen.getAllByRole("button").map((b) => b.textContent)).toEqual(["Sign out"]);
  });
});
