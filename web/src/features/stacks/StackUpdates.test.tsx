import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { StackUpdate, UpdatePolicy } from "../../api/types";
import { installFakeEventSource } from "../../test/fakeEventSource";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import {
  makeDetail,
  makeImageUpdate,
  makePolicy,
  makeRun,
  makeStackUpdate,
  makeSummary,
} from "../../test/stackFixtures";

/** The stack page of "web", its update summary answered by `update()` (read at each request). */
function stackRoutes(update: () => StackUpdate, extra: Routes = {}, user = adminUser): Routes {
  return {
    ...signedInAs(user),
    "GET /api/stacks/updates": () => json(makeSummary([update()])),
    "GET /api/stacks/web": makeDetail(user === adminUser ? {} : { env: null }),
    "GET /api/stacks/web/run": makeRun({ status: "succeeded", finished_at: "2025-03-01T10:00:20Z", exit_code: 0 }),
    ...extra,
  };
}

async function policyForm() {
  return screen.findByRole("form", { name: "Update policy" });
}

describe("a stack's update policy", () => {
  it("shows the policy in force, sends the whole policy on Save and then shows it as the stack's own", async () => {
    installFakeEventSource();
    let own: UpdatePolicy | null = null;
    const fake = installFakeFetch(
      stackRoutes(() => makeStackUpdate({ policy: own ?? makePolicy(), policy_inherited: own === null }), {
        "PUT /api/stacks/web/update-policy": async (request) => {
          own = (await request.json()) as UpdatePolicy;
          return noContent();
        },
      }),
    );
    const { user } = renderApp("/stacks/web");

    const form = await policyForm();
    expect(screen.getByTestId("policy-source")).toHaveTextContent("follows the host's default policy");
    expect(within(form).getByLabelText("Mode")).toHaveValue("notify");
    expect(within(form).getByLabelText("Settle time (seconds)")).toHaveValue(30);
    expect(within(form).queryByRole("button", { name: "Use host default" })).not.toBeInTheDocument();

    await user.selectOptions(within(form).getByLabelText("Mode"), "auto");
    await user.selectOptions(within(form).getByLabelText("What counts as an update"), "minor");
    await user.click(within(form).getByLabelText("Pre-releases count"));
    const settle = within(form).getByLabelText("Settle time (seconds)");
    await user.clear(settle);
    await user.type(settle, "5");
    const cooldown = within(form).getByLabelText("Cooldown (hours)");
    await user.clear(cooldown);
    await user.type(cooldown, "24");
    await user.type(within(form).getByLabelText("Maintenance window (cron)"), "0 3 * * *");
    const zone = within(form).getByLabelText("Time zone");
    await user.clear(zone);
    await user.type(zone, "Europe/Berlin");
    await user.click(within(form).getByRole("button", { name: "Save policy" }));

    expect(await within(form).findByRole("status")).toHaveTextContent("Policy saved.");
    const [put] = fake.calls("PUT", "/api/stacks/web/update-policy");
    expect(await put?.json()).toEqual({
      mode: "auto",
      track: "minor",
      prereleases: true,
      health_timeout: 120,
      settle: 5,
      cooldown_hours: 24,
      window: "0 3 * * *",
      window_minutes: 120,
      timezone: "Europe/Berlin",
    });
    await waitFor(() => expect(screen.getByTestId("policy-source")).toHaveTextContent("has its own policy"));
    expect(within(form).getByLabelText("Mode")).toHaveValue("auto");
    expect(within(form).getByRole("button", { name: "Use host default" })).toBeEnabled();
  });

  it("shows the server's refusal and keeps what was typed", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes(() => makeStackUpdate(), {
        "PUT /api/stacks/web/update-policy": () =>
          json({ detail: "Invalid request: Value error, settle must be shorter than health_timeout" }, { status: 422 }),
      }),
    );
    const { user } = renderApp("/stacks/web");

    const form = await policyForm();
    const settle = within(form).getByLabelText("Settle time (seconds)");
    await user.clear(settle);
    await user.type(settle, "300");
    await user.click(within(form).getByRole("button", { name: "Save policy" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent("settle must be shorter than health_timeout");
    expect(settle).toHaveValue(300);
    expect(within(form).queryByRole("status")).not.toBeInTheDocument();
    // Editing again clears the old refusal.
    await user.type(settle, "0");
    expect(within(form).queryByRole("alert")).not.toBeInTheDocument();
  });

  it("goes back to the host's default with Use host default", async () => {
    installFakeEventSource();
    let inherited = false;
    const own = makePolicy({ mode: "auto", settle: 5 });
    const fake = installFakeFetch(
      stackRoutes(() => makeStackUpdate({ policy: inherited ? makePolicy() : own, policy_inherited: inherited }), {
        "DELETE /api/stacks/web/update-policy": () => {
          inherited = true;
          return noContent();
        },
      }),
    );
    const { user } = renderApp("/stacks/web");

    const form = await policyForm();
    await waitFor(() => expect(within(form).getByLabelText("Mode")).toHaveValue("auto"));
    expect(screen.getByTestId("policy-source")).toHaveTextContent("has its own policy");
    await user.click(within(form).getByRole("button", { name: "Use host default" }));

    await waitFor(() => expect(fake.calls("DELETE", "/api/stacks/web/update-policy")).toHaveLength(1));
    await waitFor(() => expect(screen.getByTestId("policy-source")).toHaveTextContent("follows the host's default"));
    const again = await policyForm();
    expect(within(again).getByLabelText("Mode")).toHaveValue("notify");
    expect(within(again).getByLabelText("Settle time (seconds)")).toHaveValue(30);
    expect(within(again).queryByRole("button", { name: "Use host default" })).not.toBeInTheDocument();
  });

  it("is read only for a viewer: the policy in words, no form, no button", async () => {
    installFakeEventSource();
    const policy = makePolicy({
      mode: "auto",
      track: "patch",
      cooldown_hours: 48,
      window: "0 3 * * *",
      timezone: "Europe/Paris",
    });
    const fake = installFakeFetch(
      stackRoutes(() => makeStackUpdate({ policy, policy_inherited: false }), {}, viewerUser),
    );
    renderApp("/stacks/web");

    expect(await screen.findByText("Auto: applied, health-gated")).toBeInTheDocument();
    expect(screen.getByTestId("policy-source")).toHaveTextContent("has its own policy");
    expect(screen.getByText(/Newer patch versions/)).toHaveTextContent("Newer patch versions (1.2.x), no pre-releases");
    expect(screen.getByText("48 h after a new image appears")).toBeInTheDocument();
    expect(screen.getByText("0 3 * * *").closest("dd")).toHaveTextContent("0 3 * * * for 2 h (Europe/Paris)");
    expect(screen.queryByRole("form")).not.toBeInTheDocument();
    expect(screen.queryByLabelText("Mode")).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Save|Use host default/ })).not.toBeInTheDocument();
    expect(fake.calls("PUT", "/api/stacks/web/update-policy")).toHaveLength(0);
  });

  it("follows a change on the server while nothing was edited", async () => {
    installFakeEventSource();
    let policy = makePolicy();
    installFakeFetch(stackRoutes(() => makeStackUpdate({ policy }), {}, operatorUser));
    const { queryClient } = renderApp("/stacks/web");

    const form = await policyForm();
    expect(within(form).getByLabelText("Mode")).toHaveValue("notify");
    policy = makePolicy({ mode: "off" });
    await queryClient.invalidateQueries();
    await waitFor(() => expect(within(form).getByLabelText("Mode")).toHaveValue("off"));
  });
});

