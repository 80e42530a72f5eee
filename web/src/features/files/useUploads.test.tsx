import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { makeFile } from "../../test/fileFixtures";
import { installFakeXhr } from "../../test/fakeXhr";
import { renderApp } from "../../test/renderApp";
import { fileRoutes, filesInput, folderInput, instances, nextXhr, pick } from "./filesTesting";
import { SHOW_HIDDEN_KEY, SHOW_HIDDEN_LEGACY_KEY } from "./showHidden";

beforeEach(() => {
  installFakeXhr();
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

  it("asks once before a folder upload replaces existing files, then uploads them all", async () => {
    const fake = installFakeFetch(
      fileRoutes({ "POST /api/files/exists": { existing: ["web/site/a.txt", "web/site/sub/b.txt"] } }),
    );
    const { user } = renderApp("/files?path=web");
    await screen.findByRole("table", { name: "Files" });

    pick(folderInput(), [
      makeFile("a.txt", 10, "site/a.txt"),
      makeFile("b.txt", 10, "site/sub/b.txt"),
      makeFile("c.txt", 10, "site/c.txt"),
    ]);
    const dialog = await screen.findByRole("alertdialog", { name: "2 files exist and will be replaced" });
    expect(await fake.calls("POST", "/api/files/exists")[0]?.json()).toEqual({
      paths: ["web/site/a.txt", "web/site/sub/b.txt", "web/site/c.txt"],
    });
    expect(dialog).toHaveTextContent("site/a.txt");
    expect(dialog).toHaveTextContent("site/sub/b.txt");
    expect(instances()).toHaveLength(0); // nothing sent before the answer

    await user.click(within(dialog).getByRole("button", { name: "Replace and upload" }));
    for (const [n, path] of [
      [1, "web/site/a.txt"],
      [2, "web/site/sub/b.txt"],
      [3, "web/site/c.txt"],
    ] as const) {
      const xhr = await nextXhr(n);
      expect(Object.fromEntries(xhr.query)).toEqual({ path, overwrite: "true" });
      await xhr.respond(201, { path, size: 10 });
    }
    expect(await screen.findByRole("status")).toHaveTextContent("Uploaded 3 files");
    // Asked once, not per file.
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
  });

  it("uploads nothing when the user keeps the existing files", async () => {
    installFakeFetch(fileRoutes({ "POST /api/files/exists": { existing: ["web/site/a.txt"] } }));
    const { user } = renderApp("/files?path=web");
    await screen.findByRole("table", { name: "Files" });

    pick(folderInput(), [makeFile("a.txt", 10, "site/a.txt"), makeFile("b.txt", 10, "site/b.txt")]);
    const dialog = await screen.findByRole("alertdialog", { name: "1 file exists and will be replaced" });
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Upload cancelled: nothing was uploaded (2 files)");
    expect(instances()).toHaveLength(0);
  });

  it("does not start when the check fails", async () => {
    installFakeFetch(
      fileRoutes({ "POST /api/files/exists": () => json({ detail: "Path leaves the root" }, { status: 403 }) }),
    );
    renderApp("/files?path=web");
    await screen.findByRole("table", { name: "Files" });

    pick(folderInput(), [makeFile("a.txt", 10, "site/a.txt")]);
    expect(await screen.findByRole("alert")).toHaveTextContent("Cannot check which files exist: Path leaves the root");
    expect(instances()).toHaveLength(0);
  });

  it("asks once for a dropped folder too", async () => {
    installFakeFetch(fileRoutes({ "POST /api/files/exists": { existing: ["web/conf/site/a.txt"] } }));
    renderApp("/files?path=web/conf");
    const table = await screen.findByRole("table", { name: "Files" });
    const zone = table.closest("section");
    if (!zone) throw new Error("no drop zone");

    const file = makeFile("a.txt", 4);
    const fileEntry = { isFile: true, isDirectory: false, name: "a.txt", file: (ok: (f: File) => void) => ok(file) };
    let read = false;
    const folderEntry = {
      isFile: false,
      isDirectory: true,
      name: "site",
      createReader: () => ({
        readEntries: (ok: (entries: unknown[]) => void) => {
          ok(read ? [] : [fileEntry]);
          read = true;
        },
      }),
    };
    const items = [{ kind: "file", webkitGetAsEntry: () => folderEntry }];
    fireEvent.drop(zone, { dataTransfer: { types: ["Files"], files: [], items } });

    expect(await screen.findByRole("alertdialog", { name: "1 file exists and will be replaced" })).toBeInTheDocument();
  });
});
