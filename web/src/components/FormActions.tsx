import type { ReactNode } from "react";

/** The buttons under a form: submit (its label while the work runs, disabled then),
 * any further buttons, and Cancel. */
export function FormActions({
  label,
  busyLabel,
  busy,
  disabled = false,
  danger = false,
  inDialog = false,
  onCancel,
  children,
}: {
  label: string;
  /** Shown instead of `label` while `busy`; `label` stays when not given. */
  busyLabel?: string;
  busy: boolean;
  disabled?: boolean;
  danger?: boolean;
  inDialog?: boolean;
  onCancel: () => void;
  children?: ReactNode;
}) {
  return (
    <div className={inDialog ? "actions dialog-actions" : "actions"}>
      <button type="submit" className={danger ? "danger" : "primary"} disabled={busy || disabled}>
        {busy && busyLabel ? busyLabel : label}
      </button>
      {children}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
