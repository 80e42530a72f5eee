import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { makeEntry, makeFile, makeFolder } from "../../test/fileFixtures";
import { adminUser, plainUser, signedInAs } from "../../test/fixtures";
import { FakeXMLHttpRequest, installFakeXhr, pendingXhr } from "../../test/fakeXhr";
import { renderApp } from "../../test/renderApp";
import { SHOW_HIDDEN_KEY, SHOW_HIDDEN_LEGACY_KEY } from "./showHidden";

const conf = makeFolder("web/conf", [
  makeEntry({ path: "web/conf/data", type: "dir", mode: "0755" }),
  makeEntry({ path: "web/conf/app.yml", size: 1536 }),
  makeEntry({ path: "web/conf/current", type: "symlink", target: "../shared" }),
]);

function fileRoutes(extra: Routes = {}, user = adminUser): Routes {
  return {
    ...signedInAs(user),
    "GET /api/files": conf,
    ...extra,
  };
}

function query(request: Request | undefined): Record<string, string> {
  return Object.fromEntries(new URL(request?.url ?? "http://x/").searchParams);
}

function rowOf(name: string): HTMLElement {
  const table = screen.getByRole("table", { name: "Files" });
  const row = within(table)
    .getAllByRole("row")
    .find((r) => within(r).queryByText(name, { exact: true }));
  if (!row) throw new Error(`no row for ${name}`);
  return row;
}

function filesInput(): HTMLInputElement {
  return screen.getByTestId("upload-files-input");
}

function folderInput(): HTMLInputElement {
  return screen.getByTestId("upload-folder-input");
}

/** What a picker does: sets the input's files and fires change. */
function pick(input: HTMLInputElement, files: File[]) {
  Object.defineProperty(input, "files", { value: files, configurable: true });
  fireEvent.change(input);
}

function instances(): FakeXMLHttpRequest[] {
  return FakeXMLHttpRequest.instances;
}

/** Waits for the `count`-th upload request and returns it (still unanswered). */
async function nextXhr(count: number): Promise<FakeXMLHttpRequest> {
  await waitFor(() => expect(instances()).toHaveLength(count));
  const xhr = pendingXhr();
  if (!xhr) throw new Error("no pending upload");
  return xhr;
}

beforeEach(() => {
  installFakeXhr();
});

describe("files listing", () => {
  it("shows the breadcrumb and the folder's entries", async () => {
    const fake = installFakeFetch(fileRoutes());
    renderApp("/files?path=web/conf");

    expect(await screen.findByRole("heading", { level: 1, name: "Files" })).toBeInTheDocument();
    const crumbs = screen.getByRole("navigation", { name: "Breadcrumb" });
    expect(within(crumbs).getAllByRole("link").map((a) => [a.textContent, a.getAttribute("href")])).toEqual([
      ["Stacks folder", "/files"],
      ["web", "/files?path=web"],
      ["conf", "/files?path=web/conf"],
    ]);
    expect(within(crumbs).getByRole("link", { name: "conf" })).toHaveAttribute("aria-current", "page");

    await screen.findByRole("table", { name: "Files" });
    expect(query(fake.calls("GET", "/api/files")[0])).toEqual({ path: "web/conf", hidden: "false" });

    const data = rowOf("data");
    expect(within(data).getByRole("link", { name: "data" })).toHaveAttribute("href", "/files?path=web/conf/data");
    expect(data).toHaveTextContent("Folder");
    expect(data).toHaveTextContent("0755");

    const app = rowOf("app.yml");
    expect(within(app).getByRole("link", { name: "app.yml" })).toHaveAttribute(
      "href",
      "/files?path=web/conf&edit=web/conf/app.yml",
    );
    expect(app).toHaveTextContent("1.5 kB");
    expect(app).toHaveTextContent("0644");
    expect(within(app).getByRole("button", { name: "Download app.yml" })).toBeInTheDocument();

    const link = rowOf("current");
    expect(link).toHaveTextContent("Link");
    expect(link).toHaveTextContent("-> ../shared");
    expect(within(link).queryByRole("link", { name: "current" })).not.toBeInTheDocument();

    expect(screen.getByRole("link", { name: "Parent folder" })).toHaveAttribute("href", "/files?path=web");
  });

  it("enters a folder when its name is clicked", async () => {
    const fake = installFakeFetch(fileRoutes());
    const { user } = renderApp("/files?path=web/conf");

    await user.click(await screen.findByRole("link", { name: "data" }));
    await waitFor(() =>
      expect(fake.calls("GET", "/api/files").map((r) => query(r).path)).toContain("web/conf/data"),
    );
  });

  it("tells a plain user that files are for admins", async () => {
    const fake = installFakeFetch(fileRoutes({}, plainUser));
    renderApp("/files");

    expect(await screen.findByText("Files are for admins.")).toBeInTheDocument();
    expect(fake.calls("GET", "/api/files")).toHaveLength(0);
  });

  it("shows the same when the server refuses the listing", async () => {
    installFakeFetch(fileRoutes({ "GET /api/files": () => json({ detail: "Admins only" }, { status: 403 }) }));
    renderApp("/files");

    expect(await screen.findByText("Files are for admins.")).toBeInTheDocument();
  });

  it("shows the server's detail when the folder is missing", async () => {
    installFakeFetch(
      fileRoutes({ "GET /api/files": () => json({ detail: "No such file or folder: gone" }, { status: 404 }) }),
    );
    renderApp("/files?path=gone");

    expect(await screen.findByRole("alert")).toHaveTextContent("No such file or folder: gone");
    expect(screen.getByRole("link", { name: "Back to the stacks folder" })).toBeInTheDocument();
  });
});

