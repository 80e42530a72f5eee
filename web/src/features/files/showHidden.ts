import { useCallback, useState } from "react";

/**
 * Where the Files page keeps its "Show hidden" toggle. The issue names the first key, the
 * specification the second: both are written, the first is read first.
 */
export const SHOW_HIDDEN_KEY = "stackyard.files.showHidden";
export const SHOW_HIDDEN_LEGACY_KEY = "svc.files.showHidden";

function storage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // storage disabled by the browser
  }
}

function parse(value: string | null | undefined): boolean | null {
  if (value === "true") return true;
  if (value === "false") return false;
  return null;
}

/** The saved toggle; false when none was saved (or storage is unavailable). */
export function readShowHidden(): boolean {
  const store = storage();
  if (!store) return false;
  try {
    return parse(store.getItem(SHOW_HIDDEN_KEY)) ?? parse(store.getItem(SHOW_HIDDEN_LEGACY_KEY)) ?? false;
  } catch {
    return false;
  }
}

/** Saves the toggle as "true"/"false" under both keys. */
export function writeShowHidden(value: boolean): void {
  const store = storage();
  if (!store) return;
  const text = value ? "true" : "false";
  try {
    store.setItem(SHOW_HIDDEN_KEY, text);
    store.setItem(SHOW_HIDDEN_LEGACY_KEY, text);
  } catch {
    // Quota or privacy mode: the toggle still works for this page.
  }
}

/** The toggle as React state, read once from storage and saved on every change. */
export function useShowHidden(): [boolean, (value: boolean) => void] {
  const [showHidden, setState] = useState(readShowHidden);
  const setShowHidden = useCallback((value: boolean) => {
    writeShowHidden(value);
    setState(value);
  }, []);
  return [showHidden, setShowHidden];
}
