import { QueryClientProvider, useMutation } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { createQueryClient } from "../queryClient";
import { ConfirmDelete } from "./ConfirmDelete";

function Page({ remove }: { remove: (id: number) => Promise<void> }) {
  const mutation = useMutation({ mutationFn: remove });
  const [deleting, setDeleting] = useState<number | null>(null);
  const [deleted, setDeleted] = useState<number | null>(null);
  return (
    <>
      <button type="button" onClick={() => setDeleting(7)}>
        Delete seven
      </button>
      {deleted !== null && <p>Deleted {deleted}</p>}
      {deleting !== null && (
        <ConfirmDelete
          title={`Delete thing ${deleting}?`}
          confirmLabel="Delete the thing"
          remove={mutation}
          variables={deleting}
          onCancel={() => setDeleting(null)}
          onDeleted={() => {
            setDeleted(deleting);
            setDeleting(null);
          }}
        >
          <p>It goes for good.</p>
        </ConfirmDelete>
      )}
    </>
  );
}

function renderPage(remove: (id: number) => Promise<void>) {
  const user = userEvent.setup();
  render(
    <QueryClientProvider client={createQueryClient({ retry: false })}>
      <Page remove={remove} />
    </QueryClientProvider>,
  );
  return user;
}

describe("ConfirmDelete", () => {
  it("deletes what it was given once confirmed", async () => {
    const remove = vi.fn(() => Promise.resolve());
    const user = renderPage(remove);
    await user.click(screen.getByRole("button", { name: "Delete seven" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete thing 7?" });
    expect(dialog).toHaveTextContent("It goes for good.");
    await user.click(within(dialog).getByRole("button", { name: "Delete the thing" }));
    expect(await screen.findByText("Deleted 7")).toBeInTheDocument();
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(remove).toHaveBeenCalledWith(7, expect.anything());
  });

  it("stays open with the failure, which Cancel forgets", async () => {
    const user = renderPage(() => Promise.reject(new Error("In use by a schedule")));
    await user.click(screen.getByRole("button", { name: "Delete seven" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete thing 7?" });
    await user.click(within(dialog).getByRole("button", { name: "Delete the thing" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("In use by a schedule");
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await user.click(screen.getByRole("button", { name: "Delete seven" }));
    expect(within(screen.getByRole("alertdialog")).queryByRole("alert")).not.toBeInTheDocument();
  });
});
