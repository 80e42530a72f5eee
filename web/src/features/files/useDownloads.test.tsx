import { act, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { renderApp } from "../../test/renderApp";
import { fileRoutes, query, rowOf } from "./filesTesting";

/** A body the test feeds chunk by chunk. */
function controlledBody() {
  let stream!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller;
    },
  });
  return { body, controller: () => stream };
}

async function feed(write: () => void) {
  await act(async () => {
    write();
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
}

const zipHeaders = { "Content-Type": "application/zip", "Content-Disposition": 'attachment; filename="data.zip"' };

describe("downloads into a file the user picks (showSaveFilePicker)", () => {
  let written: Uint8Array[];
  let closed: boolean;
  let aborted: boolean;
  let picked: { suggestedName?: string }[];
  let blobs: number;

  beforeEach(() => {
    written = [];
    closed = false;
    aborted = false;
    picked = [];
    blobs = 0;
    vi.stubGlobal(
      "showSaveFilePicker",
      vi.fn((options: { suggestedName?: string }) => {
        picked.push(options);
        return Promise.resolve({
          createWritable: () =>
            Promise.resolve(
              new WritableStream<Uint8Array>({
                write(chunk) {
                  written.push(chunk);
                },
                close() {
                  closed = true;
                },
                abort() {
                  aborted = true;
                },
              }),
            ),
        });
      }),
    );
    // Nothing may collect the whole body in a Blob.
    const RealBlob = Blob;
    vi.stubGlobal(
      "Blob",
      class extends RealBlob {
        constructor(...args: ConstructorParameters<typeof Blob>) {
          super(...args);
          blobs += 1;
        }
      },
    );
  });

  it("shows Preparing, then the running byte count, while the zip streams into the file", async () => {
    const { body, controller } = controlledBody();
    const fake = installFakeFetch(
      fileRoutes({ "GET /api/files/download": () => new Response(body, { headers: zipHeaders }) }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("data")).getByRole("button", { name: "Download data" }));
    const downloads = await screen.findByRole("region", { name: "Downloads" });
    expect(within(downloads).getByRole("status")).toHaveTextContent("Preparing data.zip");
    expect(picked).toEqual([{ suggestedName: "data.zip" }]);
    await waitFor(() => expect(fake.calls("GET", "/api/files/download")).toHaveLength(1));
    expect(query(fake.calls("GET", "/api/files/download")[0])).toEqual({ path: "web/conf/data" });
    // No Content-Length: no percentage.
    expect(within(downloads).getByRole("progressbar", { name: "Download progress" })).not.toHaveAttribute(
      "aria-valuenow",
    );

    await feed(() => controller().enqueue(new Uint8Array(1_500_000)));
    await waitFor(() => expect(within(downloads).getByRole("status")).toHaveTextContent("data.zip: 1.5 MB downloaded"));
    expect(written.reduce((n, c) => n + c.byteLength, 0)).toBe(1_500_000);
    expect(closed).toBe(false);

    await feed(() => {
      controller().enqueue(new Uint8Array(700_000));
      controller().close();
    });
    await waitFor(() =>
      expect(within(downloads).getByRole("status")).toHaveTextContent("data.zip: 2.2 MB downloaded · saved"),
    );
    expect(closed).toBe(true);
    expect(written.reduce((n, c) => n + c.byteLength, 0)).toBe(2_200_000);
    expect(blobs).toBe(0);
  });

  it("discards the picked file when the server refuses, and shows the detail", async () => {
    installFakeFetch(
      fileRoutes({
        "GET /api/files/download": () => json({ detail: "No such file or folder: web/conf/app.yml" }, { status: 404 }),
      }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Download app.yml" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("app.yml: No such file or folder: web/conf/app.yml");
    expect(aborted).toBe(true);
    expect(written).toEqual([]);
  });

  it("does nothing when the user closes the picker", async () => {
    vi.stubGlobal(
      "showSaveFilePicker",
      vi.fn(() => Promise.reject(new DOMException("The user aborted a request.", "AbortError"))),
    );
    const fake = installFakeFetch(fileRoutes());
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Download app.yml" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Downloads" })).not.toBeInTheDocument());
    expect(fake.calls("GET", "/api/files/download")).toHaveLength(0);
  });
});

describe("downloads where the browser cannot write to a picked file", () => {
  let clicked: { href: string; download: string }[];

  beforeEach(() => {
    clicked = [];
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push({ href: this.href, download: this.download });
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("checks the download, then hands it to the browser as a plain link and says so", async () => {
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
    const downloads = await screen.findByRole("region", { name: "Downloads" });
    await waitFor(() =>
      expect(clicked).toEqual([{ href: `${window.location.origin}/api/files/download?path=web%2Fconf`, download: "conf.zip" }]),
    );
    expect(query(fake.calls("GET", "/api/files/download")[0])).toEqual({ path: "web/conf" });
    expect(within(downloads).getByRole("status")).toHaveTextContent("conf.zip: handed to the browser");
  });

  it("shows the server's detail when a download is refused", async () => {
    installFakeFetch(
      fileRoutes({
        "GET /api/files/download": () => json({ detail: "No such file or folder: web/conf/app.yml" }, { status: 404 }),
      }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Download app.yml" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("app.yml: No such file or folder: web/conf/app.yml");
    expect(clicked).toEqual([]);
  });
});
