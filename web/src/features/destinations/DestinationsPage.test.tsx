import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ArchiveInfo, BackupManifest, Destination, RemoteArchive, RepositoryUse, RestorePreview } from "../../api/types";
import { openSource } from "../../test/fakeEventSource";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeRun } from "../../test/stackFixtures";

const box: Destination = {
  id: 1,
  name: "box",
  type: "sftp",
  settings: { type: "sftp", host: "backup.lan", port: 2222, username: "yard", folder: "archives" },
  secrets_set: ["password"],
  host_key_fingerprint: "SHA256:pinnedPinnedPinned",
  created_at: "2026-11-20T10:00:00Z",
  updated_at: null,
};

const bucket: Destination = {
  id: 2,
  name: "bucket",
  type: "s3",
  settings: {
    type: "s3",
    endpoint_url: "http://minio.lan:9000",
    region: "us-east-1",
    bucket: "backups",
    prefix: "yard",
    access_key: "AKIA1",
    path_style: true,
  },
  secrets_set: ["secret_key"],
  host_key_fingerprint: null,
  created_at: "2026-11-21T10:00:00Z",
  updated_at: null,
};

const NAME = "web--nas--20261123T150405Z.tar";
const remote: RemoteArchive = { name: NAME, size: 4_200_000, modified: "2026-11-23T15:05:00Z" };

const local: ArchiveInfo = {
  name: NAME,
  size: 4_200_000,
  stack_id: "web",
  host: "nas",
  created_at: "2026-11-23T15:04:05Z",
  format_version: 2,
  assets: ["volume:web_db"],
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
  assets: [{ key: "volume:web_db", member: "volumes/0.tar.gz", captured: true, bytes: 10, files: 1, sha256: "a", skipped: null }],
} as unknown as BackupManifest;

function routes(extra: Routes = {}): Routes {
  return { ...signedInAs(adminUser), "GET /api/destinations": [box, bucket], ...extra };
}