describe("show hidden", () => {
  it("lists hidden entries when on, saves it under both keys and reads it back", async () => {
    const fake = installFakeFetch(fileRoutes());
    const first = renderApp("/files?path=web/conf");

    const toggle = await screen.findByRole("checkbox", { name: "Show hidden" });
    expect(toggle).not.toBeChecked();
    await first.user.click(toggle);
    expect(toggle).toBeChecked();
    expect(localStorage.getItem(SHOW_HIDDEN_KEY)).toBe("true");
    expect(localStorage.getItem(SHOW_HIDDEN_LEGACY_KEY)).toBe("true");
    await waitFor(() => expect(fake.calls("GET", "/api/files").map((r) => query(r).hidden)).toContain("true"));
    first.unmount();

    // A reload: the page starts with it on.
    const reads = fake.calls("GET", "/api/files").length;
    renderApp("/files?path=web/conf");
    expect(await screen.findByRole("checkbox", { name: "Show hidden" })).toBeChecked();
    await waitFor(() => expect(fake.calls("GET", "/api/files").length).toBeGreaterThan(reads));
    expect(query(fake.calls("GET", "/api/files").at(-1)).hidden).toBe("true");
  });

  it("reads the specification's key when the issue's is missing", async () => {
    localStorage.setItem(SHOW_HIDDEN_LEGACY_KEY, "true");
    installFakeFetch(fileRoutes());
    renderApp("/files");
    expect(await screen.findByRole("checkbox", { name: "Show hidden" })).toBeChecked();
  });
});

