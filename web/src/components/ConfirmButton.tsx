import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * A destructive action in two steps: the first click asks, "Confirm" does it. While it
 * asks, Cancel has the focus and Escape cancels; the focus then returns to the button.
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
  // Where the focus goes after the next render: the first button, or Cancel.
  const [focus, setFocus] = useState<"trigger" | "cancel" | null>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (focus === "trigger") triggerRef.current?.focus();
    if (focus === "cancel") cancelRef.current?.focus();
    if (focus) setFocus(null);
  }, [focus]);

  function cancel() {
    setAsking(false);
    setFocus("trigger");
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
          setAsking(true);
          setFocus("cancel");
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
    </span>
  );
}
