import type { UseMutationResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { ConfirmDialog } from "./Dialog";
import { ErrorText } from "./ErrorText";

/**
 * Asks before deleting something a page lists: `children` say what goes and what stays;
 * the confirmation runs `remove` with `variables` (the thing's id or name), the dialog
 * stays open while it runs and shows why it failed. Cancel (or Escape) forgets a failure,
 * so the next dialog starts clean.
 */
export function ConfirmDelete<TVariables>({
  title,
  confirmLabel,
  remove,
  variables,
  onCancel,
  onDeleted,
  children,
}: {
  title: string;
  confirmLabel: string;
  remove: UseMutationResult<unknown, Error, TVariables>;
  variables: TVariables;
  onCancel: () => void;
  onDeleted: () => void;
  children: ReactNode;
}) {
  return (
    <ConfirmDialog
      title={title}
      confirmLabel={confirmLabel}
      danger
      busy={remove.isPending}
      onCancel={() => {
        remove.reset();
        onCancel();
      }}
      onConfirm={() => remove.mutate(variables, { onSuccess: onDeleted })}
    >
      {children}
      {remove.isError && <ErrorText error={remove.error} />}
    </ConfirmDialog>
  );
}
