import { useEffect, useEffectEvent, useId, useRef, type ReactNode, type RefObject } from "react";

const FOCUSABLE = [
  "a[href]",
  "area[href]",
  "button:not([disabled])",
  "input:not([disabled]):not([type='hidden'])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "iframe",
  "[contenteditable='true']",
  "[tabindex]:not([tabindex='-1'])",
].join(",");

/** The elements of `root` that Tab reaches, in document order. */
export function focusableIn(root: HTMLElement): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
    (el) => !el.hidden && !el.closest("[hidden], [inert]") && el.getAttribute("aria-hidden") !== "true",
  );
}

/** Open dialogs, innermost last: only the innermost one takes keys and focus. */
const openDialogs: HTMLElement[] = [];

/**
 * Keeps the focus inside `ref` while mounted: the first focusable element (or `initial`)
 * gets it at once, Tab and Shift-Tab cycle within, focus that lands outside is brought
 * back, Escape calls `onEscape`; on unmount the focus returns where it was before.
 */
export function useFocusTrap(
  ref: RefObject<HTMLElement | null>,
  onEscape: () => void,
  initial?: RefObject<HTMLElement | null>,
): void {
  const escape = useEffectEvent(onEscape);

  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    openDialogs.push(root);
    const innermost = () => openDialogs[openDialogs.length - 1] === root;
    (initial?.current ?? focusableIn(root)[0] ?? root).focus();

    const onKey = (event: KeyboardEvent) => {
      if (!innermost()) return;
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        escape();
        return;
      }
      if (event.key !== "Tab") return;
      const items = focusableIn(root);
      if (items.length === 0) {
        event.preventDefault();
        root.focus();
        return;
      }
      const first = items[0] as HTMLElement;
      const last = items[items.length - 1] as HTMLElement;
      const active = document.activeElement;
      const inside = active instanceof HTMLElement && root.contains(active);
      if (event.shiftKey && (active === first || !inside)) {
        event.preventDefault();
        last.focus();
      } else if (!event.shiftKey && (active === last || !inside)) {
        event.preventDefault();
        first.focus();
      }
    };
    const onFocusIn = (event: FocusEvent) => {
      if (!innermost()) return;
      if (event.target instanceof Node && !root.contains(event.target)) {
        (focusableIn(root)[0] ?? root).focus();
      }
    };
    document.addEventListener("keydown", onKey, true);
    document.addEventListener("focusin", onFocusIn);
    return () => {
      document.removeEventListener("keydown", onKey, true);
      document.removeEventListener("focusin", onFocusIn);
      const at = openDialogs.lastIndexOf(root);
      if (at !== -1) openDialogs.splice(at, 1);
      if (previous?.isConnected) previous.focus();
    };
    // Set up once per mount: both refs are the caller's, the same objects on every render.
  }, [ref, initial]);
}

/**
 * A modal box over the page with a title: focus stays inside it (Tab/Shift-Tab cycle),
 * Escape calls `onClose`, and the focus goes back where it was when it closes.
 */
export function Dialog({
  title,
  children,
  onClose,
  role = "dialog",
  initialFocus,
  describedBy,
  className,
}: {
  title: ReactNode;
  children: ReactNode;
  onClose: () => void;
  role?: "dialog" | "alertdialog";
  initialFocus?: RefObject<HTMLElement | null>;
  describedBy?: string;
  className?: string;
}) {
  const titleId = useId();
  const ref = useRef<HTMLDivElement>(null);
  useFocusTrap(ref, onClose, initialFocus);
  return (
    <div className="dialog-backdrop">
      <div
        ref={ref}
        className={`dialog card${className ? ` ${className}` : ""}`}
        role={role}
        aria-modal="true"
        aria-labelledby={titleId}
        aria-describedby={describedBy}
        tabIndex={-1}
      >
        <h2 id={titleId}>{title}</h2>
        {children}
      </div>
    </div>
  );
}

/**
 * An in-page confirmation: a modal box over the page (role "alertdialog") with a title, a
 * message and its buttons. Escape cancels; the Cancel button has the focus at first; the
 * focus stays inside until it closes.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  cancelLabel = "Cancel",
  danger = false,
  busy = false,
  onConfirm,
  onCancel,
}: {
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  cancelLabel?: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const bodyId = useId();
  const cancelRef = useRef<HTMLButtonElement>(null);
  return (
    <Dialog
      title={title}
      role="alertdialog"
      onClose={onCancel}
      initialFocus={cancelRef}
      describedBy={children ? bodyId : undefined}
    >
      {children && (
        <div id={bodyId} className="dialog-body">
          {children}
        </div>
      )}
      <div className="actions dialog-actions">
        <button type="button" className={danger ? "danger" : "primary"} disabled={busy} onClick={onConfirm}>
          {confirmLabel}
        </button>
        <button type="button" ref={cancelRef} onClick={onCancel}>
          {cancelLabel}
        </button>
      </div>
    </Dialog>
  );
}