describe("destinations page", () => {
  it("lists destinations with where they keep archives and the pinned host key", async () => {
    installFakeFetch(routes());
    renderApp("/destinations");

    const table = await screen.findByRole("table", { name: "Destinations" });
    const sftp = within(table).getByRole("row", { name: /box/ });
    expect(sftp).toHaveTextContent("SFTP");
    expect(sftp).toHaveTextContent("yard@backup.lan:2222:archives");
    expect(sftp).toHaveTextContent("Host key pinned: SHA256:pinnedPinnedPinned");
    const s3 = within(table).getByRole("row", { name: /bucket/ });
    expect(s3).toHaveTextContent("S3-compatible object storage");
    expect(s3).toHaveTextContent("backups/yard at http://minio.lan:9000");
  });

  it("is for admins only: an operator sees neither the link nor the list", async () => {
    const fake = installFakeFetch({ ...signedInAs(operatorUser), "GET /api/destinations": [box] });
    renderApp("/destinations");

    expect(await screen.findByText("Only admins manage backup destinations.")).toBeInTheDocument();
    expect(screen.queryByRole("link", { name: "Destinations" })).not.toBeInTheDocument();
    expect(fake.calls("GET", "/api/destinations")).toHaveLength(0);
  });

  it("adds an SFTP destination: the test shows the server's key, and saving pins that very key", async () => {
    const found = { ok: true, detail: "Wrote and removed a file. Host key: SHA256:shownShown", host_key: "ssh-ed25519 AAAAshown", host_key_fingerprint: "SHA256:shownShown" };
    const fake = installFakeFetch(
      routes({
        "POST /api/destinations/test": found,
        "POST /api/destinations": () => json({ ...box, id: 3, name: "offsite" }, { status: 201 }),
      }),
    );
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Add a destination" }));
    const dialog = screen.getByRole("dialog", { name: "Add a destination" });
    expect(within(dialog).getByRole("combobox", { name: "Type" })).toHaveValue("sftp");
    await user.type(within(dialog).getByLabelText("Name"), "offsite");
    await user.type(within(dialog).getByLabelText("Host"), "backup.lan");
    await user.type(within(dialog).getByLabelText("Username"), "yard");
    await user.type(within(dialog).getByLabelText("Folder"), "archives");
    await user.type(within(dialog).getByLabelText("Password"), "s3cret");

    await user.click(within(dialog).getByRole("button", { name: "Test" }));
    const result = await within(dialog).findByRole("status");
    expect(result).toHaveTextContent("Test passed");
    expect(result).toHaveTextContent("Server's host key: SHA256:shownShown — saving pins this key.");
    expect(await fake.calls("POST", "/api/destinations/test")[0]?.json()).toEqual({
      settings: { type: "sftp", host: "backup.lan", port: 22, username: "yard", folder: "archives" },
      secrets: { password: "s3cret" },
    });

    // Another port is another server: the key shown no longer holds.
    await user.clear(within(dialog).getByLabelText("Port"));
    await user.type(within(dialog).getByLabelText("Port"), "2222");
    expect(within(dialog).queryByRole("status")).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "Test" }));
    await within(dialog).findByRole("status");

    await user.click(within(dialog).getByRole("button", { name: "Add the destination" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/destinations")[0]?.json()).toEqual({
      name: "offsite",
      settings: { type: "sftp", host: "backup.lan", port: 2222, username: "yard", folder: "archives" },
      secrets: { password: "s3cret" },
      host_key: "ssh-ed25519 AAAAshown",
    });
    expect(screen.getByText("Destination offsite saved.")).toBeInTheDocument();
  });

  it("adds an S3 destination with its secret key, and shows why a test failed", async () => {
    const fake = installFakeFetch(
      routes({
        "POST /api/destinations/test": () => json({ detail: "The bucket 'nope' does not exist" }, { status: 400 }),
        "POST /api/destinations": () => json(bucket, { status: 201 }),
      }),
    );
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Add a destination" }));
    const dialog = screen.getByRole("dialog", { name: "Add a destination" });
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Type" }), "s3");
    expect(within(dialog).queryByLabelText("Host")).not.toBeInTheDocument();
    await user.type(within(dialog).getByLabelText("Name"), "bucket");
    await user.type(within(dialog).getByLabelText("Endpoint URL"), "http://minio.lan:9000");
    await user.type(within(dialog).getByLabelText("Bucket"), "nope");
    await user.type(within(dialog).getByLabelText("Access key"), "AKIA1");
    await user.type(within(dialog).getByLabelText("Secret key"), "shh");
    await user.click(within(dialog).getByRole("button", { name: "Test" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("The bucket 'nope' does not exist");

    await user.click(within(dialog).getByRole("button", { name: "Add the destination" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/destinations")[0]?.json()).toEqual({
      name: "bucket",
      settings: {
        type: "s3",
        endpoint_url: "http://minio.lan:9000",
        region: "us-east-1",
        bucket: "nope",
        prefix: "",
        access_key: "AKIA1",
        path_style: true,
      },
      secrets: { secret_key: "shh" },
      host_key: null,
    });
  });

  it("edits: stored secrets are never shown and kept when left empty; the pinned key can be forgotten", async () => {
    const fake = installFakeFetch(routes({ "PATCH /api/destinations/1": { ...box, host_key_fingerprint: null } }));
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Edit box" }));
    const dialog = screen.getByRole("dialog", { name: "Edit box" });
    const password = within(dialog).getByLabelText("Password");
    expect(password).toHaveValue("");
    expect(password).toHaveAttribute("placeholder", "stored — leave empty to keep");
    expect(within(dialog).getByLabelText("Private key")).not.toHaveAttribute("placeholder");
    expect(within(dialog).queryByRole("combobox", { name: "Type" })).not.toBeInTheDocument();
    expect(within(dialog).getByLabelText("Port")).toHaveValue(2222);

    await user.clear(within(dialog).getByLabelText("Folder"));
    await user.type(within(dialog).getByLabelText("Folder"), "/srv/archives");
    await user.click(within(dialog).getByRole("checkbox", { name: /Forget the pinned host key/ }));
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("PATCH", "/api/destinations/1")[0]?.json()).toEqual({
      name: "box",
      settings: { type: "sftp", host: "backup.lan", port: 2222, username: "yard", folder: "/srv/archives" },
      host_key: null,
    });
  });

  it("edits: a new secret is sent, a removed one as empty", async () => {
    const fake = installFakeFetch(routes({ "PATCH /api/destinations/1": box }));
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Edit box" }));
    const dialog = screen.getByRole("dialog", { name: "Edit box" });
    await user.click(within(dialog).getByRole("checkbox", { name: "Remove the stored password" }));
    expect(within(dialog).getByLabelText("Password")).toBeDisabled();
    await user.type(within(dialog).getByLabelText("Private key"), "-----BEGIN OPENSSH PRIVATE KEY-----");
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(fake.calls("PATCH", "/api/destinations/1")).toHaveLength(1));
    const sent = (await fake.calls("PATCH", "/api/destinations/1")[0]?.json()) as { secrets: unknown; host_key?: unknown };
    expect(sent.secrets).toEqual({ password: "", private_key: "-----BEGIN OPENSSH PRIVATE KEY-----" });
    expect(sent).not.toHaveProperty("host_key");
  });

  it("tests a saved destination from its row, and deletes one saying its archives stay", async () => {
    const fake = installFakeFetch(
      routes({
        "POST /api/destinations/2/test": { ok: true, detail: "Wrote and removed a file in backups/yard", host_key: null, host_key_fingerprint: null },
        "DELETE /api/destinations/2": () => noContent(),
      }),
    );
    const { user } = renderApp("/destinations");
    const table = await screen.findByRole("table", { name: "Destinations" });
    const row = within(table).getByRole("row", { name: /bucket/ });
    await user.click(within(row).getByRole("button", { name: "Test bucket" }));
    expect(await within(row).findByRole("status")).toHaveTextContent("Test passed: Wrote and removed a file in backups/yard");

    await user.click(within(row).getByRole("button", { name: "Delete bucket" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete destination bucket?" });
    expect(confirm).toHaveAccessibleDescription(/The archives on it stay there/);
    await user.click(within(confirm).getByRole("button", { name: "Delete the destination" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/destinations/2")).toHaveLength(1));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
  });

  it("browses a destination and downloads an archive to this host, followed in the console", async () => {
    const fake = installFakeFetch(
      routes({
        "GET /api/destinations/1/archives": [remote],
        [`POST /api/destinations/1/archives/${NAME}/pull`]: () =>
          json(makeRun({ id: "p1", stack: "web", action: "pull" }, { mode: "transfer", percent: 0 }), { status: 202 }),
        "GET /api/backups": [local],
      }),
    );
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Browse box" }));
    const archives = await screen.findByRole("table", { name: "Archives on box" });
    const row = within(archives).getByRole("row", { name: new RegExp(NAME) });
    expect(row).toHaveTextContent("4.2 MB");
    await user.click(within(row).getByRole("button", { name: "Download to this host" }));

    const console = await screen.findByRole("region", { name: "Deploy web" });
    expect(within(console).getByRole("heading", { name: `Downloading ${NAME} from box` })).toBeInTheDocument();
    await openSource("/api/stacks/web/run/events")?.emit(
      "state",
      makeRun({ id: "p1", stack: "web", action: "pull", status: "succeeded" }, { mode: "transfer", percent: 100 }),
    );
    expect(within(console).getByRole("status")).toHaveTextContent("pull succeeded");
    const note = await screen.findByText(`${NAME} is on this host now:`, { exact: false });
    expect(within(note).getByRole("link", { name: "Backups" })).toHaveAttribute("href", "/backups");
    expect(fake.calls("POST", `/api/destinations/1/archives/${NAME}/pull`)).toHaveLength(1);
  });

  const nothingOutside: RestorePreview = {
    stack: "web-copy",
    stack_exists: false,
    renamed: true,
    writes: ["volume web-copy_db"],
    outside: [],
    skipped: {},
  };

  it("restores a remote archive: pulls it, then opens the restore dialog for the local copy", async () => {
    let here: ArchiveInfo[] = [];
    installFakeFetch(
      routes({
        "GET /api/destinations/1/archives": [remote],
        [`POST /api/destinations/1/archives/${NAME}/pull`]: () => {
          here = [local];
          return json(makeRun({ id: "p2", stack: "web", action: "pull" }, { mode: "transfer", percent: 0 }), { status: 202 });
        },
        "GET /api/backups": () => json(here),
        [`GET /api/backups/${NAME}`]: manifest,
        [`POST /api/backups/${NAME}/restore/preview`]: nothingOutside,
        [`POST /api/backups/${NAME}/restore`]: () =>
          json(makeRun({ id: "r1", stack: "web-copy", action: "restore" }, { mode: "transfer" }), { status: 202 }),
      }),
    );
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Browse box" }));
    const archives = await screen.findByRole("table", { name: "Archives on box" });
    await user.click(within(archives).getByRole("button", { name: "Restore…" }));
    await screen.findByRole("heading", { name: `Downloading ${NAME} to restore it` });
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();

    await openSource("/api/stacks/web/run/events")?.emit(
      "state",
      makeRun({ id: "p2", stack: "web", action: "pull", status: "succeeded" }, { mode: "transfer", percent: 100 }),
    );
    const dialog = await screen.findByRole("dialog", { name: `Restore ${NAME}` });
    await user.type(within(dialog).getByLabelText("Restore as (empty: as itself)"), "web-copy");
    // Enabled once the preview of what the restore writes has come.
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Restore" })).toBeEnabled());
    await user.click(within(dialog).getByRole("button", { name: "Restore" }));
    expect(await screen.findByRole("region", { name: "Deploy web-copy" })).toBeInTheDocument();
    expect(screen.getByRole("heading", { name: "Restoring into web-copy" })).toBeInTheDocument();
  });

  it("restores an archive this host holds already without downloading it again", async () => {
    installFakeFetch(
      routes({
        "GET /api/destinations/1/archives": [remote],
        [`POST /api/destinations/1/archives/${NAME}/pull`]: () =>
          json({ detail: `${NAME} is already on this host` }, { status: 409 }),
        "GET /api/backups": [local],
        [`GET /api/backups/${NAME}`]: manifest,
        [`POST /api/backups/${NAME}/restore/preview`]: nothingOutside,
      }),
    );
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Browse box" }));
    const archives = await screen.findByRole("table", { name: "Archives on box" });
    await user.click(within(archives).getByRole("button", { name: "Restore…" }));
    expect(await screen.findByRole("dialog", { name: `Restore ${NAME}` })).toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });

  it("deletes a remote archive after saying it goes for good", async () => {
    let held = [remote];
    const fake = installFakeFetch(
      routes({
        "GET /api/destinations/1/archives": () => json(held),
        [`DELETE /api/destinations/1/archives/${NAME}`]: () => {
          held = [];
          return noContent();
        },
      }),
    );
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Browse box" }));
    const archives = await screen.findByRole("table", { name: "Archives on box" });
    await user.click(within(archives).getByRole("button", { name: `Delete ${NAME} from box` }));
    const confirm = screen.getByRole("alertdialog", { name: `Delete ${NAME} from box?` });
    expect(confirm).toHaveAccessibleDescription(/removed from the destination for good/);
    await user.click(within(confirm).getByRole("button", { name: "Delete it there" }));
    expect(await screen.findByText("No archives made by Stackyard on this destination.")).toBeInTheDocument();
    expect(fake.calls("DELETE", `/api/destinations/1/archives/${NAME}`)).toHaveLength(1);
  });
});

const vault: Destination = {
  id: 7,
  name: "vault",
  type: "repository",
  settings: { type: "repository", location: { type: "folder", path: "/mnt/backups/vault" } },
  secrets_set: ["repository_key"],
  host_key_fingerprint: null,
  created_at: "2026-11-25T10:00:00Z",
  updated_at: null,
};

const use: RepositoryUse = {
  stored_bytes: 3_000_000,
  archives_bytes: 12_000_000,
  backups: 5,
  stacks: { web: 3, db: 2 },
  instances: 2,
  partial: 0,
};

describe("a repository's use", () => {
  it("shows what it stores against its backups as archives, the saving, and its backups per stack", async () => {
    let read = use;
    installFakeFetch(
      routes({
        "GET /api/destinations": [box, vault],
        "GET /api/destinations/7/repository": () => json(read),
      }),
    );
    const { user } = renderApp("/destinations");
    const table = await screen.findByRole("table", { name: "Destinations" });
    // Only a repository has a use to show.
    expect(within(within(table).getByRole("row", { name: /box/ })).queryByRole("button", { name: /Use/ })).not.toBeInTheDocument();
    await user.click(within(table).getByRole("button", { name: "Use of vault" }));

    const section = await screen.findByRole("region", { name: "Use of vault" });
    await waitFor(() => expect(section).toHaveTextContent("Stored on vault3.0 MB"));
    expect(section).toHaveTextContent("The backups as archives12.0 MB");
    expect(section).toHaveTextContent("Saving75%");
    expect(section).toHaveTextContent("Backups5");
    expect(section).toHaveTextContent("2 instances of Stackyard keep backups here");
    expect(section).not.toHaveTextContent("Partial");
    const stacks = within(section).getByRole("table", { name: "Backups per stack on vault" });
    expect(within(stacks).getAllByRole("row").slice(1).map((r) => r.textContent)).toEqual(["db2", "web3"]);

    // A push killed mid-way: said, with what becomes of it.
    read = { ...use, partial: 1, instances: 1 };
    await user.click(within(section).getByRole("button", { name: "Refresh" }));
    await waitFor(() => expect(section).toHaveTextContent("Partial backups1 push killed mid-way: its parts are removed by the next push"));
    expect(section).toHaveTextContent("1 instance of Stackyard keeps backups here");

    await user.click(within(section).getByRole("button", { name: "Close Use of vault" }));
    expect(screen.queryByRole("region", { name: "Use of vault" })).not.toBeInTheDocument();
  });

  it("says why the repository could not be read", async () => {
    installFakeFetch(
      routes({
        "GET /api/destinations": [vault],
        "GET /api/destinations/7/repository": () => json({ detail: "The repository at /mnt/backups/vault cannot be opened" }, { status: 502 }),
      }),
    );
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Use of vault" }));
    const section = await screen.findByRole("region", { name: "Use of vault" });
    expect(await within(section).findByRole("alert")).toHaveTextContent("cannot be opened");
  });
});
