import { act, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Destination, Schedule, ScheduleRun } from "../../api/types";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs } from "../../test/fixtures";
import { ALL_CAPABILITIES, makeAgent } from "../../test/agentFixtures";
import { renderApp } from "../../test/renderApp";
import { makeStack } from "../../test/stackFixtures";
import { formatDuration } from "./ScheduleHistory";
import { describeTimetable, presetOf } from "./timetable";

const offsite: Destination = {
  id: 4,
  name: "offsite",
  type: "s3",
  settings: {
    type: "s3",
    endpoint_url: "http://minio.lan:9000",
    region: "us-east-1",
    bucket: "backups",
    prefix: "",
    access_key: "AKIA1",
    path_style: true,
  },
  secrets_set: ["secret_key"],
  host_key_fingerprint: null,
  created_at: "2026-11-21T10:00:00Z",
  updated_at: null,
};

const nightly: Schedule = {
  id: 7,
  name: "nightly",
  kind: "backup",
  settle_seconds: 30,
  stacks: null,
  cron: "0 3 * * *",
  timezone: "Europe/Berlin",
  destination_id: 4,
  capture: { include_binds: true, volumes: null, binds: null },
  keep_last: 7,
  keep_daily: 14,
  keep_weekly: 0,
  keep_monthly: 6,
  enabled: true,
  agent_id: null,
  next_run_at: "2026-11-24T02:00:00Z",
  last_run_at: "2026-11-23T02:00:09Z",
  last_status: "failed",
  running: false,
};

const weekdays: Schedule = {
  ...nightly,
  id: 8,
  name: "weekdays",
  stacks: ["db", "web"],
  cron: "30 2 * * 1-5",
  timezone: "UTC",
  destination_id: null,
  enabled: false,
  last_run_at: null,
  last_status: null,
};

const history: ScheduleRun[] = [
  {
    id: 2,
    schedule_id: 7,
    stack_id: "web",
    started_at: "2026-11-23T02:00:00Z",
    finished_at: "2026-11-23T02:01:05Z",
    outcome: "failed",
    archive: null,
    size: null,
    pruned: 0,
    error: "Push failed: the bucket is gone",
  },
  {
    id: 1,
    schedule_id: 7,
    stack_id: "db",
    started_at: "2026-11-23T02:00:00Z",
    finished_at: "2026-11-23T02:00:04Z",
    outcome: "succeeded",
    archive: "db--nas--20261123T020000Z.tar",
    size: 2_500_000,
    pruned: 3,
    error: null,
  },
];

const NEXT = ["2026-11-24T02:00:00Z", "2026-11-25T02:00:00Z", "2026-11-26T02:00:00Z", "2026-11-27T02:00:00Z", "2026-11-28T02:00:00Z"];

/** The server's preview: presets resolved, "bad" refused with a detail. */
function timetable(request: Request) {
  const url = new URL(request.url);
  const cron = url.searchParams.get("cron") ?? "";
  if (cron === "bad") {
    return json({ detail: "'bad' is not a cron expression of five fields (minute hour day month weekday)" }, { status: 400 });
  }
  const resolved = { daily: "0 3 * * *", hourly: "0 * * * *" }[cron] ?? cron;
  return json({ cron: resolved, next: NEXT });
}

const nas = makeAgent({ id: 3, name: "nas" });
const pi = makeAgent({ id: 5, name: "pi", url: "https://pi.lan:8443" });
const lab = makeAgent({ id: 6, name: "lab", enabled: false });

/** A schedule of agent nas's stacks. */
const onNas: Schedule = { ...weekdays, id: 9, name: "nas-nightly", agent_id: 3, stacks: ["media"], enabled: true };

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/schedules": [nightly, weekdays],
    "GET /api/destinations": [offsite],
    "GET /api/stacks": [makeStack({ id: "db" }), makeStack({ id: "web" })],
    "GET /api/timetable": timetable,
    "GET /api/agents": [nas, pi, lab],
    ...extra,
  };
}