describe("a stack's last update", () => {
  it("says plainly that it was rolled back, why, and shows the failing service's logs", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes(() =>
        makeStackUpdate({
          has_update: true,
          last_update: {
            at: "2025-03-01T04:00:00Z",
            outcome: "rolled_back",
            detail: "rolled back: app is unhealthy: the health check failed 3 times",
            by: "auto-update",
            logs: ["starting nginx", "nginx: [emerg] unknown directive \"foo\""],
          },
          last_auto_update: {
            at: "2025-03-01T04:00:00Z",
            outcome: "rolled_back",
            detail: "rolled back: app is unhealthy: the health check failed 3 times",
            by: "auto-update",
            logs: [],
          },
        }),
      ),
    );
    renderApp("/stacks/web");

    const last = await screen.findByTestId("last-update");
    expect(last).toHaveTextContent(
      "Last update rolled back: app is unhealthy: the health check failed 3 times",
    );
    expect(last).toHaveTextContent("by the auto-update");
    const logs = within(last).getByLabelText("Logs of the service that failed");
    expect(logs.tagName).toBe("PRE");
    expect(logs).toHaveTextContent('starting nginx nginx: [emerg] unknown directive "foo"');
    // The same event is not told twice.
    expect(screen.queryByTestId("last-auto-update")).not.toBeInTheDocument();
    // The pill says the last try did not hold.
    expect(screen.getByText("Update: last try rolled back")).toHaveClass("tone-warn");
  });

  it("says that the logs are for operators and admins when the server leaves them out", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes(() =>
        makeStackUpdate({
          last_update: {
            at: "2025-03-01T04:00:00Z",
            outcome: "rolled_back",
            detail: "rolled back: app is unhealthy",
            by: null,
            logs: null,
          },
        }),
      ),
    );
    renderApp("/stacks/web");

    const last = await screen.findByTestId("last-update");
    expect(last).toHaveTextContent("Last update rolled back: app is unhealthy");
    expect(within(last).getByText("Logs are shown to operators and admins")).toBeInTheDocument();
    expect(within(last).queryByLabelText("Logs of the service that failed")).not.toBeInTheDocument();
  });

  it("says in red that the rollback failed, and what runs now", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes(() =>
        makeStackUpdate({
          last_update: {
            at: "2025-03-01T04:00:00Z",
            outcome: "rollback_failed",
            detail: "app is unhealthy; putting back the previous images failed: no such image; the new images run",
            by: null,
            logs: [],
          },
        }),
      ),
    );
    renderApp("/stacks/web");

    const alert = await within(await screen.findByTestId("last-update")).findByRole("alert");
    expect(alert).toHaveClass("error");
    expect(alert).toHaveTextContent("Last update failed and so did its rollback");
    expect(alert).toHaveTextContent("the new images run");
    expect(alert).toHaveTextContent("by hand");
  });

  it("tells each auto-update outcome in words", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes(() =>
        makeStackUpdate({
          last_auto_update: {
            at: "2025-03-01T04:00:00Z",
            outcome: "skipped",
            detail: "outside the window",
            by: "auto-update",
            logs: [],
          },
        }),
      ),
    );
    renderApp("/stacks/web");

    expect(await screen.findByTestId("last-auto-update")).toHaveTextContent(/: skipped \(outside the window\)$/);
    expect(screen.queryByTestId("last-update")).not.toBeInTheDocument();
  });

  it("says a last update by hand succeeded, beside an older auto-update that failed", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes(() =>
        makeStackUpdate({
          last_update: { at: "2025-03-02T04:00:00Z", outcome: "updated", detail: null, by: null, logs: [] },
          last_auto_update: {
            at: "2025-03-01T04:00:00Z",
            outcome: "failed",
            detail: "pull access denied",
            by: "auto-update",
            logs: [],
          },
        }),
      ),
    );
    renderApp("/stacks/web");

    const last = await screen.findByTestId("last-update");
    expect(last).toHaveTextContent(/^Last update succeeded \(.+, by hand\)$/);
    expect(within(last).queryByLabelText("Logs of the service that failed")).not.toBeInTheDocument();
    expect(screen.getByTestId("last-auto-update")).toHaveTextContent(/: failed \(pull access denied\)$/);
    expect(screen.getByTestId("last-auto-update")).toHaveClass("error");
  });
});

