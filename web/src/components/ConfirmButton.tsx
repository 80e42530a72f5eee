import { useState, type ReactNode } from "react";

/**
 * A destructive action in two steps: the first click asks, "Confirm" does it.
 * `label` is the accessible name of the first button (e.g. "Delete token ci").
 */
export function ConfirmButton({
  label,
  children,
  onConfirm,
  disabled,
}: {
  label: string;
  children: ReactNode;
  onConfirm: () => void;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger" aria-label={label} disabled={disabled} onClick={() => setAsking(true)}>
        {children}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={label}>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Confirm
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
