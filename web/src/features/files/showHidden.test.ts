import { afterEach, describe, expect, it } from "vitest";
import { readShowHidden, SHOW_HIDDEN_KEY, SHOW_HIDDEN_LEGACY_KEY, writeShowHidden } from "./showHidden";

afterEach(() => localStorage.clear());

describe("show hidden setting", () => {
  it("is off when nothing was saved", () => {
    expect(readShowHidden()).toBe(false);
  });

  it("writes true/false to both keys and reads it back", () => {
    writeShowHidden(true);
    expect(localStorage.getItem(SHOW_HIDDEN_KEY)).toBe("true");
    expect(localStorage.getItem(SHOW_HIDDEN_LEGACY_KEY)).toBe("true");
    expect(readShowHidden()).toBe(true);

    writeShowHidden(false);
    expect(localStorage.getItem(SHOW_HIDDEN_KEY)).toBe("false");
    expect(localStorage.getItem(SHOW_HIDDEN_LEGACY_KEY)).toBe("false");
    expect(readShowHidden()).toBe(false);
  });

  it("uses the keys named by the issue and by the specification", () => {
    expect(SHOW_HIDDEN_KEY).toBe("stackyard.files.showHidden");
    expect(SHOW_HIDDEN_LEGACY_KEY).toBe("svc.files.showHidden");
  });

  it("reads the stackyard key first", () => {
    localStorage.setItem(SHOW_HIDDEN_KEY, "false");
    localStorage.setItem(SHOW_HIDDEN_LEGACY_KEY, "true");
    expect(readShowHidden()).toBe(false);
  });

  it("falls back to the svc key", () => {
    localStorage.setItem(SHOW_HIDDEN_LEGACY_KEY, "true");
    expect(readShowHidden()).toBe(true);
    localStorage.setItem(SHOW_HIDDEN_KEY, "garbage");
    expect(readShowHidden()).toBe(true);
  });
});
