import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Destination, MadeRepository, RemoteArchive } from "../../api/types";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { recoveryKeyOf } from "./destinationTypes";

const KEY = "ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567-ABCD-EFGH-IJKL-MNOP";
const KEY_ID = "5f2c1e9ab0d34c7e8f6a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e";

function repository(id: number, name: string, location: Extract<Destination["settings"], { type: "repository" }>["location"]): Destination {
  return {
    id,
    name,
    type: "repository",
    settings: { type: "repository", location },
    secrets_set: location.type === "sftp" ? ["password", "repository_key"] : ["repository_key"],
    host_key_fingerprint: location.type === "sftp" ? "SHA256:repoHostKey" : null,
    created_at: "2026-11-25T10:00:00Z",
    updated_at: null,
  };
}

const vault = repository(7, "vault", { type: "folder", path: "/mnt/backups/vault" });
const offsite = repository(8, "offsite", {
  type: "sftp",
  host: "backup.lan",
  port: 2222,
  username: "yard",
  folder: "restic",
});
const cloud = repository(9, "cloud", {
  type: "s3",
  endpoint_url: "http://minio.lan:9000",
  region: "us-east-1",
  bucket: "backups",
  prefix: "yard",
  access_key: "AKIA1",
  path_style: true,
});

function routes(list: Destination[], extra: Routes = {}): Routes {
  return { ...signedInAs(adminUser), "GET /api/destinations": () => json(list), ...extra };
}

async function openDialog(name: "New repository" | "Recover from a repository") {
  const rendered = renderApp("/destinations");
  await rendered.user.click(await screen.findByRole("button", { name }));
  return { ...rendered, dialog: screen.getByRole("dialog", { name }) };
}