describe("a stack's newer images", () => {
  it("shows the new tag, the version step, the release link and a rolled-back image", async () => {
    installFakeEventSource();
    installFakeFetch(
      stackRoutes(() =>
        makeStackUpdate({
          has_update: true,
          images: [
            makeImageUpdate({
              service: "app",
              image: "nginx:1.27.1",
              state: "update_available",
              new_tag: "1.28.0",
              current_version: "1.27.1",
              jump: "minor",
              rolled_back: true,
              release: {
                version: "1.28.0",
                source: "https://github.com/nginx/nginx",
                url: null,
                revision: null,
                created: null,
                link: "https://github.com/nginx/nginx/releases",
                error: null,
              },
            }),
            makeImageUpdate({
              service: "db",
              image: "postgres:16",
              state: "update_available",
              release: {
                version: null,
                source: "https://example.org/postgres",
                url: null,
                revision: null,
                created: null,
                link: null,
                error: null,
              },
            }),
            makeImageUpdate({ service: "cache", image: "redis:7" }),
          ],
        }),
      ),
    );
    renderApp("/stacks/web");

    const table = await screen.findByRole("table", { name: "Image updates" });
    const app = within(table).getByRole("row", { name: /nginx/ });
    expect(app).toHaveTextContent("1.27.1 → 1.28.0");
    expect(within(app).getByText("minor")).toHaveClass("pill");
    const release = within(app).getByRole("link", { name: "Release 1.28.0 of app (opens in a new tab)" });
    expect(release).toHaveAttribute("href", "https://github.com/nginx/nginx/releases");
    expect(release).toHaveAttribute("target", "_blank");
    expect(release).toHaveAttribute("rel", "noopener noreferrer");
    expect(app).toHaveTextContent("rolled back before");

    const db = within(table).getByRole("row", { name: /postgres/ });
    expect(db).toHaveTextContent("Newer digest");
    expect(within(db).getByRole("link", { name: /Release notes of db/ })).toHaveAttribute(
      "href",
      "https://example.org/postgres",
    );
    expect(db).not.toHaveTextContent("rolled back before");

    const cache = within(table).getByRole("row", { name: /redis/ });
    expect(within(cache).queryByRole("link")).not.toBeInTheDocument();
    // The page's pill: the update, its biggest step.
    expect(screen.getByText("Update", { selector: ".pill" })).toBeInTheDocument();
    expect(screen.getAllByTestId("jump").map((el) => el.textContent)).toEqual(["minor", "minor"]);
  });
});
