import "@testing-library/jest-dom/vitest";
import { cleanup, configure } from "@testing-library/react";
import { afterEach, beforeEach, vi } from "vitest";
import { installFakeEventSource } from "./fakeEventSource";

// findBy*/waitFor give up after 1 s by default; on a machine busy with pytest beside
// Vitest (scripts/test.sh) a render can take longer than that without being wrong.
configure({ asyncUtilTimeout: 15_000 });

// jsdom has no EventSource: every test gets the fake (pages open log and run streams).
beforeEach(() => {
  installFakeEventSource();
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
  // Drop every cookie a test set.
  for (const part of document.cookie.split(";")) {
    const name = part.split("=")[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
});

// jsdom does no layout and has no Range geometry; CodeMirror measures text ranges.
if (typeof Range !== "undefined" && !("getClientRects" in Range.prototype)) {
  const noRects = Object.assign([], { item: () => null }) as unknown as DOMRectList;
  Object.assign(Range.prototype, {
    getClientRects: () => noRects,
    getBoundingClientRect: () => new DOMRect(0, 0, 0, 0),
  });
}

afterEach(() => {
  sessionStorage.clear();
});

// jsdom draws nothing and says so on every canvas it is asked for: charts see no canvas
// (`getContext` gives null, as a browser without one would) and show their figures in words.
HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;