describe("schedules page", () => {
  it("lists schedules: timetable, stacks, destination, next and last run, enabled", async () => {
    installFakeFetch(routes());
    renderApp("/schedules");

    const table = await screen.findByRole("table", { name: "Schedules" });
    const first = within(table).getByRole("row", { name: /nightly/ });
    expect(first).toHaveTextContent("Daily at 03:00 (Europe/Berlin)");
    expect(first).toHaveTextContent("Every stack");
    expect(await within(first).findByText("offsite")).toBeInTheDocument();
    expect(first).toHaveTextContent("failed");
    expect(within(first).getByRole("switch", { name: "nightly enabled" })).toBeChecked();
    const second = within(table).getByRole("row", { name: /weekdays/ });
    expect(second).toHaveTextContent("30 2 * * 1-5 (UTC)");
    expect(second).toHaveTextContent("db, web");
    expect(second).toHaveTextContent("This host only");
    expect(second).toHaveTextContent("Never");
    expect(within(second).getByRole("switch", { name: "weekdays enabled" })).not.toBeChecked();
  });

  it("is for admins only", async () => {
    const fake = installFakeFetch({ ...signedInAs(operatorUser), "GET /api/schedules": [nightly] });
    renderApp("/schedules");
    expect(await screen.findByText("Only admins manage backup schedules.")).toBeInTheDocument();
    expect(fake.calls("GET", "/api/schedules")).toHaveLength(0);
  });

  it("previews the next runs live: the default daily preset, a typed expression, and why one is refused", async () => {
    const fake = installFakeFetch(routes({ "GET /api/schedules": [] }));
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Add a schedule" }));
    const dialog = screen.getByRole("dialog", { name: "Add a schedule" });
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(within(dialog).getByLabelText("Time zone")).toHaveValue(zone);
    expect(within(dialog).getByRole("combobox", { name: "Runs" })).toHaveValue("daily");
    const next = await within(dialog).findByRole("list", { name: "Next runs" });
    expect(within(next).getAllByRole("listitem")).toHaveLength(5);
    expect(within(dialog).getByText("0 3 * * *")).toBeInTheDocument();

    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Runs" }), "custom");
    const cron = within(dialog).getByLabelText(/Cron expression/);
    expect(cron).toHaveValue("0 3 * * *");
    await user.clear(cron);
    await user.type(cron, "bad");
    expect(await within(dialog).findByText(/'bad' is not a cron expression/)).toBeInTheDocument();
    await user.clear(cron);
    await user.type(cron, "30 2 * * 1-5");
    expect(await within(dialog).findByText("30 2 * * 1-5")).toBeInTheDocument();
    const asked = fake.calls("GET", "/api/timetable").map((r) => new URL(r.url).searchParams.get("cron"));
    expect(asked).toEqual(expect.arrayContaining(["daily", "bad", "30 2 * * 1-5"]));
    expect(asked).not.toContain("30 2 * * 1"); // typing is not sent key by key
    expect(new URL(fake.calls("GET", "/api/timetable")[0]?.url ?? "").searchParams.get("timezone")).toBe(zone);
  });

  it("adds a schedule: picked stacks, a timetable, a destination, capture and retention", async () => {
    const fake = installFakeFetch(
      routes({ "GET /api/schedules": [], "POST /api/schedules": () => json(weekdays, { status: 201 }) }),
    );
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Add a schedule" }));
    const dialog = screen.getByRole("dialog", { name: "Add a schedule" });
    await user.type(within(dialog).getByLabelText("Name"), "weekdays");
    await user.click(within(dialog).getByRole("radio", { name: "Only the stacks picked here" }));
    const picks = await within(dialog).findByRole("group", { name: "Stacks to back up" });
    expect(within(dialog).getByRole("button", { name: "Add the schedule" })).toBeDisabled();
    await user.click(within(picks).getByRole("checkbox", { name: "web" }));
    await user.click(within(picks).getByRole("checkbox", { name: "db" }));
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Runs" }), "hourly");
    await user.clear(within(dialog).getByLabelText("Time zone"));
    await user.type(within(dialog).getByLabelText("Time zone"), "UTC");
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Destination" }), "offsite (S3)");
    await user.click(within(dialog).getByRole("checkbox", { name: /Include bind folders/ }));
    expect(within(dialog).getByRole("group", { name: "Retention" })).toHaveTextContent(
      "Retention applies per stack, here and at the destination, only to archives Stackyard named, and never removes the newest.",
    );
    await user.clear(within(dialog).getByLabelText("Keep the newest"));
    await user.type(within(dialog).getByLabelText("Keep the newest"), "3");
    await user.clear(within(dialog).getByLabelText("And one a week for (weeks)"));
    await user.type(within(dialog).getByLabelText("And one a week for (weeks)"), "4");
    await user.click(within(dialog).getByRole("button", { name: "Add the schedule" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/schedules")[0]?.json()).toEqual({
      name: "weekdays",
      kind: "backup",
      settle_seconds: 30,
      stacks: ["db", "web"],
      cron: "hourly",
      timezone: "UTC",
      destination_id: 4,
      capture: { volumes: null, binds: null, include_binds: false },
      keep_last: 3,
      keep_daily: 0,
      keep_weekly: 4,
      keep_monthly: 0,
      enabled: true,
      agent_id: null,
    });
    expect(screen.getByText("Schedule weekdays saved.")).toBeInTheDocument();
  });

  it("edits a schedule: its preset is found again and the whole spec is sent back", async () => {
    const fake = installFakeFetch(routes({ "PUT /api/schedules/7": { ...nightly, name: "nightly-2" } }));
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Edit nightly" }));
    const dialog = screen.getByRole("dialog", { name: "Edit nightly" });
    expect(within(dialog).getByRole("combobox", { name: "Runs" })).toHaveValue("daily");
    expect(within(dialog).getByLabelText("Time zone")).toHaveValue("Europe/Berlin");
    expect(within(dialog).getByRole("radio", { name: /Every stack/ })).toBeChecked();
    await waitFor(() => expect(within(dialog).getByRole("combobox", { name: "Destination" })).toHaveValue("4"));
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Runs" }), "hourly");
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("PUT", "/api/schedules/7")[0]?.json()).toEqual({
      name: "nightly",
      kind: "backup",
      settle_seconds: 30,
      stacks: null,
      cron: "hourly",
      timezone: "Europe/Berlin",
      destination_id: 4,
      capture: { include_binds: true, volumes: null, binds: null },
      keep_last: 7,
      keep_daily: 14,
      keep_weekly: 0,
      keep_monthly: 6,
      enabled: true,
      agent_id: null,
    });
  });

  it("disables with the switch, runs now (showing a 409), and deletes after a confirmation", async () => {
    let listed = [nightly, weekdays];
    const fake = installFakeFetch(
      routes({
        "GET /api/schedules": () => json(listed),
        "PUT /api/schedules/7": { ...nightly, enabled: false },
        "POST /api/schedules/7/run": () => json({ detail: "Schedule 'nightly' is running" }, { status: 409 }),
        "POST /api/schedules/8/run": () => {
          listed = [nightly, { ...weekdays, running: true }];
          return json(listed[1], { status: 202 });
        },
        "GET /api/schedules/8/runs": [],
        "DELETE /api/schedules/8": () => noContent(),
      }),
    );
    const { user } = renderApp("/schedules");
    const table = await screen.findByRole("table", { name: "Schedules" });
    const first = within(table).getByRole("row", { name: /nightly/ });
    await user.click(within(first).getByRole("switch", { name: "nightly enabled" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/schedules/7")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/schedules/7")[0]?.json()).toMatchObject({
      name: "nightly",
      enabled: false,
      keep_daily: 14,
      agent_id: null,
    });

    await user.click(within(first).getByRole("button", { name: "Run nightly now" }));
    expect(await within(first).findByRole("alert")).toHaveTextContent("Schedule 'nightly' is running");

    const second = within(table).getByRole("row", { name: /weekdays/ });
    await user.click(within(second).getByRole("button", { name: "Run weekdays now" }));
    expect(await within(second).findByText("Running…")).toBeInTheDocument();
    expect(within(second).getByRole("button", { name: "Run weekdays now" })).toBeDisabled();

    await user.click(within(second).getByRole("button", { name: "Delete weekdays" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete schedule weekdays?" });
    expect(confirm).toHaveAccessibleDescription(/The archives it made stay/);
    await user.click(within(confirm).getByRole("button", { name: "Delete the schedule" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/schedules/8")).toHaveLength(1));
  });

  it("shows a schedule's history: outcome, stack, start, duration, size, pruned and the error", async () => {
    installFakeFetch(routes({ "GET /api/schedules/7/runs": history }));
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "History of nightly" }));
    const table = await screen.findByRole("table", { name: "History of nightly" });
    const failed = within(table).getByRole("row", { name: /web/ });
    expect(failed).toHaveTextContent("Failed");
    expect(failed).toHaveTextContent("1 min 5 s");
    expect(failed).toHaveTextContent("Push failed: the bucket is gone");
    const succeeded = within(table).getByRole("row", { name: /db/ });
    expect(succeeded).toHaveTextContent("Succeeded");
    expect(succeeded).toHaveTextContent("4 s");
    expect(succeeded).toHaveTextContent("2.5 MB");
    expect(within(succeeded).getAllByRole("cell").map((c) => c.textContent)[5]).toBe("3");

    await user.click(screen.getByRole("button", { name: "Close History of nightly" }));
    expect(screen.queryByRole("table", { name: "History of nightly" })).not.toBeInTheDocument();
  });
});

describe("schedules on agents", () => {
  it("shows each schedule's host", async () => {
    installFakeFetch(routes({ "GET /api/schedules": [nightly, onNas, { ...onNas, id: 10, name: "gone", agent_id: 12 }] }));
    renderApp("/schedules");

    const table = await screen.findByRole("table", { name: "Schedules" });
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)[1]).toBe("Host");
    const local = within(table).getByRole("row", { name: /^nightly/ });
    expect(within(local).getAllByRole("cell")[0]).toHaveTextContent("This host");
    const agent = within(table).getByRole("row", { name: /^nas-nightly/ });
    await waitFor(() => expect(within(agent).getAllByRole("cell")[0]).toHaveTextContent("nas"));
    expect(agent).toHaveTextContent("nas only");
    expect(within(within(table).getByRole("row", { name: /gone/ })).getAllByRole("cell")[0]).toHaveTextContent("Agent #12");
  });

  it("adds a schedule on an agent: the host select lists enabled agents and the picker that host's stacks", async () => {
    const fake = installFakeFetch(
      routes({
        "GET /api/schedules": [],
        "GET /api/agents/3/stacks": [makeStack({ id: "media" }), makeStack({ id: "photos" })],
        "POST /api/schedules": () => json(onNas, { status: 201 }),
      }),
    );
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Add a schedule" }));
    const dialog = screen.getByRole("dialog", { name: "Add a schedule" });
    const hostSelect = within(dialog).getByRole("combobox", { name: "Host" });
    expect(hostSelect).toHaveValue("");
    await waitFor(() =>
      expect(within(hostSelect).getAllByRole("option").map((o) => o.textContent)).toEqual(["This host", "nas", "pi"]),
    );
    await user.type(within(dialog).getByLabelText("Name"), "nas-nightly");
    await user.click(within(dialog).getByRole("radio", { name: "Only the stacks picked here" }));
    const localPicks = await within(dialog).findByRole("group", { name: "Stacks to back up" });
    await user.click(within(localPicks).getByRole("checkbox", { name: "web" }));

    await user.selectOptions(hostSelect, "nas");
    expect(within(dialog).getByRole("group", { name: "Stacks on nas" })).toBeInTheDocument();
    const picks = await within(dialog).findByRole("group", { name: "Stacks to back up" });
    await waitFor(() =>
      expect(within(picks).getAllByRole("checkbox").map((c) => c.closest("label")?.textContent)).toEqual(["media", "photos"]),
    );
    // What was picked on this host does not follow to another.
    expect(within(dialog).getByRole("button", { name: "Add the schedule" })).toBeDisabled();
    await user.click(within(picks).getByRole("checkbox", { name: "media" }));
    expect(within(within(dialog).getByRole("combobox", { name: "Destination" })).getAllByRole("option")[0]).toHaveTextContent(
      "nas only",
    );
    await user.click(within(dialog).getByRole("button", { name: "Add the schedule" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(fake.calls("GET", "/api/agents/3/stacks").length).toBeGreaterThan(0);
    expect(await fake.calls("POST", "/api/schedules")[0]?.json()).toMatchObject({
      name: "nas-nightly",
      agent_id: 3,
      stacks: ["media"],
    });
  });

  it("keeps the agent when editing and when switching a schedule off", async () => {
    const fake = installFakeFetch(
      routes({
        "GET /api/schedules": [onNas],
        "GET /api/agents/3/stacks": [makeStack({ id: "media" })],
        "PUT /api/schedules/9": (request: Request) => request.json().then((spec: object) => json({ ...onNas, ...spec })),
      }),
    );
    const { user } = renderApp("/schedules");
    const table = await screen.findByRole("table", { name: "Schedules" });
    await user.click(within(table).getByRole("switch", { name: "nas-nightly enabled" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/schedules/9")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/schedules/9")[0]?.json()).toMatchObject({ agent_id: 3, enabled: false });

    await user.click(within(table).getByRole("button", { name: "Edit nas-nightly" }));
    const dialog = screen.getByRole("dialog", { name: "Edit nas-nightly" });
    await waitFor(() => expect(within(dialog).getByRole("combobox", { name: "Host" })).toHaveValue("3"));
    const picks = await within(dialog).findByRole("group", { name: "Stacks to back up" });
    expect(within(picks).getByRole("checkbox", { name: "media" })).toBeChecked();
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/schedules/9")).toHaveLength(2));
    expect(await fake.calls("PUT", "/api/schedules/9")[1]?.json()).toMatchObject({ agent_id: 3, stacks: ["media"] });
  });

  it("says why an agent's stacks cannot be picked", async () => {
    installFakeFetch(routes({ "GET /api/schedules": [{ ...onNas, agent_id: 6 }] }));
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Edit nas-nightly" }));
    const dialog = screen.getByRole("dialog", { name: "Edit nas-nightly" });

    await waitFor(() => expect(within(dialog).getByRole("combobox", { name: "Host" })).toHaveValue("6"));
    expect(within(dialog).getByRole("option", { name: "lab (disabled)" })).toBeInTheDocument();
    expect(await within(dialog).findByText(/lab is disabled/)).toBeInTheDocument();
  });
});

const drills: Schedule = {
  ...nightly,
  id: 11,
  name: "sunday-drill",
  kind: "drill",
  settle_seconds: 10,
  cron: "0 5 * * 0",
  destination_id: null,
  last_status: "succeeded",
};

const drillHistory: ScheduleRun[] = [
  {
    id: 5,
    schedule_id: 11,
    stack_id: "web",
    started_at: "2026-11-22T05:00:00Z",
    finished_at: "2026-11-22T05:00:41Z",
    outcome: "failed",
    archive: "web--nas--20261122T030000Z.tar",
    size: null,
    pruned: 0,
    error: "db: unhealthy after 300 s",
  },
  {
    id: 4,
    schedule_id: 11,
    stack_id: "db",
    started_at: "2026-11-22T05:00:00Z",
    finished_at: "2026-11-22T05:00:12Z",
    outcome: "succeeded",
    archive: "db--nas--20261122T030000Z.tar",
    size: null,
    pruned: 0,
    error: null,
  },
];

describe("restore drill schedules", () => {
  it("lists a drill with its kind and where it takes the latest backup from", async () => {
    installFakeFetch(routes({ "GET /api/schedules": [nightly, drills, { ...drills, id: 12, name: "offsite-drill", destination_id: 4 }] }));
    renderApp("/schedules");

    const table = await screen.findByRole("table", { name: "Schedules" });
    const local = within(table).getByRole("row", { name: /sunday-drill/ });
    expect(within(local).getByRole("rowheader")).toHaveTextContent("sunday-drill Restore drill");
    expect(local).toHaveTextContent("This host's archives");
    const offsiteDrill = within(table).getByRole("row", { name: /offsite-drill/ });
    expect(await within(offsiteDrill).findByText("Latest from offsite")).toBeInTheDocument();
    const backup = within(table).getByRole("row", { name: /^nightly/ });
    expect(within(backup).getByRole("rowheader")).not.toHaveTextContent("Restore drill");
  });

  it("adds a drill: no capture or retention, the archives' source and a settle time instead", async () => {
    const fake = installFakeFetch(
      routes({ "GET /api/schedules": [], "POST /api/schedules": () => json(drills, { status: 201 }) }),
    );
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Add a schedule" }));
    const dialog = screen.getByRole("dialog", { name: "Add a schedule" });
    expect(within(dialog).getByRole("radio", { name: "Back up" })).toBeChecked();
    expect(within(dialog).getByRole("group", { name: "Retention" })).toBeInTheDocument();
    expect(within(dialog).queryByLabelText("Settle time (seconds)")).not.toBeInTheDocument();

    await user.type(within(dialog).getByLabelText("Name"), "sunday-drill");
    await user.click(within(dialog).getByRole("radio", { name: "Restore drill" }));
    expect(within(dialog).queryByRole("group", { name: "Retention" })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("checkbox", { name: /Include bind folders/ })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("combobox", { name: "Destination" })).not.toBeInTheDocument();
    const source = within(dialog).getByRole("combobox", { name: "Take the latest backup from" });
    expect(source).toHaveValue("");
    expect(within(source).getAllByRole("option")[0]).toHaveTextContent("This host's archives");
    await user.click(within(dialog).getByRole("radio", { name: "Only the stacks picked here" }));
    const picks = await within(dialog).findByRole("group", { name: "Stacks to drill" });
    await user.click(within(picks).getByRole("checkbox", { name: "web" }));
    const settle = within(dialog).getByLabelText("Settle time (seconds)");
    expect(settle).toHaveValue(30);
    await user.clear(settle);
    await user.type(settle, "10");
    await user.click(within(dialog).getByRole("button", { name: "Add the schedule" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/schedules")[0]?.json()).toEqual({
      name: "sunday-drill",
      kind: "drill",
      settle_seconds: 10,
      stacks: ["web"],
      cron: "daily",
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      destination_id: null,
      capture: { volumes: null, binds: null, include_binds: true },
      keep_last: 7,
      keep_daily: 0,
      keep_weekly: 0,
      keep_monthly: 0,
      enabled: true,
      agent_id: null,
    });
  });

  it("edits a drill: its kind, settle time and source are shown and sent back", async () => {
    const fake = installFakeFetch(routes({ "GET /api/schedules": [{ ...drills, destination_id: 4 }], "PUT /api/schedules/11": drills }));
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Edit sunday-drill" }));
    const dialog = screen.getByRole("dialog", { name: "Edit sunday-drill" });
    expect(within(dialog).getByRole("radio", { name: "Restore drill" })).toBeChecked();
    expect(within(dialog).getByLabelText("Settle time (seconds)")).toHaveValue(10);
    await waitFor(() =>
      expect(within(dialog).getByRole("combobox", { name: "Take the latest backup from" })).toHaveValue("4"),
    );
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/schedules/11")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/schedules/11")[0]?.json()).toMatchObject({
      kind: "drill",
      settle_seconds: 10,
      destination_id: 4,
    });
  });

  it("shows a drill's history: restore verified, or why the drill failed, and the archive drilled", async () => {
    installFakeFetch(routes({ "GET /api/schedules": [drills], "GET /api/schedules/11/runs": drillHistory }));
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "History of sunday-drill" }));
    const table = await screen.findByRole("table", { name: "History of sunday-drill" });
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual([
      "Outcome",
      "Stack",
      "Archive",
      "Started",
      "Duration",
    ]);
    const failed = within(table).getByRole("row", { name: /web--nas/ });
    expect(failed).toHaveTextContent("Drill failed: db: unhealthy after 300 s");
    expect(failed).toHaveTextContent("41 s");
    const verified = within(table).getByRole("row", { name: /db--nas/ });
    expect(within(verified).getAllByRole("cell")[0]).toHaveTextContent(/^Restore verified$/);
    expect(verified).toHaveTextContent("12 s");
  });
});

const weeklyPrune: Schedule = {
  ...nightly,
  id: 13,
  name: "weekly-prune",
  kind: "prune",
  cron: "0 4 * * 0",
  destination_id: null,
  stacks: null,
  agent_id: 3,
  prune: { images: "unused", containers: true, networks: false, build_cache: true, volumes: "none" },
  last_status: "succeeded",
};

const pruneHistory: ScheduleRun[] = [
  {
    id: 8,
    schedule_id: 13,
    stack_id: "*",
    started_at: "2026-11-22T04:00:00Z",
    finished_at: "2026-11-22T04:00:07Z",
    outcome: "succeeded",
    archive: null,
    size: 1_250_000_000,
    pruned: 14,
    error: "1 left: a container uses it now",
  },
  {
    id: 7,
    schedule_id: 13,
    stack_id: "*",
    started_at: "2026-11-15T04:00:00Z",
    finished_at: "2026-11-15T04:00:01Z",
    outcome: "failed",
    archive: null,
    size: null,
    pruned: 0,
    error: "Agent 'nas' cannot be reached: connection refused",
  },
];

describe("disk prune schedules", () => {
  it("lists a prune with its kind, the host's disk for stacks, and no destination", async () => {
    installFakeFetch(routes({ "GET /api/schedules": [nightly, weeklyPrune] }));
    renderApp("/schedules");

    const table = await screen.findByRole("table", { name: "Schedules" });
    const row = within(table).getByRole("row", { name: /weekly-prune/ });
    expect(within(row).getByRole("rowheader")).toHaveTextContent("weekly-prune Disk prune");
    expect(row).toHaveTextContent("The host's disk");
    expect(await within(row).findByText("nas")).toBeInTheDocument();
    expect(row).not.toHaveTextContent("Every stack");
    expect(row).not.toHaveTextContent("only");
  });

  it("adds a prune on an agent: its options instead of stacks, destination, capture and retention", async () => {
    const fake = installFakeFetch(
      routes({
        "GET /api/schedules": [],
        "POST /api/schedules": () => json(weeklyPrune, { status: 201 }),
        "GET /api/agents": [makeAgent({ id: 3, name: "nas", capabilities: [...ALL_CAPABILITIES, "disk"] }), pi],
      }),
    );
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Add a schedule" }));
    const dialog = screen.getByRole("dialog", { name: "Add a schedule" });
    await user.type(within(dialog).getByLabelText("Name"), "weekly-prune");
    await user.click(within(dialog).getByRole("radio", { name: "Only the stacks picked here" }));
    await user.click(within(dialog).getByRole("radio", { name: "Prune the disk" }));
    expect(within(dialog).queryByRole("radio", { name: "Every stack (those added later too)" })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("combobox", { name: "Destination" })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("group", { name: "Retention" })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("checkbox", { name: /Include bind folders/ })).not.toBeInTheDocument();
    const takes = within(dialog).getByRole("group", { name: "What it takes" });
    expect(takes).toHaveTextContent("Never taken, whatever is chosen");
    expect(within(within(takes).getByRole("group", { name: "Images" })).getByRole("radio", { name: /Dangling/ })).toBeChecked();
    await user.click(within(within(takes).getByRole("group", { name: "Images" })).getByRole("radio", { name: "Every image no container uses" }));
    await user.click(within(takes).getByRole("checkbox", { name: "Networks no container uses" }));
    // An agent too old to prune its disk: said, and nothing to add.
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Host" }), "pi");
    expect(await within(dialog).findByText(/on pi: .*does not offer its disk/)).toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Add the schedule" })).toBeDisabled();
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Host" }), "nas");
    expect(within(dialog).getByRole("button", { name: "Add the schedule" })).toBeEnabled();
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Runs" }), "weekly");
    await user.click(within(dialog).getByRole("button", { name: "Add the schedule" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/schedules")[0]?.json()).toMatchObject({
      name: "weekly-prune",
      kind: "prune",
      agent_id: 3,
      stacks: null,
      destination_id: null,
      cron: "weekly",
      prune: { images: "unused", containers: true, networks: false, build_cache: true, volumes: "none" },
    });
    expect(fake.calls("GET", "/api/agents/3/stacks")).toHaveLength(0);
  });

  it("edits a prune: its options are shown and sent back", async () => {
    const fake = installFakeFetch(
      routes({
        "GET /api/schedules": [weeklyPrune],
        "PUT /api/schedules/13": weeklyPrune,
        "GET /api/agents": [makeAgent({ id: 3, name: "nas", capabilities: [...ALL_CAPABILITIES, "disk"] })],
      }),
    );
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "Edit weekly-prune" }));
    const dialog = screen.getByRole("dialog", { name: "Edit weekly-prune" });
    expect(within(dialog).getByRole("radio", { name: "Prune the disk" })).toBeChecked();
    const takes = within(dialog).getByRole("group", { name: "What it takes" });
    expect(within(within(takes).getByRole("group", { name: "Images" })).getByRole("radio", { name: "Every image no container uses" })).toBeChecked();
    expect(within(takes).getByRole("checkbox", { name: "Networks no container uses" })).not.toBeChecked();
    await user.click(within(within(takes).getByRole("group", { name: "Volumes" })).getByRole("radio", { name: /Anonymous/ }));
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/schedules/13")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/schedules/13")[0]?.json()).toMatchObject({
      kind: "prune",
      prune: { images: "unused", containers: true, networks: false, build_cache: true, volumes: "anonymous" },
    });
  });

  it("shows a prune's history: bytes freed, objects removed, what was left or why it failed", async () => {
    installFakeFetch(routes({ "GET /api/schedules": [weeklyPrune], "GET /api/schedules/13/runs": pruneHistory }));
    const { user } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "History of weekly-prune" }));
    const table = await screen.findByRole("table", { name: "History of weekly-prune" });
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual([
      "Outcome",
      "Started",
      "Duration",
      "Freed",
      "Removed",
      "Notes",
    ]);
    const [done, failed] = within(table).getAllByRole("row").slice(1) as [HTMLElement, HTMLElement];
    expect(done).toHaveTextContent("Succeeded");
    expect(done).toHaveTextContent("1.3 GB");
    expect(done).toHaveTextContent("14 objects");
    expect(done).toHaveTextContent("1 left: a container uses it now");
    expect(failed).toHaveTextContent("Failed");
    expect(failed).toHaveTextContent("Agent 'nas' cannot be reached");
    expect(table).not.toHaveTextContent("every stack");
  });
});

