import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { ConfirmButton } from "./ConfirmButton";
import { ConfirmDialog, Dialog } from "./Dialog";

function Page({ onClose }: { onClose?: () => void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Open
      </button>
      <button type="button">Behind</button>
      {open && (
        <Dialog
          title="Edit"
          onClose={() => {
            onClose?.();
            setOpen(false);
          }}
        >
          <input aria-label="Name" />
          <button type="button" disabled>
            Disabled
          </button>
          <button type="button">Save</button>
        </Dialog>
      )}
    </>
  );
}

describe("Dialog", () => {
  it("moves the focus in, keeps it inside on Tab and Shift-Tab, and gives it back on Escape", async () => {
    const onClose = vi.fn();
    const user = userEvent.setup();
    render(<Page onClose={onClose} />);
    const opener = screen.getByRole("button", { name: "Open" });
    await user.click(opener);

    const dialog = screen.getByRole("dialog", { name: "Edit" });
    expect(dialog).toHaveAttribute("aria-modal", "true");
    expect(screen.getByLabelText("Name")).toHaveFocus();
    await user.tab();
    expect(screen.getByRole("button", { name: "Save" })).toHaveFocus();
    await user.tab(); // past the last: back to the first, never to the page behind
    expect(screen.getByLabelText("Name")).toHaveFocus();
    await user.tab({ shift: true });
    expect(screen.getByRole("button", { name: "Save" })).toHaveFocus();

    await user.keyboard("{Escape}");
    expect(onClose).toHaveBeenCalledOnce();
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(opener).toHaveFocus();
  });

  it("brings back focus that leaves the dialog", async () => {
    const user = userEvent.setup();
    render(<Page />);
    await user.click(screen.getByRole("button", { name: "Open" }));
    screen.getByRole("button", { name: "Behind" }).focus();
    expect(screen.getByLabelText("Name")).toHaveFocus();
  });

  it("ConfirmDialog focuses Cancel first and cancels on Escape", async () => {
    const onCancel = vi.fn();
    const onConfirm = vi.fn();
    const user = userEvent.setup();
    render(
      <ConfirmDialog title="Replace?" confirmLabel="Replace" onConfirm={onConfirm} onCancel={onCancel}>
        <p>It exists.</p>
      </ConfirmDialog>,
    );
    expect(screen.getByRole("alertdialog", { name: "Replace?" })).toHaveAccessibleDescription("It exists.");
    expect(screen.getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.tab();
    expect(screen.getByRole("button", { name: "Replace" })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(onCancel).toHaveBeenCalledOnce();
    expect(onConfirm).not.toHaveBeenCalled();
  });
});

describe("ConfirmButton", () => {
  it("asks with the focus on Cancel, cancels on Escape and gives the focus back", async () => {
    const onConfirm = vi.fn();
    const user = userEvent.setup();
    render(
      <ConfirmButton label="Delete token ci" onConfirm={onConfirm}>
        Delete
      </ConfirmButton>,
    );
    await user.click(screen.getByRole("button", { name: "Delete token ci" }));
    const group = screen.getByRole("group", { name: "Delete token ci" });
    expect(group).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Cancel" })).toHaveFocus();

    await user.keyboard("{Escape}");
    expect(screen.queryByRole("group")).not.toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Delete token ci" })).toHaveFocus();
    expect(onConfirm).not.toHaveBeenCalled();

    await user.click(screen.getByRole("button", { name: "Delete token ci" }));
    await user.click(screen.getByRole("button", { name: "Confirm" }));
    expect(onConfirm).toHaveBeenCalledOnce();
  });
});