describe("repository destinations", () => {
  it("lists a repository with its type, its location and, on SFTP, the pinned host key", async () => {
    installFakeFetch(routes([vault, offsite, cloud]));
    renderApp("/destinations");
    const table = await screen.findByRole("table", { name: "Destinations" });

    const folder = within(table).getByRole("row", { name: /vault/ });
    expect(folder).toHaveTextContent("Repository (restic)");
    expect(folder).toHaveTextContent("/mnt/backups/vault");
    const sftp = within(table).getByRole("row", { name: /offsite/ });
    expect(sftp).toHaveTextContent("sftp://yard@backup.lan:2222/restic");
    expect(sftp).toHaveTextContent("Host key pinned: SHA256:repoHostKey");
    const s3 = within(table).getByRole("row", { name: /cloud/ });
    expect(s3).toHaveTextContent("http://minio.lan:9000 backups/yard");
  });

  it("makes a repository on a folder: the location nested in its settings, the recovery key shown once", async () => {
    const list: Destination[] = [];
    const made: MadeRepository = {
      destination: vault,
      recovery_key: KEY,
      recovery_key_id: KEY_ID,
    };
    const fake = installFakeFetch(
      routes(list, {
        "POST /api/destinations/repositories": () => {
          list.push(vault);
          return json(made, { status: 201 });
        },
      }),
    );
    const { user, dialog } = await openDialog("New repository");
    expect(within(dialog).getByRole("combobox", { name: "Location" })).toHaveValue("folder");
    // A folder signs in with nothing, and the instance's own key is never typed.
    expect(within(dialog).queryByRole("group", { name: /Sign-in secrets/ })).not.toBeInTheDocument();
    expect(within(dialog).queryByLabelText(/recovery key/i)).not.toBeInTheDocument();
    await user.type(within(dialog).getByLabelText("Name"), "vault");
    await user.type(within(dialog).getByLabelText("Folder"), "/mnt/backups/vault");
    await user.click(within(dialog).getByRole("button", { name: "Make the repository" }));

    const shown = await screen.findByRole("dialog", { name: "Recovery key of vault" });
    expect(await fake.calls("POST", "/api/destinations/repositories")[0]?.json()).toEqual({
      name: "vault",
      settings: { type: "repository", location: { type: "folder", path: "/mnt/backups/vault" } },
      secrets: {},
      recovery_key: null,
    });
    expect(within(shown).getByRole("figure", { name: "Recovery key" })).toHaveTextContent(KEY);
    expect(shown).toHaveTextContent(KEY_ID);
    expect(shown).toHaveTextContent(
      "Write this key down and keep it away from this server: with the repository's location it opens every " +
        "backup from a fresh install. It is not shown again.",
    );
    expect(within(shown).getByRole("button", { name: "Copy the recovery key" })).toBeInTheDocument();

    // Neither Escape nor Close takes it away before the user says it is written down.
    const close = within(shown).getByRole("button", { name: "Close" });
    expect(close).toBeDisabled();
    await user.keyboard("{Escape}");
    expect(screen.getByRole("dialog", { name: "Recovery key of vault" })).toBeInTheDocument();
    await user.click(within(shown).getByRole("checkbox", { name: "I have written it down" }));
    expect(close).toBeEnabled();
    await user.click(close);

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(screen.queryByText(KEY)).not.toBeInTheDocument();
    expect(screen.getByText("Repository vault made.")).toBeInTheDocument();
    expect(await screen.findByRole("row", { name: /vault/ })).toBeInTheDocument();
  });

  it("offers each location's own secrets, never the instance's key, and sends an SFTP location nested", async () => {
    const fake = installFakeFetch(
      routes([], {
        "POST /api/destinations/repositories": () =>
          json({ destination: offsite, recovery_key: KEY, recovery_key_id: KEY_ID }, { status: 201 }),
      }),
    );
    const { user, dialog } = await openDialog("New repository");
    const location = within(dialog).getByRole("combobox", { name: "Location" });
    const secretLabels = () =>
      within(dialog)
        .queryAllByRole("group", { name: /Sign-in secrets/ })
        .flatMap((group) => within(group).queryAllByText(/^(Password|Private key|Key passphrase|Secret key)$/))
        .map((label) => label.textContent);

    await user.selectOptions(location, "s3");
    expect(secretLabels()).toEqual(["Secret key"]);
    await user.selectOptions(location, "sftp");
    expect(secretLabels()).toEqual(["Password", "Private key", "Key passphrase"]);
    expect(within(dialog).queryByText(/repository key/i)).not.toBeInTheDocument();

    await user.type(within(dialog).getByLabelText("Name"), "offsite");
    await user.type(within(dialog).getByLabelText("Host"), "backup.lan");
    await user.clear(within(dialog).getByLabelText("Port"));
    await user.type(within(dialog).getByLabelText("Port"), "2222");
    await user.type(within(dialog).getByLabelText("Username"), "yard");
    await user.type(within(dialog).getByLabelText("Folder"), "restic");
    await user.type(within(dialog).getByLabelText("Password"), "s3cret");
    await user.click(within(dialog).getByRole("button", { name: "Make the repository" }));
    await screen.findByRole("dialog", { name: "Recovery key of offsite" });
    expect(await fake.calls("POST", "/api/destinations/repositories")[0]?.json()).toEqual({
      name: "offsite",
      settings: {
        type: "repository",
        location: { type: "sftp", host: "backup.lan", port: 2222, username: "yard", folder: "restic" },
      },
      secrets: { password: "s3cret" },
      recovery_key: null,
    });
  });

  it("recovers a repository with its recovery key, then lists every backup found in it", async () => {
    const list: Destination[] = [];
    const found: RemoteArchive[] = [
      { name: "web--nas--20261123T150405Z.tar", size: 4_200_000, modified: "2026-11-23T15:05:00Z" },
      { name: "db--other--20261122T020000Z.tar", size: 9_000_000, modified: "2026-11-22T02:01:00Z" },
    ];
    const fake = installFakeFetch(
      routes(list, {
        "POST /api/destinations/repositories": () => {
          list.push(cloud);
          return json({ destination: cloud, recovery_key: null, recovery_key_id: null }, { status: 201 });
        },
        "GET /api/destinations/9/archives": found,
      }),
    );
    const { user, dialog } = await openDialog("Recover from a repository");
    await user.type(within(dialog).getByLabelText("Name"), "cloud");
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Location" }), "s3");
    await user.type(within(dialog).getByLabelText("Endpoint URL"), "http://minio.lan:9000");
    await user.type(within(dialog).getByLabelText("Bucket"), "backups");
    await user.type(within(dialog).getByLabelText("Prefix (folder in the bucket)"), "yard");
    await user.type(within(dialog).getByLabelText("Access key"), "AKIA1");
    await user.type(within(dialog).getByLabelText("Secret key"), "shh");
    // As written down on paper: lower case, spaces between the groups.
    await user.type(within(dialog).getByLabelText("Recovery key"), KEY.toLowerCase().replaceAll("-", " "));
    await user.click(within(dialog).getByRole("button", { name: "Recover the repository" }));

    const archives = await screen.findByRole("table", { name: "Archives on cloud" });
    expect(within(archives).getAllByRole("row")).toHaveLength(3);
    expect(archives).toHaveTextContent("web--nas--20261123T150405Z.tar");
    expect(archives).toHaveTextContent("db--other--20261122T020000Z.tar");
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(screen.getByText("Repository cloud recovered: its backups are listed below.")).toBeInTheDocument();
    expect(await fake.calls("POST", "/api/destinations/repositories")[0]?.json()).toEqual({
      name: "cloud",
      settings: {
        type: "repository",
        location: {
          type: "s3",
          endpoint_url: "http://minio.lan:9000",
          region: "us-east-1",
          bucket: "backups",
          prefix: "yard",
          access_key: "AKIA1",
          path_style: true,
        },
      },
      secrets: { secret_key: "shh" },
      recovery_key: KEY,
    });
  });

  it("recovering with a wrong key says why and keeps the form", async () => {
    installFakeFetch(
      routes([], {
        "POST /api/destinations/repositories": () =>
          json({ detail: "The key does not open the repository at /mnt/backups/vault" }, { status: 400 }),
      }),
    );
    const { user, dialog } = await openDialog("Recover from a repository");
    await user.type(within(dialog).getByLabelText("Name"), "vault");
    await user.type(within(dialog).getByLabelText("Folder"), "/mnt/backups/vault");
    await user.type(within(dialog).getByLabelText("Recovery key"), "not-the-key");
    await user.click(within(dialog).getByRole("button", { name: "Recover the repository" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent(
      "The key does not open the repository at /mnt/backups/vault",
    );
    expect(within(dialog).getByLabelText("Recovery key")).toHaveValue("not-the-key");
  });

  it("is reachable on a fresh install, with no destinations yet", async () => {
    installFakeFetch(routes([]));
    renderApp("/destinations");
    expect(await screen.findByText(/No destinations yet/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Recover from a repository" })).toBeInTheDocument();
  });

  it("edits a repository's name and its location's secrets only, its settings left as they are", async () => {
    const fake = installFakeFetch(routes([offsite], { "PATCH /api/destinations/8": offsite }));
    const { user } = renderApp("/destinations");
    await user.click(await screen.findByRole("button", { name: "Edit offsite" }));
    const dialog = screen.getByRole("dialog", { name: "Edit offsite" });
    expect(dialog).toHaveTextContent("Type: Repository (restic)");
    expect(dialog).toHaveTextContent("Location: sftp://yard@backup.lan:2222/restic");
    expect(within(dialog).queryByLabelText("Host")).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("checkbox", { name: /Forget the pinned host key/ })).not.toBeInTheDocument();
    expect(within(dialog).getByLabelText("Password")).toHaveAttribute("placeholder", "stored — leave empty to keep");
    expect(within(dialog).queryByText(/repository key/i)).not.toBeInTheDocument();

    await user.clear(within(dialog).getByLabelText("Name"));
    await user.type(within(dialog).getByLabelText("Name"), "offsite-2");
    await user.type(within(dialog).getByLabelText("Password"), "n3w");
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(fake.calls("PATCH", "/api/destinations/8")).toHaveLength(1));
    expect(await fake.calls("PATCH", "/api/destinations/8")[0]?.json()).toEqual({
      name: "offsite-2",
      secrets: { password: "n3w" },
    });
  });

  it("reads a written-down key back as printed, and leaves any other password as it is", () => {
    expect(recoveryKeyOf(` ${KEY.toLowerCase()} `)).toBe(KEY);
    expect(recoveryKeyOf(KEY.replaceAll("-", "  "))).toBe(KEY);
    expect(recoveryKeyOf(" my own restic password ")).toBe("my own restic password");
  });
});
