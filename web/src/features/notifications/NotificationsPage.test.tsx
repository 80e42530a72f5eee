import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { formatDateTime } from "../../components/format";
import { makeAgent } from "../../test/agentFixtures";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { catalogue, failures, hook, images, phone } from "../../test/notificationFixtures";
import { renderApp } from "../../test/renderApp";

const nas = makeAgent({ id: 3, name: "nas" });

const onNas = {
  ...failures,
  id: 3,
  name: "nas backups",
  events: ["backup_failed" as const, "schedule_missed" as const],
  min_severity: "critical" as const,
  hosts: [0, 3, 9],
  stacks: ["web", "db"],
  channels: [2, 7],
  enabled: false,
};

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/notifications/catalogue": catalogue,
    "GET /api/notifications/channels": [hook, phone],
    "GET /api/notifications/rules": [failures, images, onNas],
    "GET /api/agents": [nas],
    ...extra,
  };
}

describe("notifications page", () => {
  it("lists the channels: kind, enabled, the last success and the last error with its time", async () => {
    installFakeFetch(routes());
    renderApp("/notifications");

    const table = await screen.findByRole("table", { name: "Channels" });
    const first = within(table).getByRole("row", { name: /ops hook/ });
    expect(first).toHaveTextContent("Webhook");
    expect(within(first).getByRole("switch", { name: "ops hook enabled" })).toBeChecked();
    expect(first).toHaveTextContent(formatDateTime(hook.last_success_at));
    const second = within(table).getByRole("row", { name: /phone/ });
    expect(second).toHaveTextContent("Gotify");
    expect(within(second).getByRole("switch", { name: "phone enabled" })).not.toBeChecked();
    expect(second).toHaveTextContent("Never");
    expect(second).toHaveTextContent(`Answered 401: unauthorized${formatDateTime(phone.last_error_at)}`);
    for (const action of ["Send test to phone", "History of phone", "Edit channel phone", "Delete channel phone"]) {
      expect(within(second).getByRole("button", { name: action })).toBeInTheDocument();
    }
  });

  it("sums each rule up, naming hosts, stacks and channels, and says what the defaults send", async () => {
    installFakeFetch(routes());
    renderApp("/notifications");

    const table = await screen.findByRole("table", { name: "Rules" });
    const defaults = within(table).getByRole("row", { name: /Failures and warnings/ });
    const cells = within(defaults).getAllByRole("cell").map((cell) => cell.textContent);
    expect(cells.slice(0, 5)).toEqual(["Every event", "Warnings and critical", "All hosts", "All stacks", "Every channel"]);
    expect(within(table).getByRole("row", { name: /Image updates/ })).toHaveTextContent("Newer images are available");

    const mine = within(table).getByRole("row", { name: /nas backups/ });
    await waitFor(() => expect(mine).toHaveTextContent("This host, nas, Agent #9 (deleted)"));
    expect(mine).toHaveTextContent("Backup failed, Scheduled backup missed");
    expect(mine).toHaveTextContent("Critical only");
    expect(mine).toHaveTextContent("web, db");
    expect(mine).toHaveTextContent("phone, Channel #7 (deleted)");
    expect(within(mine).getByRole("switch", { name: "nas backups enabled" })).not.toBeChecked();

    const rules = screen.getByRole("region", { name: "Rules" });
    expect(rules).toHaveTextContent(
      "“Failures and warnings” and “Image updates”, send every failure, every warning and news of newer images to every channel",
    );
  });

  it.each([
    ["an operator", operatorUser],
    ["a viewer", viewerUser],
  ])("is for admins only: %s sees neither the link nor the page, and nothing is asked", async (_who, user) => {
    const fake = installFakeFetch({ ...routes(), ...signedInAs(user) });
    renderApp("/notifications");

    expect(await screen.findByText("Only admins manage notifications.")).toBeInTheDocument();
    expect(screen.queryByRole("link", { name: "Notifications" })).not.toBeInTheDocument();
    expect(fake.requests.filter((r) => r.url.includes("/api/notifications"))).toHaveLength(0);
  });

  it("sends a test from a row and shows what the service answered", async () => {
    installFakeFetch(
      routes({ "POST /api/notifications/channels/2/test": { ok: false, detail: "Answered 401: unauthorized" } }),
    );
    const { user } = renderApp("/notifications");
    const row = within(await screen.findByRole("table", { name: "Channels" })).getByRole("row", { name: /phone/ });
    await user.click(within(row).getByRole("button", { name: "Send test to phone" }));
    const result = await within(row).findByRole("status");
    expect(result).toHaveTextContent("Test failed: Answered 401: unauthorized");
    expect(result).toHaveClass("error");
  });

  it("switches a channel and a rule off and on", async () => {
    const fake = installFakeFetch(
      routes({
        "PATCH /api/notifications/channels/1": { ...hook, enabled: false },
        "PUT /api/notifications/rules/2": { ...images, enabled: false },
      }),
    );
    const { user } = renderApp("/notifications");
    await user.click(await screen.findByRole("switch", { name: "ops hook enabled" }));
    await waitFor(() => expect(fake.calls("PATCH", "/api/notifications/channels/1")).toHaveLength(1));
    expect(await fake.calls("PATCH", "/api/notifications/channels/1")[0]?.json()).toEqual({ enabled: false });

    await user.click(screen.getByRole("switch", { name: "Image updates enabled" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/notifications/rules/2")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/notifications/rules/2")[0]?.json()).toEqual({
      name: "Image updates",
      enabled: false,
      events: ["stack_update"],
      min_severity: "info",
      hosts: [],
      stacks: [],
      channels: [],
    });
  });

  it("deletes a channel after saying its queue and history go, and which rules named it", async () => {
    const fake = installFakeFetch(routes({ "DELETE /api/notifications/channels/2": () => noContent() }));
    const { user } = renderApp("/notifications");
    const row = within(await screen.findByRole("table", { name: "Channels" })).getByRole("row", { name: /phone/ });
    await user.click(within(row).getByRole("button", { name: "Delete channel phone" }));

    const confirm = screen.getByRole("alertdialog", { name: "Delete channel phone?" });
    expect(confirm).toHaveAccessibleDescription(/its queue and history/);
    expect(confirm).toHaveTextContent("Rules that name it (nas backups) no longer send there");
    await user.click(within(confirm).getByRole("button", { name: "Delete the channel" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/notifications/channels/2")).toHaveLength(1));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
  });

  it("deletes a rule after asking", async () => {
    const fake = installFakeFetch(routes({ "DELETE /api/notifications/rules/3": () => noContent() }));
    const { user } = renderApp("/notifications");
    await user.click(await screen.findByRole("button", { name: "Delete rule nas backups" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete rule nas backups?" });
    await user.click(within(confirm).getByRole("button", { name: "Delete the rule" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/notifications/rules/3")).toHaveLength(1));
  });

  it("says so when there are no channels yet, and when the catalogue cannot be read", async () => {
    installFakeFetch(
      routes({
        "GET /api/notifications/channels": [],
        "GET /api/notifications/catalogue": () => json({ detail: "catalogue broke" }, { status: 500 }),
      }),
    );
    renderApp("/notifications");
    expect(await screen.findByText("No channels yet: add one, and the rules below send to it.")).toBeInTheDocument();
    expect(await screen.findByRole("alert")).toHaveTextContent("catalogue broke");
    expect(screen.getByRole("button", { name: "Add a channel" })).toBeDisabled();
  });
});
