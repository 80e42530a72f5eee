import { act, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { createMemoryRouter, Link, RouterProvider, useLocation } from "react-router";
import { describe, expect, it, vi } from "vitest";
import { leaveWithoutAsking, saveDraft, takeDraft, UnsavedChangesGuard, useUnsavedChanges } from "./useUnsavedChanges";

function Editor({ name = "", message = "Discard your edits?" }: { name?: string; message?: string }) {
  const [dirty, setDirty] = useState(false);
  useUnsavedChanges(dirty, message);
  return (
    <>
      <button type="button" onClick={() => setDirty(true)}>
        edit{name}
      </button>
      <button type="button" onClick={() => setDirty(false)}>
        save{name}
      </button>
    </>
  );
}

function Where() {
  return <output data-testid="where">{useLocation().pathname}</output>;
}

function setup() {
  const router = createMemoryRouter(
    [
      {
        path: "/",
        element: (
          <>
            <UnsavedChangesGuard />
            <Editor />
            <Editor name="2" message="Discard the second editor's edits?" />
            <Link to="/elsewhere">leave</Link>
            <Where />
          </>
        ),
      },
      { path: "/elsewhere", element: <Where /> },
    ],
    { initialEntries: ["/"] },
  );
  render(<RouterProvider router={router} />);
  return { user: userEvent.setup(), router };
}

describe("useUnsavedChanges", () => {
  it("lets a clean page go without asking", async () => {
    const confirm = vi.spyOn(window, "confirm");
    const { user } = setup();
    await user.click(screen.getByRole("link", { name: "leave" }));
    expect(screen.getByTestId("where")).toHaveTextContent("/elsewhere");
    expect(confirm).not.toHaveBeenCalled();
  });

  it("asks before leaving with unsaved edits and stays when told to", async () => {
    const confirm = vi.spyOn(window, "confirm").mockReturnValue(false);
    const { user } = setup();
    await user.click(screen.getByRole("button", { name: "edit" }));
    await user.click(screen.getByRole("link", { name: "leave" }));
    expect(confirm).toHaveBeenCalledWith("Discard your edits?");
    expect(screen.getByTestId("where")).toHaveTextContent(/^\/$/);
  });

  it("leaves when the user agrees", async () => {
    vi.spyOn(window, "confirm").mockReturnValue(true);
    const { user, router } = setup();
    await user.click(screen.getByRole("button", { name: "edit" }));
    await act(() => router.navigate("/elsewhere"));
    expect(screen.getByTestId("where")).toHaveTextContent("/elsewhere");
  });

  it("stops asking once saved", async () => {
    const confirm = vi.spyOn(window, "confirm");
    const { user } = setup();
    await user.click(screen.getByRole("button", { name: "edit" }));
    await user.click(screen.getByRole("button", { name: "save" }));
    await user.click(screen.getByRole("link", { name: "leave" }));
    expect(confirm).not.toHaveBeenCalled();
    expect(screen.getByTestId("where")).toHaveTextContent("/elsewhere");
  });

  it("asks for any of several editors on one page", async () => {
    const confirm = vi.spyOn(window, "confirm").mockReturnValue(false);
    const { user } = setup();
    await user.click(screen.getByRole("button", { name: "edit2" }));
    await user.click(screen.getByRole("link", { name: "leave" }));
    expect(confirm).toHaveBeenCalledWith("Discard the second editor's edits?");
    expect(screen.getByTestId("where")).toHaveTextContent(/^\/$/);
  });

  it("lets one navigation through unasked after leaveWithoutAsking", async () => {
    const confirm = vi.spyOn(window, "confirm");
    const { user } = setup();
    await user.click(screen.getByRole("button", { name: "edit" }));
    leaveWithoutAsking();
    await user.click(screen.getByRole("link", { name: "leave" }));
    expect(confirm).not.toHaveBeenCalled();
    expect(screen.getByTestId("where")).toHaveTextContent("/elsewhere");
  });

  it("asks the browser before unloading the page only while dirty", async () => {
    const { user } = setup();
    const clean = new Event("beforeunload", { cancelable: true });
    window.dispatchEvent(clean);
    expect(clean.defaultPrevented).toBe(false);
    await user.click(screen.getByRole("button", { name: "edit" }));
    const dirty = new Event("beforeunload", { cancelable: true });
    window.dispatchEvent(dirty);
    expect(dirty.defaultPrevented).toBe(true);
  });
});

describe("drafts", () => {
  it("keeps a draft until it is taken once", () => {
    expect(takeDraft("stack:web:compose")).toBeNull();
    saveDraft("stack:web:compose", "services: {}\n");
    expect(takeDraft("stack:web:compose")).toBe("services: {}\n");
    expect(takeDraft("stack:web:compose")).toBeNull();
  });
});
