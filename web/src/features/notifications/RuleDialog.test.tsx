import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { NotificationRule } from "../../api/types";
import { makeAgent } from "../../test/agentFixtures";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { catalogue, failures, hook, images, phone } from "../../test/notificationFixtures";
import { renderApp } from "../../test/renderApp";
import { makeStack } from "../../test/stackFixtures";

const nas = makeAgent({ id: 3, name: "nas" });
const lab = makeAgent({ id: 4, name: "lab", enabled: false });

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/notifications/catalogue": catalogue,
    "GET /api/notifications/channels": [hook, phone],
    "GET /api/notifications/rules": [failures, images],
    "GET /api/agents": [nas, lab],
    "GET /api/stacks": [makeStack({ id: "web" }), makeStack({ id: "db" })],
    "GET /api/agents/3/stacks": [makeStack({ id: "media" }), makeStack({ id: "web" })],
    ...extra,
  };
}

describe("the rule dialog", () => {
  it("adds a rule: events picked in groups, a minimum severity, hosts, stacks and channels", async () => {
    const fake = installFakeFetch(
      routes({ "POST /api/notifications/rules": () => json({ ...failures, id: 9, name: "backups" }, { status: 201 }) }),
    );
    const { user } = renderApp("/notifications");
    await user.click(await screen.findByRole("button", { name: "Add a rule" }));
    const dialog = screen.getByRole("dialog", { name: "Add a rule" });

    const events = within(dialog).getByRole("group", { name: "Events" });
    expect(events).toHaveTextContent("None ticked: every event.");
    const groups = within(events).getAllByRole("group").map((g) => g.querySelector("legend")?.textContent);
    expect(groups).toEqual([
      "Images and updates",
      "Backups, schedules and restores",
      "Containers and stacks",
      "Hosts and agents",
      "Stackyard itself",
    ]);
    const backups = within(events).getByRole("group", { name: "Backups, schedules and restores" });
    expect(within(backups).getAllByRole("checkbox").map((c) => c.parentElement?.textContent)).toEqual([
      "Backup succeeded (info)",
      "Backup failed (critical)",
      "Scheduled backup missed (warning)",
    ]);

    await user.type(within(dialog).getByLabelText("Name"), "backups");
    await user.click(within(backups).getByRole("checkbox", { name: "Scheduled backup missed (warning)" }));
    await user.click(within(backups).getByRole("checkbox", { name: "Backup failed (critical)" }));
    expect(events).toHaveTextContent("2 ticked.");
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Minimum severity" }), "warning");

    const hosts = within(dialog).getByRole("group", { name: "Hosts" });
    expect(hosts).toHaveTextContent("None ticked: all hosts, agents added later too.");
    expect(await within(hosts).findByRole("checkbox", { name: "lab (disabled)" })).toBeInTheDocument();
    await user.click(within(hosts).getByRole("checkbox", { name: "nas" }));
    await user.click(within(hosts).getByRole("checkbox", { name: "This host" }));
    // The stacks offered are those of the hosts ticked (this host and nas), each once.
    const stacks = within(dialog).getByRole("group", { name: "Stacks" });
    await waitFor(() =>
      expect(within(stacks).getAllByRole("checkbox").map((c) => c.parentElement?.textContent)).toEqual([
        "db",
        "media",
        "web",
      ]),
    );
    await user.click(within(stacks).getByRole("checkbox", { name: "web" }));
    await user.click(within(stacks).getByRole("checkbox", { name: "db" }));

    const channels = within(dialog).getByRole("group", { name: "Channels" });
    expect(channels).toHaveTextContent("None ticked: every channel, those added later too.");
    await user.click(within(channels).getByRole("checkbox", { name: "phone" }));

    await user.click(within(dialog).getByRole("button", { name: "Add the rule" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/notifications/rules")[0]?.json()).toEqual({
      name: "backups",
      enabled: true,
      events: ["backup_failed", "schedule_missed"],
      min_severity: "warning",
      hosts: [0, 3],
      stacks: ["db", "web"],
      channels: [2],
    });
    expect(screen.getByText("Rule backups saved.")).toBeInTheDocument();
  });

  it("edits a rule as it is; warns of events below its minimum; shows gone channels and the server's refusal", async () => {
    const rule: NotificationRule = {
      ...images,
      id: 5,
      name: "mine",
      stacks: ["web", "old"],
      hosts: [0],
      channels: [1, 7],
    };
    const fake = installFakeFetch(
      routes({
        "GET /api/notifications/rules": [rule],
        "PUT /api/notifications/rules/5": () => json({ detail: "No notification channel 7" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/notifications");
    await user.click(await screen.findByRole("button", { name: "Edit rule mine" }));
    const dialog = screen.getByRole("dialog", { name: "Edit mine" });
    expect(within(dialog).getByLabelText("Name")).toHaveValue("mine");
    expect(within(dialog).getByRole("checkbox", { name: "Newer images are available (info)" })).toBeChecked();
    expect(within(dialog).getByRole("combobox", { name: "Minimum severity" })).toHaveValue("info");
    expect(within(dialog).getByRole("checkbox", { name: "This host" })).toBeChecked();
    // Its stacks ticked among this host's; one since gone still shows, to be unticked.
    const stacks = within(dialog).getByRole("group", { name: "Stacks" });
    expect(await within(stacks).findByRole("checkbox", { name: "old (not on these hosts)" })).toBeChecked();
    expect(within(stacks).getByRole("checkbox", { name: "web" })).toBeChecked();
    expect(within(stacks).getByRole("checkbox", { name: "db" })).not.toBeChecked();
    const channels = within(dialog).getByRole("group", { name: "Channels" });
    expect(within(channels).getByRole("checkbox", { name: "ops hook" })).toBeChecked();
    expect(within(channels).getByRole("checkbox", { name: "Channel #7 (deleted)" })).toBeChecked();

    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Minimum severity" }), "critical");
    expect(within(dialog).getByText(/Below the minimum severity/)).toHaveTextContent(
      "Below the minimum severity, so not sent as usually raised: Newer images are available.",
    );

    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("No notification channel 7");
    expect(await fake.calls("PUT", "/api/notifications/rules/5")[0]?.json()).toMatchObject({ channels: [1, 7], min_severity: "critical" });

    // Unticking every channel means every channel again.
    await user.click(within(channels).getByRole("button", { name: /Untick all/ }));
    expect(channels).toHaveTextContent("None ticked: every channel");
  });
});