describe("a running schedule's history", () => {
  it("is read again once the schedule has stopped, for the outcome of its last stack", async () => {
    const started: ScheduleRun = {
      id: 3,
      schedule_id: 7,
      stack_id: "db",
      started_at: "2026-11-24T09:00:00Z",
      finished_at: null,
      outcome: "running",
      archive: null,
      size: null,
      pruned: 0,
      error: null,
    };
    let listed = [{ ...nightly, running: true }];
    let runs: ScheduleRun[] = [started];
    installFakeFetch(routes({ "GET /api/schedules": () => json(listed), "GET /api/schedules/7/runs": () => json(runs) }));
    const { user, queryClient } = renderApp("/schedules");
    await user.click(await screen.findByRole("button", { name: "History of nightly" }));
    const table = await screen.findByRole("table", { name: "History of nightly" });
    expect(within(table).getByRole("row", { name: /db/ })).toHaveTextContent("Running…");

    runs = [{ ...started, finished_at: "2026-11-24T09:00:07Z", outcome: "succeeded", size: 1_000_000, pruned: 1 }];
    listed = [{ ...nightly, running: false, last_status: "succeeded" }];
    await act(() => queryClient.invalidateQueries({ queryKey: ["schedules"] }));
    await waitFor(() => expect(within(table).getByRole("row", { name: /db/ })).toHaveTextContent("Succeeded"));
    expect(within(table).getByRole("row", { name: /db/ })).toHaveTextContent("7 s");
  });
});

describe("timetable helpers", () => {
  it("names presets by their resolved expressions, and shows other expressions as they are", () => {
    expect(presetOf("0 3 * * *")).toBe("daily");
    expect(presetOf(" 0  *  * * * ")).toBe("hourly");
    expect(presetOf("weekly")).toBe("weekly");
    expect(presetOf("0 4 * * *")).toBeNull();
    expect(describeTimetable("0 3 1 * *", "UTC")).toBe("Monthly, on the 1st at 03:00 (UTC)");
    expect(describeTimetable("*/15 * * * *", "Asia/Tokyo")).toBe("*/15 * * * * (Asia/Tokyo)");
  });

  it("formats durations", () => {
    expect(formatDuration("2026-01-01T00:00:00Z", null)).toBe("—");
    expect(formatDuration("2026-01-01T00:00:00Z", "2026-01-01T00:00:09Z")).toBe("9 s");
    expect(formatDuration("2026-01-01T00:00:00Z", "2026-01-01T01:02:03Z")).toBe("1 h 2 min");
  });
});
