import { useEffect, useId } from "react";
import { useBlocker, type BlockerFunction } from "react-router";

const DEFAULT_MESSAGE = "You have unsaved changes. Leave and discard them?";
const DRAFT_PREFIX = "stackyard.draft:";

/** Every mounted editor with unsaved edits, by hook instance: the message to ask with. */
const dirtyEditors = new Map<string, string>();
/** Set by `leaveWithoutAsking`: the next navigation goes through unasked. */
let passNext = false;

function pendingMessage(): string | null {
  for (const message of dirtyEditors.values()) return message;
  return null;
}

/**
 * While `dirty`, asks before the user leaves: an in-app navigation that changes the path or
 * the query (links, back/forward, `navigate()`) waits for a `window.confirm(message)`, and
 * closing or reloading the tab triggers the browser's own "leave site?" prompt.
 *
 * In-app navigation is caught by one `<UnsavedChangesGuard />` that `AppRoutes` mounts
 * (it needs a data router: `createBrowserRouter`/`createMemoryRouter` + `RouterProvider`,
 * which `main.tsx` and the tests' `renderApp` provide). Any number of editors may use the
 * hook at once. After a save, set `dirty` false before navigating away (in a later render),
 * or call `leaveWithoutAsking()` first.
 */
export function useUnsavedChanges(dirty: boolean, message: string = DEFAULT_MESSAGE): void {
  const id = useId();

  useEffect(() => {
    if (!dirty) return;
    dirtyEditors.set(id, message);
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      if (passNext) return;
      event.preventDefault();
      // Older browsers want a returnValue; the text itself is no longer shown by any of them.
      event.returnValue = message;
      return message;
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => {
      dirtyEditors.delete(id);
      window.removeEventListener("beforeunload", onBeforeUnload);
    };
  }, [id, dirty, message]);
}

/** The next navigation (or unload) goes through without asking, e.g. to sign in again
 * after the draft was kept with `saveDraft`. */
export function leaveWithoutAsking(): void {
  passNext = true;
}

/**
 * For leaving that is not a navigation (signing out): asks when an editor has unsaved
 * edits. True: go ahead (the navigation that follows is not asked again); false: stay.
 */
export function confirmLeaving(): boolean {
  const message = pendingMessage();
  if (message === null) return true;
  if (!window.confirm(message)) return false;
  passNext = true;
  return true;
}

/** Asked synchronously, as the router decides (no render in between): true blocks. */
const shouldBlock: BlockerFunction = ({ currentLocation, nextLocation }) => {
  if (passNext) {
    passNext = false;
    return false;
  }
  const leaving = currentLocation.pathname !== nextLocation.pathname || currentLocation.search !== nextLocation.search;
  const message = pendingMessage();
  if (!leaving || message === null) return false;
  return !window.confirm(message);
};

/** The one navigation blocker of the app: asks when an editor has unsaved edits. */
export function UnsavedChangesGuard() {
  const blocker = useBlocker(shouldBlock);
  useEffect(() => {
    // The user said stay: the navigation is dropped.
    if (blocker.state === "blocked") blocker.reset();
  }, [blocker]);
  return null;
}

/** Keeps `text` for this tab (sessionStorage), e.g. before sending the user to sign in again. */
export function saveDraft(key: string, text: string): void {
  try {
    sessionStorage.setItem(DRAFT_PREFIX + key, text);
  } catch {
    // Storage full or disabled: nothing more we can do.
  }
}

/** The draft saved under `key`, left in place; null when there is none. */
export function peekDraft(key: string): string | null {
  try {
    return sessionStorage.getItem(DRAFT_PREFIX + key);
  } catch {
    return null;
  }
}

/** The draft saved under `key`, removed as it is read; null when there is none. */
export function takeDraft(key: string): string | null {
  try {
    const text = sessionStorage.getItem(DRAFT_PREFIX + key);
    if (text !== null) sessionStorage.removeItem(DRAFT_PREFIX + key);
    return text;
  } catch {
    return null;
  }
}
