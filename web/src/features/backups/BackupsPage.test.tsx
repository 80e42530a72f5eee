import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type {
  ArchiveInfo,
  BackupManifest,
  Destination,
  DrillRecord,
  Inventory,
  RemoteArchive,
  RestoreOptions,
  RestorePreview,
} from "../../api/types";
import { makeAgent } from "../../test/agentFixtures";
import { openSource } from "../../test/fakeEventSource";
import { installFakeFetch, json, noContent } from "../../test/fakeFetch";
import { installFakeXhr, pendingXhr } from "../../test/fakeXhr";
import { adminUser, operatorUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeRun, makeSummary } from "../../test/stackFixtures";

const archive: ArchiveInfo = {
  name: "web--nas--20261123T150405Z.tar",
  size: 4_200_000,
  stack_id: "web",
  host: "nas",
  created_at: "2026-11-23T15:04:05Z",
  format_version: 2,
  assets: ["volume:web_db", "bind:/srv/web/data"],
  error: null,
};

const manifest = {
  format_version: 2,
  stack_id: "web",
  created_at: "2026-11-23T15:04:05Z",
  service_version: "0.1.0",
  host: "nas",
  inventory: null,
  stack_member: "stack.tar.gz",
  stack_sha256: "x",
  compression: "gzip",
  assets: [
    {
      key: "volume:web_db",
      member: "volumes/0.tar.gz",
      captured: true,
      bytes: 10,
      files: 1,
      sha256: "a",
      skipped: null,
      fidelity: {
        tool: "busybox-tar",
        kept: ["mode", "owners"],
        not_kept: ["mtime_ns", "xattrs", "acls", "sparse", "trusted_xattrs"],
      },
    },
    { key: "bind:/srv/web/data", member: "binds/0.tar.gz", captured: true, bytes: 10, files: 1, sha256: "b", skipped: null },
  ],
} as unknown as BackupManifest;

function preview(outside: RestorePreview["outside"] = [], stack = "web"): RestorePreview {
  return { stack, stack_exists: true, renamed: false, writes: ["volume web_db"], outside, skipped: {} };
}

function routes(user = adminUser, extra = {}) {
  return {
    ...signedInAs(user),
    "GET /api/backups": [archive],
    [`GET /api/backups/${archive.name}`]: manifest,
    ...extra,
    // (After the routes given: a stack's own, given there, is matched first.)
    "GET /api/stacks/:id/drills": [],
  };
}

