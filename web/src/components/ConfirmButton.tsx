import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * A destructive action in two steps: the first click asks, "Confirm" does it. While it
 * asks, Cancel has the focus and Escape cancels; the focus then returns to the button.
 * `label` is the accessible name of the first button (e.g. "Delete token ci"); `warning`,
 * shown while it asks, says what the action removes and what it keeps.
 */
export function ConfirmButton({
  label,
  children,
  onConfirm,
  disabled,
  warning,
}: {
  label: string;
  children: ReactNode;
  onConfirm: () => void;
  disabled?: boolean;
  warning?: string;
}) {
  const [asking, setAsking] = useState(false);
  // Set by a click or Escape: the focus moves once the buttons it swapped are drawn (the
  // first button back after Cancel, Cancel after the first click; not after Confirm).
  const moveFocus = useRef(false);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!moveFocus.current) return;
    moveFocus.current = false;
    (asking ? cancelRef : triggerRef).current?.focus();
  }, [asking]);

  function cancel() {
    moveFocus.current = true;
    setAsking(false);
  }

  if (!asking) {
    return (
      <button
        type="button"
        ref={triggerRef}
        className="danger"
        aria-label={label}
        disabled={disabled}
        onClick={() => {
          moveFocus.current = true;
          setAsking(true);
        }}
      >
        {children}
      </button>
    );
  }
  return (
    <span
      className="confirm"
      role="group"
      aria-label={label}
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          event.stopPropagation();
          cancel();
        }
      }}
    >
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
      <button type="button" ref={cancelRef} onClick={cancel}>
        Cancel
      </button>
      {warning && <span className="confirm-warning small">{warning}</span>}
    </span>
  );
}
