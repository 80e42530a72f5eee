import type { FileEntry } from "../../api/types";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { useDeleteEntry } from "./queries";

/** Asks before deleting; a folder goes with everything inside (recursive), a link by itself. */
export function DeleteDialog({ entry, onClose, onDeleted }: { entry: FileEntry; onClose: () => void; onDeleted: () => void }) {
  const remove = useDeleteEntry();
  const isFolder = entry.type === "dir";
  return (
    <ConfirmDialog
      title={`Delete ${isFolder ? "folder" : entry.type === "symlink" ? "link" : "file"} ${entry.name}?`}
      confirmLabel={remove.isPending ? "Deleting…" : "Delete"}
      danger
      busy={remove.isPending}
      onCancel={onClose}
      onConfirm={() =>
        remove.mutate(
          { path: entry.path, recursive: isFolder },
          {
            onSuccess: () => {
              onDeleted();
              onClose();
            },
          },
        )
      }
    >
      {isFolder ? (
        <p>
          This deletes the folder <code>{entry.path}</code> and everything inside it. It cannot be undone.
        </p>
      ) : entry.type === "symlink" ? (
        <p>
          This deletes the link <code>{entry.path}</code>, not what it points to. It cannot be undone.
        </p>
      ) : (
        <p>
          This deletes <code>{entry.path}</code>. It cannot be undone.
        </p>
      )}
      {remove.isError && <ErrorText error={remove.error} />}
    </ConfirmDialog>
  );
}