describe("uploads", () => {
  it("turns show hidden on for a dotfile and sends it with the CSRF token", async () => {
    document.cookie = "stackyard_csrf=tok3n";
    installFakeFetch(fileRoutes());
    renderApp("/files?path=web/conf");

    await screen.findByRole("table", { name: "Files" });
    expect(screen.getByRole("checkbox", { name: "Show hidden" })).not.toBeChecked();
    pick(filesInput(), [makeFile(".env", 12)]);

    const xhr = await nextXhr(1);
    expect(screen.getByRole("checkbox", { name: "Show hidden" })).toBeChecked();
    expect(localStorage.getItem(SHOW_HIDDEN_KEY)).toBe("true");
    expect(localStorage.getItem(SHOW_HIDDEN_LEGACY_KEY)).toBe("true");
    expect(xhr.method).toBe("PUT");
    expect(xhr.pathname).toBe("/api/files/upload");
    expect(Object.fromEntries(xhr.query)).toEqual({ path: "web/conf/.env", overwrite: "false" });
    expect(xhr.requestHeaders["X-CSRF-Token"]).toBe("tok3n");
    expect(xhr.requestHeaders["Content-Type"]).toBe("application/octet-stream");
    expect(xhr.withCredentials).toBe(true);
    expect(xhr.body).toBeInstanceOf(File);

    await xhr.respond(201, { path: "web/conf/.env", size: 12 });
    expect(await screen.findByRole("status")).toHaveTextContent("Uploaded .env");
  });

  it("turns show hidden on for a dot-folder inside an uploaded folder", async () => {
    installFakeFetch(fileRoutes());
    renderApp("/files");
    await screen.findByRole("table", { name: "Files" });

    pick(folderInput(), [makeFile("x.conf", 3, "site/.hidden/x.conf")]);
    await nextXhr(1);
    expect(screen.getByRole("checkbox", { name: "Show hidden" })).toBeChecked();
  });

  it("shows one file's progress as bytes of its size", async () => {
    installFakeFetch(fileRoutes());
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    pick(filesInput(), [makeFile("big.bin", 2000)]);
    const xhr = await nextXhr(1);
    await xhr.progress(500);
    const bar = screen.getByRole("progressbar", { name: "Upload progress" });
    expect(bar).toHaveAttribute("aria-valuenow", "25");
    expect(screen.getByTestId("upload-detail")).toHaveTextContent("500 B of 2.0 kB");
    await xhr.respond(201, { path: "web/conf/big.bin", size: 2000 });
    // The finished upload stays on the page until dismissed.
    expect(await screen.findByRole("status")).toHaveTextContent("Uploaded big.bin");
    expect(bar).toHaveAttribute("aria-valuenow", "100");
    expect(screen.getByTestId("upload-detail")).toHaveTextContent("2.0 kB of 2.0 kB");
    await user.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByRole("progressbar", { name: "Upload progress" })).not.toBeInTheDocument();
  });

  it("asks before overwriting an existing file, then retries with overwrite=true", async () => {
    const fake = installFakeFetch(fileRoutes());
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });
    const reads = fake.calls("GET", "/api/files").length;

    pick(filesInput(), [makeFile("app.yml", 10)]);
    const first = await nextXhr(1);
    expect(first.query.get("overwrite")).toBe("false");
    await first.respond(409, { detail: "Already exists: web/conf/app.yml" });

    const dialog = await screen.findByRole("alertdialog", { name: "app.yml already exists" });
    expect(dialog).toHaveTextContent("Already exists: web/conf/app.yml");
    await user.click(within(dialog).getByRole("button", { name: "Overwrite" }));

    const second = await nextXhr(2);
    expect(Object.fromEntries(second.query)).toEqual({ path: "web/conf/app.yml", overwrite: "true" });
    await second.respond(201, { path: "web/conf/app.yml", size: 10 });
    expect(await screen.findByRole("status")).toHaveTextContent("Uploaded app.yml");
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    // The listing is read again.
    await waitFor(() => expect(fake.calls("GET", "/api/files").length).toBeGreaterThan(reads));
  });

  it("keeps the existing file when the user cancels", async () => {
    installFakeFetch(fileRoutes());
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    pick(filesInput(), [makeFile("app.yml", 10)]);
    await (await nextXhr(1)).respond(409, { detail: "Already exists: web/conf/app.yml" });
    const dialog = await screen.findByRole("alertdialog");
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));

    expect(await screen.findByRole("status")).toHaveTextContent("app.yml was not overwritten");
    expect(instances()).toHaveLength(1);
  });

  it("does not ask on other conflicts", async () => {
    installFakeFetch(fileRoutes());
    renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    pick(filesInput(), [makeFile("data", 10)]);
    await (await nextXhr(1)).respond(400, { detail: "Not a file: web/conf/data" });
    expect(await screen.findByRole("alert")).toHaveTextContent("Upload of data failed: Not a file: web/conf/data");
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
  });

  it("reports an empty folder from the folder picker", async () => {
    installFakeFetch(fileRoutes());
    renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    pick(folderInput(), []);
    expect(await screen.findByRole("alert")).toHaveTextContent("The selected folder is empty");
    expect(instances()).toHaveLength(0);
  });

  it("has a folder picker", async () => {
    installFakeFetch(fileRoutes());
    renderApp("/files");
    await screen.findByRole("table", { name: "Files" });
    expect(folderInput()).toHaveAttribute("webkitdirectory");
    expect(folderInput()).toHaveAttribute("multiple");
    expect(filesInput()).toHaveAttribute("multiple");
  });

  it("uploads a folder file by file with overwrite and byte-weighted progress", async () => {
    installFakeFetch(fileRoutes());
    renderApp("/files?path=web");
    await screen.findByRole("table", { name: "Files" });

    pick(folderInput(), [makeFile("a.txt", 1000, "site/a.txt"), makeFile("b.txt", 3000, "site/sub/b.txt")]);

    const first = await nextXhr(1);
    expect(Object.fromEntries(first.query)).toEqual({ path: "web/site/a.txt", overwrite: "true" });
    await first.progress(500);
    expect(screen.getByTestId("upload-detail")).toHaveTextContent("0 of 2 files · 500 B of 4.0 kB");
    await first.respond(201, { path: "web/site/a.txt", size: 1000 });

    const second = await nextXhr(2);
    expect(Object.fromEntries(second.query)).toEqual({ path: "web/site/sub/b.txt", overwrite: "true" });
    await second.progress(1500);
    expect(screen.getByTestId("upload-detail")).toHaveTextContent("1 of 2 files · 2.5 kB of 4.0 kB");
    // 2500 of 4000 bytes, not 1 of 2 files.
    expect(screen.getByRole("progressbar", { name: "Upload progress" })).toHaveAttribute("aria-valuenow", "63");
    await second.respond(201, { path: "web/site/sub/b.txt", size: 3000 });

    expect(await screen.findByRole("status")).toHaveTextContent("Uploaded 2 files");
    expect(screen.getByTestId("upload-detail")).toHaveTextContent("2 of 2 files · 4.0 kB of 4.0 kB");
  });

  it("reports the first per-file failure of a folder upload", async () => {
    installFakeFetch(fileRoutes());
    renderApp("/files?path=web");
    await screen.findByRole("table", { name: "Files" });

    pick(folderInput(), [
      makeFile("a.txt", 10, "site/a.txt"),
      makeFile("b.txt", 10, "site/b.txt"),
      makeFile("c.txt", 10, "site/c.txt"),
      makeFile("d.txt", 10, "site/d.txt"),
    ]);
    await (await nextXhr(1)).respond(201, { path: "web/site/a.txt", size: 10 });
    await (await nextXhr(2)).respond(400, { detail: "Not a folder: web/site" });
    await (await nextXhr(3)).respond(507, { detail: "Disk full" });
    await (await nextXhr(4)).respond(201, { path: "web/site/d.txt", size: 10 });

    expect(await screen.findByRole("alert")).toHaveTextContent(
      "Uploaded 2 of 4 files; first failure: site/b.txt: Not a folder: web/site",
    );
  });

  it("uploads dropped files", async () => {
    installFakeFetch(fileRoutes());
    renderApp("/files?path=web/conf");
    const table = await screen.findByRole("table", { name: "Files" });
    const zone = table.closest("section");
    if (!zone) throw new Error("no drop zone");

    const file = makeFile("notes.txt", 4);
    fireEvent.dragEnter(zone, { dataTransfer: { types: ["Files"], files: [file], items: [] } });
    expect(zone).toHaveClass("drop-active");
    fireEvent.drop(zone, { dataTransfer: { types: ["Files"], files: [file], items: [] } });
    expect(zone).not.toHaveClass("drop-active");

    const xhr = await nextXhr(1);
    expect(Object.fromEntries(xhr.query)).toEqual({ path: "web/conf/notes.txt", overwrite: "false" });
  });
});