describe("backups page", () => {
  it("lists archives; an operator verifies, an admin also downloads, restores and deletes", async () => {
    installFakeFetch(
      routes(operatorUser, {
        [`POST /api/backups/${archive.name}/verify`]: { name: archive.name, ok: true, members: [{ member: "stack.tar.gz", files: 2, bytes: 10, special: ["data/bin/ping"] }], error: null },
      }),
    );
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    const row = within(table).getByRole("row", { name: /web--nas/ });
    expect(row).toHaveTextContent("nas");
    expect(row).toHaveTextContent("4.2 MB");
    expect(within(row).queryByRole("link", { name: "Download" })).not.toBeInTheDocument();
    expect(within(row).queryByRole("button", { name: "Push…" })).not.toBeInTheDocument();
    expect(screen.queryByLabelText("Upload an archive")).not.toBeInTheDocument();
    await user.click(within(row).getByRole("button", { name: "Verify" }));
    const checked = await within(row).findByRole("status");
    expect(checked).toHaveTextContent("every checksum right");
    expect(checked).toHaveTextContent("written only when the restore asks for them: bin/ping");
  });

  it("restores: asks to confirm replacing the stack after the server's 409", async () => {
    let calls = 0;
    const fake = installFakeFetch(
      routes(adminUser, {
        [`POST /api/backups/${archive.name}/restore`]: async (request: Request) => {
          calls += 1;
          const body = (await request.json()) as { overwrite: boolean };
          if (!body.overwrite) return json({ detail: "Stack 'web' exists: restoring over it needs overwrite" }, { status: 409 });
          return json(makeRun({ id: "r1", stack: "web", action: "restore" }, { mode: "transfer", percent: 0 }), { status: 202 });
        },
        "GET /api/stacks/web/run": makeRun({ id: "r1", stack: "web", action: "restore" }),
        [`POST /api/backups/${archive.name}/restore/preview`]: preview(),
      }),
    );
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    expect(within(table).getByRole("link", { name: "Download" })).toHaveAttribute(
      "href",
      `/api/backups/${archive.name}/download`,
    );
    await user.click(within(table).getByRole("button", { name: "Restore" }));
    const dialog = await screen.findByRole("dialog", { name: `Restore ${archive.name}` });
    await waitFor(() => expect(within(dialog).getAllByRole("checkbox")).toHaveLength(4));
    // A part read without GNU tar says what it did not keep; one read with it says nothing.
    expect(within(dialog).getByRole("checkbox", { name: /web_db/ }).closest("label")).toHaveTextContent(
      "not kept: times finer than a second, xattrs, ACLs, sparseness, trusted.* xattrs",
    );
    expect(within(dialog).getByRole("checkbox", { name: /\/srv\/web\/data/ }).closest("label")).not.toHaveTextContent(
      "not kept",
    );
    await user.click(within(dialog).getByRole("checkbox", { name: /\/srv\/web\/data/ }));
    // The choice changed: Restore waits for the preview of it (asked once the choices settle).
    expect(within(dialog).getByRole("button", { name: "Restore" })).toBeDisabled();
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Restore" })).toBeEnabled());
    await user.click(within(dialog).getByRole("button", { name: "Restore" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("needs overwrite");
    expect(within(dialog).getByRole("button", { name: "Restore" })).toBeDisabled();
    await user.click(within(dialog).getByRole("checkbox", { name: /Replace stack web/ }));
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Restore over it" })).toBeEnabled());
    await user.click(within(dialog).getByRole("button", { name: "Restore over it" }));
    expect(await screen.findByRole("region", { name: "Deploy web" })).toBeInTheDocument();
    const sent: unknown = await fake.calls("POST", `/api/backups/${archive.name}/restore`)[1]?.json();
    expect(sent).toEqual({
      stack: null,
      overwrite: true,
      restore_binds: true,
      assets: ["volume:web_db"],
      special_files: false,
      bind_paths: null,
      confirm_paths: [],
    });
    expect(calls).toBe(2);
  });

  it("shows what a clone writes outside the stack folder, lets the user move it, and confirms it", async () => {
    const fake = installFakeFetch(
      routes(adminUser, {
        [`POST /api/backups/${archive.name}/restore/preview`]: async (request: Request) => {
          const body = (await request.json()) as { stack: string | null; bind_paths: Record<string, string> | null };
          const path = body.bind_paths?.["/srv/web/data"] ?? (body.stack ? `/srv/web/data-${body.stack}` : "/srv/web/data");
          return json(preview([{ key: "bind:/srv/web/data", path, replaced: !body.stack }]));
        },
        [`POST /api/backups/${archive.name}/restore`]: () =>
          json(makeRun({ id: "r2", stack: "web2", action: "restore" }, { mode: "transfer", percent: 0 }), { status: 202 }),
        "GET /api/stacks/web2/run": makeRun({ id: "r2", stack: "web2", action: "restore" }),
      }),
    );
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    await user.click(within(table).getByRole("button", { name: "Restore" }));
    const dialog = await screen.findByRole("dialog", { name: `Restore ${archive.name}` });
    const plan = within(dialog).getByRole("region", { name: "What the restore writes" });
    expect(await within(plan).findByText("/srv/web/data")).toBeInTheDocument();
    expect(within(plan).getByText("will be replaced")).toBeInTheDocument();

    await user.type(within(dialog).getByLabelText("Restore as (empty: as itself)"), "web2");
    await waitFor(() => expect(within(plan).getByLabelText("/srv/web/data for web2")).toHaveValue("/srv/web/data-web2"));
    const moved = within(plan).getByLabelText("/srv/web/data for web2");
    expect(within(plan).getByText("will be created")).toBeInTheDocument();
    await user.clear(moved);
    await user.type(moved, "/srv/copies/web2-data");
    await user.tab();
    await waitFor(() => expect(within(plan).getByLabelText("/srv/web/data for web2")).toHaveValue("/srv/copies/web2-data"));
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Restore" })).toBeEnabled());
    await user.click(within(dialog).getByRole("button", { name: "Restore" }));
    expect(await screen.findByRole("region", { name: "Deploy web2" })).toBeInTheDocument();
    const sent = (await fake.calls("POST", `/api/backups/${archive.name}/restore`)[0]?.json()) as RestoreOptions;
    expect(sent.bind_paths).toEqual({ "/srv/web/data": "/srv/copies/web2-data" });
    expect(sent.confirm_paths).toEqual(["/srv/copies/web2-data"]);
  });

  it("deletes after a confirmation, and uploads with a byte count", async () => {
    installFakeXhr();
    const fake = installFakeFetch(routes(adminUser, { [`DELETE /api/backups/${archive.name}`]: () => noContent() }));
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    await user.click(within(table).getByRole("button", { name: `Delete ${archive.name}` }));
    const confirm = await screen.findByRole("alertdialog", { name: `Delete ${archive.name}?` });
    await user.click(within(confirm).getByRole("button", { name: "Delete the archive" }));
    await waitFor(() => expect(fake.calls("DELETE", `/api/backups/${archive.name}`)).toHaveLength(1));

    const file = new File([new Uint8Array(2000)], "other.tar", { type: "application/x-tar" });
    await user.upload(screen.getByLabelText("Upload an archive"), file);
    const xhr = pendingXhr();
    expect(xhr?.method).toBe("PUT");
    expect(xhr?.url).toMatch(/\/api\/backups\/upload$/);
    await xhr?.progress(1000, 2000);
    expect(screen.getByText(/Uploading other.tar: 1.0 kB of 2.0 kB/)).toBeInTheDocument();
    await xhr?.respond(201, { ...archive, name: "other--x--20260101T000000Z.tar" });
    expect(await screen.findByText(/Uploaded and checked: other--x/)).toBeInTheDocument();

    // The same archive again: asked about, kept beside it only when the user says so.
    await user.upload(screen.getByLabelText("Upload an archive"), file);
    await pendingXhr()?.respond(409, { detail: "other--x--20260101T000000Z.tar is already on this host" });
    const ask = await screen.findByRole("alertdialog", { name: "Keep both archives?" });
    expect(ask).toHaveTextContent("other--x--20260101T000000Z.tar is already on this host");
    await user.click(within(ask).getByRole("button", { name: "Keep both" }));
    const again = pendingXhr();
    expect(again?.url).toMatch(/\/api\/backups\/upload\?keep_both=true$/);
    await again?.respond(201, { ...archive, name: "other--x--20260101T000000Z-2.tar" });
    expect(await screen.findByText(/Uploaded and checked: other--x--20260101T000000Z-2.tar/)).toBeInTheDocument();
  });
});

const older: ArchiveInfo = { ...archive, name: "web--nas--20261120T150405Z.tar", created_at: "2026-11-20T15:04:05Z" };

function drillRecord(overrides: Partial<DrillRecord> = {}): DrillRecord {
  const finished = new Date(Date.now() - 3 * 60_000).toISOString();
  return {
    id: "d1",
    stack: "web",
    archive: archive.name,
    clone: "stackyard-drill-abc123",
    started_at: finished,
    finished_at: finished,
    verified: true,
    compared: 2,
    files: 14,
    bytes: 1_200_000,
    started: true,
    services: ["db: healthy"],
    notes: [],
    error: null,
    ...overrides,
  };
}

describe("restore drills", () => {
  it("an operator drills an archive: the run is followed, then the stack's last drill and the archive's badge show", async () => {
    let drilled: DrillRecord[] = [];
    const fake = installFakeFetch(
      routes(operatorUser, {
        "GET /api/backups": [archive, older],
        "GET /api/stacks/web/drills": () => json(drilled),
        [`POST /api/backups/${archive.name}/drill`]: () =>
          json(makeRun({ id: "d1", stack: "web", action: "drill" }, { mode: "transfer", percent: 0 }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    const drills = screen.getByRole("region", { name: "Restore drills" });
    expect(await within(drills).findByRole("listitem", { name: "Last drill of web" })).toHaveTextContent(
      "web: No restore drill yet.",
    );
    const row = within(table).getByRole("row", { name: new RegExp(archive.name) });
    expect(within(row).queryByText("verified")).not.toBeInTheDocument();

    await user.click(within(row).getByRole("button", { name: "Drill" }));
    const dialog = await screen.findByRole("dialog", { name: `Restore drill of ${archive.name}` });
    expect(dialog).toHaveTextContent("The stack itself and its data are not touched.");
    const settle = within(dialog).getByLabelText("Settle time (seconds)");
    expect(settle).toHaveValue(30);
    await user.clear(settle);
    await user.type(settle, "5");
    await user.click(within(dialog).getByRole("button", { name: "Start the drill" }));

    const console = await screen.findByRole("region", { name: "Deploy web" });
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(within(console).getByRole("heading", { name: `Restore drill of ${archive.name}` })).toBeInTheDocument();
    expect(await fake.calls("POST", `/api/backups/${archive.name}/drill`)[0]?.json()).toEqual({ settle_seconds: 5 });

    drilled = [drillRecord()];
    await openSource("/api/stacks/web/run/events")?.emit(
      "state",
      makeRun(
        { id: "d1", stack: "web", action: "drill", status: "succeeded", summary: "restore verified" },
        { mode: "transfer", percent: 100 },
      ),
    );
    expect(within(console).getByRole("status")).toHaveTextContent("drill succeeded: restore verified");
    const last = within(drills).getByRole("listitem", { name: "Last drill of web" });
    await waitFor(() =>
      expect(last).toHaveTextContent(
        "web: Restore verified 3 min ago: 2 volumes and folders, 14 files, 1.2 MB — db: healthy",
      ),
    );
    expect(within(row).getByText("verified")).toBeInTheDocument();
    const other = within(table).getByRole("row", { name: new RegExp(older.name) });
    expect(within(other).queryByText("verified")).not.toBeInTheDocument();
  });

  it("shows why the last drill failed and what it left out; a verified older drill still marks its archive", async () => {
    installFakeFetch(
      routes(operatorUser, {
        "GET /api/backups": [archive, older],
        "GET /api/stacks/web/drills": [
          drillRecord({
            id: "d2",
            verified: false,
            started: false,
            services: [],
            error: "volume web_db: data/table differs from the archive",
            notes: ["volume web_cache: not of the backup, an empty one in the drill", "/etc/hostname: outside the backup, not mounted"],
          }),
          drillRecord({ id: "d1", archive: older.name }),
        ],
      }),
    );
    const { user } = renderApp("/backups");
    const drills = await screen.findByRole("region", { name: "Restore drills" });
    const last = within(drills).getByRole("listitem", { name: "Last drill of web" });
    await waitFor(() =>
      expect(last).toHaveTextContent(
        "web: Restore drill failed 3 min ago: volume web_db: data/table differs from the archive",
      ),
    );
    expect(last).not.toHaveTextContent("Restore verified");
    await user.click(within(last).getByText("Left out (2)"));
    expect(within(last).getByText("/etc/hostname: outside the backup, not mounted")).toBeVisible();

    const table = screen.getByRole("table", { name: "Archives" });
    expect(within(within(table).getByRole("row", { name: new RegExp(older.name) })).getByText("verified")).toBeInTheDocument();
    expect(
      within(within(table).getByRole("row", { name: new RegExp(archive.name) })).queryByText("verified"),
    ).not.toBeInTheDocument();
  });

  it("drills an agent's archive on the agent, and reads its drills there", async () => {
    const nas = makeAgent({ id: 3, name: "nas" });
    const fake = installFakeFetch({
      ...signedInAs(operatorUser),
      "GET /api/agents": [nas],
      "GET /api/agents/3/backups": [archive],
      "GET /api/agents/3/stacks/web/drills": [drillRecord()],
      [`POST /api/agents/3/backups/${archive.name}/drill`]: () =>
        json(makeRun({ id: "d3", stack: "web", action: "drill" }, { mode: "transfer", percent: 0 }), { status: 202 }),
    });
    const { user } = renderApp("/backups?host=3");
    const drills = await screen.findByRole("region", { name: "Restore drills" });
    expect(await within(drills).findByText("Restore verified")).toBeInTheDocument();
    await user.click(await screen.findByRole("button", { name: "Drill" }));
    const dialog = await screen.findByRole("dialog", { name: `Restore drill of ${archive.name}` });
    await user.click(within(dialog).getByRole("button", { name: "Start the drill" }));
    expect(await screen.findByRole("region", { name: "Deploy web" })).toBeInTheDocument();
    expect(await fake.calls("POST", `/api/agents/3/backups/${archive.name}/drill`)[0]?.json()).toEqual({
      settle_seconds: 30,
    });
    expect(openSource("/api/agents/3/stacks/web/run/events")).toBeDefined();
  });

  it("shows the server's refusal in the dialog", async () => {
    installFakeFetch(
      routes(operatorUser, {
        [`POST /api/backups/${archive.name}/drill`]: () => json({ detail: "Stack 'web' is busy: backup" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    await user.click(within(table).getByRole("button", { name: "Drill" }));
    const dialog = await screen.findByRole("dialog", { name: `Restore drill of ${archive.name}` });
    await user.click(within(dialog).getByRole("button", { name: "Start the drill" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("Stack 'web' is busy: backup");
  });
});

const offsite: Destination = {
  id: 4,
  name: "offsite",
  type: "sftp",
  settings: { type: "sftp", host: "backup.lan", port: 22, username: "yard", folder: "" },
  secrets_set: ["password"],
  host_key_fingerprint: "SHA256:abc",
  created_at: "2026-11-21T10:00:00Z",
  updated_at: null,
};

describe("push to a destination", () => {
  it("picks a destination, pushes, and follows the run in the console", async () => {
    const fake = installFakeFetch(
      routes(adminUser, {
        "GET /api/destinations": [{ ...offsite, id: 3, name: "nearby" }, offsite],
        [`POST /api/backups/${archive.name}/push`]: () =>
          json(makeRun({ id: "p1", stack: "web", action: "push" }, { mode: "transfer", percent: 0 }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    await user.click(within(table).getByRole("button", { name: "Push…" }));
    const dialog = await screen.findByRole("dialog", { name: `Push ${archive.name}` });
    await user.selectOptions(await within(dialog).findByRole("combobox", { name: "Destination" }), "offsite (SFTP)");
    await user.click(within(dialog).getByRole("button", { name: "Push" }));

    const console = await screen.findByRole("region", { name: "Deploy web" });
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(within(console).getByRole("heading", { name: `Pushing ${archive.name} to offsite` })).toBeInTheDocument();
    expect(await fake.calls("POST", `/api/backups/${archive.name}/push`)[0]?.json()).toEqual({ destination_id: 4 });
    await openSource("/api/stacks/web/run/events")?.emit(
      "state",
      makeRun({ id: "p1", stack: "web", action: "push", status: "succeeded" }, { mode: "transfer", percent: 100 }),
    );
    expect(within(console).getByRole("status")).toHaveTextContent("push succeeded");
  });

  it("shows the server's refusal", async () => {
    installFakeFetch(
      routes(adminUser, {
        "GET /api/destinations": [offsite],
        [`POST /api/backups/${archive.name}/push`]: () =>
          json({ detail: `${archive.name} is on offsite already` }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    await user.click(within(table).getByRole("button", { name: "Push…" }));
    const dialog = await screen.findByRole("dialog", { name: `Push ${archive.name}` });
    await user.click(await within(dialog).findByRole("button", { name: "Push" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("is on offsite already");
  });

  it("points to the Destinations page when there is no destination", async () => {
    installFakeFetch(routes(adminUser, { "GET /api/destinations": [] }));
    const { user } = renderApp("/backups");
    const table = await screen.findByRole("table", { name: "Archives" });
    await user.click(within(table).getByRole("button", { name: "Push…" }));
    const dialog = await screen.findByRole("dialog", { name: `Push ${archive.name}` });
    expect(await within(dialog).findByRole("link", { name: "Destinations" })).toHaveAttribute("href", "/destinations");
  });
});

describe("pull from a destination", () => {
  const remote: RemoteArchive = { name: archive.name, size: 4_200_000, modified: "2026-11-23T15:05:00Z" };
  const nas = makeAgent({ id: 3, name: "nas" });
  const pullPath = `/api/agents/3/destinations/4/archives/${archive.name}/pull`;

  function agentRoutes(extra = {}) {
    return {
      ...signedInAs(adminUser),
      "GET /api/agents": [nas],
      "GET /api/agents/3/backups": [],
      "GET /api/destinations": [offsite],
      "GET /api/destinations/4/archives": [remote],
      ...extra,
    };
  }

  it("pulls a destination's archive into an agent and follows the central's transfer", async () => {
    let pulled = false;
    const fake = installFakeFetch(
      agentRoutes({
        "GET /api/agents/3/backups": () => json(pulled ? [archive] : []),
        [`POST ${pullPath}`]: () =>
          json(makeRun({ id: "t1", stack: "web", action: "pull" }, { mode: "transfer", percent: 0 }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/backups?host=3");

    await user.click(await screen.findByRole("button", { name: "Pull from a destination…" }));
    const dialog = await screen.findByRole("dialog", { name: "Pull an archive into nas" });
    expect(within(dialog).getByRole("combobox", { name: "Destination" })).toHaveValue("4");
    const list = await within(dialog).findByRole("table", { name: "Archives on offsite" });
    await user.click(within(list).getByRole("button", { name: `Pull ${archive.name}` }));

    const console = await screen.findByRole("region", { name: "Deploy web" });
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(within(console).getByRole("heading", { name: `Pulling ${archive.name} from offsite` })).toBeInTheDocument();
    expect(fake.calls("POST", pullPath)).toHaveLength(1);
    expect(fake.calls("POST", `/api/destinations/4/archives/${archive.name}/pull`)).toHaveLength(0);

    pulled = true;
    await openSource("/api/agents/3/transfers/web/run/events")?.emit(
      "state",
      makeRun({ id: "t1", stack: "web", action: "pull", status: "succeeded" }, { mode: "transfer", percent: 100 }),
    );
    expect(within(console).getByRole("status")).toHaveTextContent("pull succeeded");
    expect(await screen.findByRole("row", { name: /web--nas/ })).toBeInTheDocument();
  });

  it("pulls into this host through the destination's own pull", async () => {
    const fake = installFakeFetch(
      routes(adminUser, {
        "GET /api/backups": [],
        "GET /api/destinations": [offsite],
        "GET /api/destinations/4/archives": [remote],
        [`POST /api/destinations/4/archives/${archive.name}/pull`]: () =>
          json(makeRun({ id: "t2", stack: "web", action: "pull" }, { mode: "transfer", percent: 0 }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/backups");

    await user.click(await screen.findByRole("button", { name: "Pull from a destination…" }));
    const dialog = await screen.findByRole("dialog", { name: "Pull an archive into this host" });
    await user.click(await within(dialog).findByRole("button", { name: `Pull ${archive.name}` }));

    expect(await screen.findByRole("region", { name: "Deploy web" })).toBeInTheDocument();
    expect(fake.calls("POST", `/api/destinations/4/archives/${archive.name}/pull`)).toHaveLength(1);
    expect(openSource("/api/stacks/web/run/events")).toBeDefined();
  });

  it("shows the refusal when the agent holds the archive already", async () => {
    installFakeFetch(
      agentRoutes({ [`POST ${pullPath}`]: () => json({ detail: `${archive.name} is on nas already` }, { status: 409 }) }),
    );
    const { user } = renderApp("/backups?host=3");

    await user.click(await screen.findByRole("button", { name: "Pull from a destination…" }));
    const dialog = await screen.findByRole("dialog", { name: "Pull an archive into nas" });
    await user.click(await within(dialog).findByRole("button", { name: `Pull ${archive.name}` }));

    expect(await within(dialog).findByRole("alert")).toHaveTextContent("is on nas already");
  });

  it("is for admins only", async () => {
    installFakeFetch({ ...agentRoutes(), ...signedInAs(operatorUser) });
    renderApp("/backups?host=3");

    expect(await screen.findByText("No archives yet.")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Pull from a destination…" })).not.toBeInTheDocument();
  });
});

const inventory = {
  stack_id: "web",
  project: "web",
  folder: "/srv/stacks/web",
  folder_size: 1_200_000,
  paths: { stacks_dir: "/stacks", stacks_host_dir: "/srv/stacks", mismatch: true, explanation: "The service sees the stacks folder at /stacks, the host at /srv/stacks.", mappings: [] },
  assets: [
    { key: "volume:web_db", kind: "volume", name: "web_db", compose_key: "db", uses: [{ service: "app", target: "/db", read_only: false }], size: 2_000_000, files: 3, inside_stack: null, local_path: null, external: false, driver: "local", remote: null, exists: true, selected: true, reason: null },
    { key: "bind:/srv/media", kind: "bind", name: "/srv/media", compose_key: null, uses: [{ service: "app", target: "/media", read_only: true }], size: 9e12, files: 100, inside_stack: null, local_path: null, external: false, driver: null, remote: null, exists: true, selected: false, reason: "8.2 TiB, more than 10 times everything else" },
    { key: "volume:web_share", kind: "volume", name: "web_share", compose_key: "share", uses: [], size: null, files: null, inside_stack: null, local_path: null, external: false, driver: "local", remote: "nfs", exists: true, selected: false, reason: "on NFS: its server keeps it" },
  ],
} as unknown as Inventory;

describe("back up from the stack page", () => {
  it("shows the inventory with its choices, and starts the backup with the chosen ones", async () => {
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/stacks/web": makeDetail(),
      "GET /api/stacks/updates": makeSummary([]),
      "GET /api/stacks/web/run": makeRun({ status: "succeeded" }),
      "GET /api/stacks/web/backup/inventory": inventory,
      "POST /api/stacks/web/backups": () => json(makeRun({ id: "b1", action: "backup" }, { mode: "transfer" }), { status: 202 }),
    });
    const { user } = renderApp("/stacks/web");
    await user.click(await screen.findByRole("button", { name: "Back up" }));
    const dialog = await screen.findByRole("dialog", { name: "Back up web" });
    expect(await within(dialog).findByRole("note")).toHaveTextContent("/srv/stacks");
    const db = within(dialog).getByRole("checkbox", { name: /Back up db/ });
    const media = within(dialog).getByRole("checkbox", { name: /Back up \/srv\/media/ });
    expect(db).toBeChecked();
    expect(media).not.toBeChecked();
    expect(within(dialog).getByRole("row", { name: /\/srv\/media/ })).toHaveTextContent("more than 10 times");
    expect(within(dialog).getByRole("row", { name: /share/ })).toHaveTextContent("NFS");
    // What the archive will hold: the stack folder's files and the chosen data.
    expect(within(dialog).getByTestId("backup-total")).toHaveTextContent(
      "1 of 3 chosen · about 3.2 MB of data to read, the stack folder (1.2 MB) with it. The archive is compressed",
    );
    await user.click(media);
    await user.click(within(dialog).getByRole("button", { name: "Start backup" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/stacks/web/backups")[0]?.json()).toEqual({
      include_binds: true,
      volumes: ["web_db"],
      binds: ["/srv/media"],
    });
  });
});
