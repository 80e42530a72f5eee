import { EditorView } from "@codemirror/view";
import { screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { saveDraft } from "../../components/useUnsavedChanges";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { installFakeXhr, pendingXhr } from "../../test/fakeXhr";
import { makeEntry, makeFile, makeFolder } from "../../test/fileFixtures";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";

const folder = makeFolder("web", [makeEntry({ path: "web/compose.yaml", size: 40 })]);
const COMPOSE = "services:\n  app:\n    image: nginx\n";

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/files": folder,
    "GET /api/files/content": { path: "web/compose.yaml", content: COMPOSE, version: "v1" },
    ...extra,
  };
}

/** The CodeMirror editor once it has loaded (a textarea stands in until then). */
async function codeEditor(name: string): Promise<EditorView> {
  const editor = await screen.findByRole("region", { name: /web\/compose\.yaml/ });
  await waitFor(() => expect(editor.querySelector("[data-editor=codemirror]")).not.toBeNull());
  const content = within(editor).getByRole("textbox", { name });
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error("no CodeMirror view");
  return view;
}

function typeAtEnd(view: EditorView, text: string) {
  view.dispatch({ changes: { from: view.state.doc.length, insert: text } });
}

describe("file editor", () => {
  it("opens a file from the listing with YAML highlighting and saves it with its version", async () => {
    const fake = installFakeFetch(
      routes({ "PUT /api/files/content": () => json({ path: "web/compose.yaml", version: "v2" }) }),
    );
    const { user } = renderApp("/files?path=web");

    await user.click(await screen.findByRole("link", { name: "compose.yaml" }));
    const view = await codeEditor("Contents of web/compose.yaml");
    expect(view.state.doc.toString()).toBe(COMPOSE);
    expect(screen.getByText(/YAML/)).toBeInTheDocument();
    // Keys are highlighted.
    await waitFor(() => expect(view.contentDOM.querySelector("span[class]")).not.toBeNull());

    typeAtEnd(view, "    restart: always\n");
    expect(await screen.findByText(/Unsaved changes/)).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Save" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/files/content")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/files/content")[0]?.json()).toEqual({
      path: "web/compose.yaml",
      content: `${COMPOSE}    restart: always\n`,
      version: "v1",
    });
    expect(await screen.findByText("Saved.")).toBeInTheDocument();
    expect(screen.queryByText(/Unsaved changes/)).not.toBeInTheDocument();

    // The next save sends the new version.
    typeAtEnd(view, "#\n");
    await user.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/files/content")).toHaveLength(2));
    expect((await fake.calls("PUT", "/api/files/content")[1]?.json()) as { version: string }).toMatchObject({
      version: "v2",
    });
  });

  it("on a conflict shows the detail and reloads the file on request", async () => {
    let content = COMPOSE;
    const fake = installFakeFetch(
      routes({
        "GET /api/files/content": () => json({ path: "web/compose.yaml", content, version: content === COMPOSE ? "v1" : "v9" }),
        "PUT /api/files/content": () =>
          json({ detail: "web/compose.yaml changed since it was opened; reload it and edit again" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");

    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "# mine\n");
    await user.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("changed since it was opened");

    content = "services: {}\n";
    await user.click(screen.getByRole("button", { name: "Reload" }));
    await waitFor(() => expect(view.state.doc.toString()).toBe("services: {}\n"));
    expect(fake.calls("GET", "/api/files/content")).toHaveLength(2);
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });

  it("shows why a file cannot be edited", async () => {
    installFakeFetch(
      routes({
        "GET /api/files/content": () =>
          json({ detail: "Not a text file (not UTF-8); download it instead" }, { status: 400 }),
      }),
    );
    renderApp("/files?path=web&edit=web/compose.yaml");
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Not a text file");
    expect(within(alert).getByRole("button", { name: "Download" })).toBeInTheDocument();
  });

  it("asks before closing with unsaved changes", async () => {
    installFakeFetch(routes());
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");

    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "x");
    await user.click(screen.getByRole("button", { name: "Close" }));
    const dialog = screen.getByRole("alertdialog", { name: "Discard unsaved changes?" });
    await user.click(within(dialog).getByRole("button", { name: "Keep editing" }));
    expect(screen.getByRole("region", { name: /web\/compose\.yaml/ })).toBeInTheDocument();

    await user.click(screen.getByRole("button", { name: "Close" }));
    await user.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Discard" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: /web\/compose\.yaml/ })).not.toBeInTheDocument());
  });
});

describe("unsaved edits", () => {
  let answers: boolean[];
  let asked: string[];

  beforeEach(() => {
    answers = [];
    asked = [];
    vi.spyOn(window, "confirm").mockImplementation((message?: string) => {
      asked.push(String(message));
      return answers.shift() ?? false;
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  const twoFiles = makeFolder("web", [
    makeEntry({ path: "web/compose.yaml", size: 40 }),
    makeEntry({ path: "web/other.txt", size: 3 }),
  ]);

  it("asks before another file or the sidebar takes the editor away", async () => {
    installFakeFetch(routes({ "GET /api/files": twoFiles }));
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");
    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "# mine\n");
    await screen.findByText(/Unsaved changes/);

    // Another file: refused, the edits stay.
    await user.click(screen.getByRole("link", { name: "other.txt" }));
    await waitFor(() => expect(asked).toHaveLength(1), { timeout: 5000 });
    expect(asked[0]).toContain("web/compose.yaml");
    expect(screen.getByTestId("location")).toHaveTextContent("/files");
    expect(view.state.doc.toString()).toBe(`${COMPOSE}# mine\n`);
    expect(screen.getByRole("region", { name: /web\/compose\.yaml/ })).toBeInTheDocument();

    // The sidebar: accepted, the page changes.
    answers.push(true);
    await user.click(screen.getByRole("link", { name: "Stacks" }));
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/stacks"), { timeout: 5000 });
    expect(asked).toHaveLength(2);
  });

  it("does not ask once the edits are saved or discarded", async () => {
    installFakeFetch(
      routes({
        "GET /api/files": twoFiles,
        "PUT /api/files/content": () => json({ path: "web/compose.yaml", version: "v2" }),
      }),
    );
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");
    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "# one\n");
    await user.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("Saved.")).toBeInTheDocument();

    typeAtEnd(view, "# two\n");
    await user.click(screen.getByRole("button", { name: "Close" }));
    await user.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Discard" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: /web\/compose\.yaml/ })).not.toBeInTheDocument());
    expect(asked).toEqual([]);
  });

  it("keeps the text across signing in again when the session expired at save", async () => {
    let signedIn = true;
    installFakeFetch(
      routes({
        "GET /api/auth/me": () => (signedIn ? json(adminUser) : json({ detail: "Not signed in" }, { status: 401 })),
        "PUT /api/files/content": () => json({ detail: "Session expired" }, { status: 401 }),
        "POST /api/auth/login": () => {
          signedIn = true;
          return json({ user: adminUser });
        },
      }),
    );
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");
    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "# kept\n");
    await screen.findByText(/Unsaved changes/);
    signedIn = false;
    await user.click(screen.getByRole("button", { name: "Save" }));

    // To the sign-in page, without asking about the edits (they are kept).
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/login"));
    expect(asked).toEqual([]);
    await user.type(screen.getByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "secret");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    // Back at the file, with the text as it was.
    const again = await codeEditor("Contents of web/compose.yaml");
    await waitFor(() => expect(again.state.doc.toString()).toBe(`${COMPOSE}# kept\n`));
    expect(screen.getByText(/unsaved changes from before you signed in again are back/)).toBeInTheDocument();
    expect(screen.getByText(/Unsaved changes$/)).toBeInTheDocument();
  });

  it("says when the file changed on the server since the text was kept", async () => {
    saveDraft("files:web/compose.yaml", JSON.stringify({ text: "services: {}\n", version: "v0" }));
    installFakeFetch(routes());
    renderApp("/files?path=web&edit=web/compose.yaml");
    const view = await codeEditor("Contents of web/compose.yaml");
    await waitFor(() => expect(view.state.doc.toString()).toBe("services: {}\n"));
    expect(screen.getByText(/the file changed on the server since/)).toBeInTheDocument();
  });
});

describe("a file uploaded over the open one", () => {
  beforeEach(() => {
    installFakeXhr();
  });

  function uploadOver(name: string) {
    const input = screen.getByTestId<HTMLInputElement>("upload-files-input");
    Object.defineProperty(input, "files", { value: [makeFile(name, 5)], configurable: true });
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  async function answerOverwrite(user: { click: (el: Element) => Promise<void> }) {
    await waitFor(() => expect(pendingXhr()).toBeDefined());
    await pendingXhr()?.respond(409, { detail: "Already exists: web/compose.yaml" });
    const dialog = await screen.findByRole("alertdialog", { name: "compose.yaml already exists" });
    await user.click(within(dialog).getByRole("button", { name: "Overwrite" }));
    await waitFor(() => expect(pendingXhr()).toBeDefined());
    await pendingXhr()?.respond(201, { path: "web/compose.yaml", size: 5 });
  }

  it("is reloaded when there are no edits", async () => {
    let content = COMPOSE;
    installFakeFetch(
      routes({
        "GET /api/files/content": () =>
          json({ path: "web/compose.yaml", content, version: content === COMPOSE ? "v1" : "v2" }),
      }),
    );
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");
    const view = await codeEditor("Contents of web/compose.yaml");

    content = "services: {}\n";
    uploadOver("compose.yaml");
    await answerOverwrite(user);
    await waitFor(() => expect(view.state.doc.toString()).toBe("services: {}\n"));
    expect(screen.getByText("Reloaded: an upload replaced this file.")).toBeInTheDocument();
  });

  it("is marked changed on disk when there are edits, which stay", async () => {
    installFakeFetch(routes());
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");
    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "# mine\n");
    await screen.findByText(/Unsaved changes/);

    uploadOver("compose.yaml");
    await answerOverwrite(user);
    const editor = screen.getByRole("region", { name: /web\/compose\.yaml/ });
    expect(await within(editor).findByRole("alert")).toHaveTextContent("Changed on disk");
    expect(within(editor).getByText(/Changed on disk$/)).toBeInTheDocument();
    expect(view.state.doc.toString()).toBe(`${COMPOSE}# mine\n`);
    expect(screen.queryByText("Saved.")).not.toBeInTheDocument();
  });
});