describe("downloads", () => {
  let saved: { href: string; download: string }[];
  const realCreate = URL.createObjectURL;
  const realRevoke = URL.revokeObjectURL;

  beforeEach(() => {
    saved = [];
    URL.createObjectURL = vi.fn(() => "blob:http://localhost/1");
    URL.revokeObjectURL = vi.fn();
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      saved.push({ href: this.href, download: this.download });
    });
  });

  afterEach(() => {
    URL.createObjectURL = realCreate;
    URL.revokeObjectURL = realRevoke;
  });

  it("shows Preparing until the first bytes, then the running byte count, then saves the zip", async () => {
    let stream!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        stream = controller;
      },
    });
    const fake = installFakeFetch(
      fileRoutes({
        "GET /api/files/download": () =>
          new Response(body, {
            headers: { "Content-Type": "application/zip", "Content-Disposition": 'attachment; filename="data.zip"' },
          }),
      }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("data")).getByRole("button", { name: "Download data" }));
    const downloads = await screen.findByRole("region", { name: "Downloads" });
    expect(within(downloads).getByRole("status")).toHaveTextContent("Preparing data.zip");
    expect(query(fake.calls("GET", "/api/files/download")[0])).toEqual({ path: "web/conf/data" });
    // No Content-Length: no percentage.
    expect(within(downloads).getByRole("progressbar", { name: "Download progress" })).not.toHaveAttribute(
      "aria-valuenow",
    );

    await act(async () => {
      stream.enqueue(new Uint8Array(1_500_000));
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    await waitFor(() => expect(within(downloads).getByRole("status")).toHaveTextContent("data.zip: 1.5 MB downloaded"));

    await act(async () => {
      stream.enqueue(new Uint8Array(700_000));
      stream.close();
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    await waitFor(() => expect(within(downloads).getByRole("status")).toHaveTextContent("data.zip: 2.2 MB downloaded"));
    expect(saved).toEqual([{ href: "blob:http://localhost/1", download: "data.zip" }]);
  });

  it("downloads the current folder", async () => {
    const fake = installFakeFetch(
      fileRoutes({
        "GET /api/files/download": () =>
          new Response(new Uint8Array(10), {
            headers: { "Content-Type": "application/zip", "Content-Disposition": 'attachment; filename="conf.zip"' },
          }),
      }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(screen.getByRole("button", { name: "Download folder" }));
    await waitFor(() => expect(saved).toEqual([{ href: "blob:http://localhost/1", download: "conf.zip" }]));
    expect(query(fake.calls("GET", "/api/files/download")[0])).toEqual({ path: "web/conf" });
  });

  it("shows the server's detail when a download fails", async () => {
    installFakeFetch(
      fileRoutes({
        "GET /api/files/download": () => json({ detail: "No such file or folder: web/conf/app.yml" }, { status: 404 }),
      }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Download app.yml" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("app.yml: No such file or folder: web/conf/app.yml");
    expect(saved).toEqual([]);
  });
});

describe("folder changes", () => {
  it("creates a folder in the current folder", async () => {
    const fake = installFakeFetch(
      fileRoutes({ "POST /api/files/folder": () => json({ path: "web/conf/new" }, { status: 201 }) }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });
    const reads = fake.calls("GET", "/api/files").length;

    await user.click(screen.getByRole("button", { name: "New folder" }));
    await user.type(screen.getByRole("textbox", { name: "Folder name" }), "new");
    await user.click(screen.getByRole("button", { name: "Create" }));

    await waitFor(() => expect(fake.calls("POST", "/api/files/folder")).toHaveLength(1));
    expect(await fake.calls("POST", "/api/files/folder")[0]?.json()).toEqual({ path: "web/conf/new" });
    await waitFor(() => expect(fake.calls("GET", "/api/files").length).toBeGreaterThan(reads));
    expect(screen.queryByRole("textbox", { name: "Folder name" })).not.toBeInTheDocument();
  });

  it("shows the server's detail when the folder exists", async () => {
    installFakeFetch(
      fileRoutes({ "POST /api/files/folder": () => json({ detail: "Already exists: web/conf/data" }, { status: 409 }) }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(screen.getByRole("button", { name: "New folder" }));
    await user.type(screen.getByRole("textbox", { name: "Folder name" }), "data");
    await user.click(screen.getByRole("button", { name: "Create" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Already exists: web/conf/data");
  });

  it("creates an empty file (version null) and opens it in the editor", async () => {
    const fake = installFakeFetch(
      fileRoutes({
        "PUT /api/files/content": () => json({ path: "web/conf/notes.md", version: "v1" }),
        "GET /api/files/content": { path: "web/conf/notes.md", content: "", version: "v1" },
      }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(screen.getByRole("button", { name: "New file" }));
    await user.type(screen.getByRole("textbox", { name: "File name" }), "notes.md");
    await user.click(screen.getByRole("button", { name: "Create" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/files/content")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/files/content")[0]?.json()).toEqual({
      path: "web/conf/notes.md",
      content: "",
      version: null,
    });
    expect(await screen.findByRole("region", { name: "web/conf/notes.md" })).toBeInTheDocument();
  });

  it("renames with a move in the same folder", async () => {
    const fake = installFakeFetch(
      fileRoutes({ "POST /api/files/move": () => json({ path: "web/conf/main.yml" }) }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Rename app.yml" }));
    const input = screen.getByRole("textbox", { name: "New name for app.yml" });
    await user.clear(input);
    await user.type(input, "main.yml{Enter}");

    await waitFor(() => expect(fake.calls("POST", "/api/files/move")).toHaveLength(1));
    expect(await fake.calls("POST", "/api/files/move")[0]?.json()).toEqual({
      source: "web/conf/app.yml",
      destination: "web/conf/main.yml",
    });
  });

  it("asks before deleting a folder with everything inside, then deletes recursively", async () => {
    const fake = installFakeFetch(fileRoutes({ "DELETE /api/files": () => noContent() }));
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("data")).getByRole("button", { name: "Delete data" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete folder data?" });
    expect(dialog).toHaveTextContent("everything inside it");
    expect(fake.calls("DELETE", "/api/files")).toHaveLength(0);
    await user.click(within(dialog).getByRole("button", { name: "Delete" }));

    await waitFor(() => expect(fake.calls("DELETE", "/api/files")).toHaveLength(1));
    expect(query(fake.calls("DELETE", "/api/files")[0])).toEqual({ path: "web/conf/data", recursive: "true" });
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
  });

  it("deletes a file without recursive", async () => {
    const fake = installFakeFetch(fileRoutes({ "DELETE /api/files": () => noContent() }));
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Delete app.yml" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete file app.yml?" });
    await user.click(within(dialog).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/files")).toHaveLength(1));
    expect(query(fake.calls("DELETE", "/api/files")[0])).toEqual({ path: "web/conf/app.yml", recursive: "false" });
  });
});
