import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sameVersion, watchVersion, type VersionProbe, type WatchState } from "./versionWatch";

describe("sameVersion", () => {
  it.each([
    ["0.2.0", "0.2.0", true],
    ["v0.2.0", "0.2.0", true],
    [" 0.2.0", "V0.2.0", true],
    ["0.2.0", "0.2.1", false],
    ["", "", false],
    [null, "0.2.0", false],
  ])("%j and %j: %s", (a, b, same) => {
    expect(sameVersion(a, b)).toBe(same);
  });
});

describe("watchVersion", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /**
   * Runs a watch whose reads answer from `answers`, one a read: a version, an Error (the
   * service is away) or "hang" (no answer until the read is given up).
   */
  function run(answers: (string | Error)[], options: { timeoutMs?: number; failureAt?: number } = {}) {
    const states: WatchState[] = [];
    let reads = 0;
    const read = vi.fn((signal: AbortSignal): Promise<VersionProbe> => {
      const answer = answers[Math.min(reads, answers.length - 1)];
      reads += 1;
      if (answer === "hang") {
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
      }
      if (answer instanceof Error || answer === undefined) return Promise.reject(answer ?? new Error("no answer"));
      return Promise.resolve({ version: answer });
    });
    const check = vi.fn(() =>
      Promise.resolve(options.failureAt !== undefined && reads >= options.failureAt ? { message: "failed" } : null),
    );
    const controller = new AbortController();
    const done = watchVersion(
      { target: "0.2.0", read, check, intervalMs: 1000, timeoutMs: options.timeoutMs ?? 10_000, readTimeoutMs: 2000, checkEvery: 3 },
      (state) => states.push(state),
      controller.signal,
    );
    return { states, read, check, controller, done };
  }

  it("waits through failed reads and ends when the target answers", async () => {
    const { states, read, done } = run(["0.1.0", new Error("down"), new Error("down"), "v0.2.0"]);
    await vi.advanceTimersByTimeAsync(5000);
    await done;

    expect(read).toHaveBeenCalledTimes(4);
    expect(states.map((s) => s.phase)).toEqual(["waiting", "waiting", "waiting", "arrived"]);
    expect(states[0]).toMatchObject({ seen: "0.1.0", away: false });
    expect(states[1]).toMatchObject({ seen: null, away: true });
    expect(states.at(-1)).toEqual({ phase: "arrived", version: "v0.2.0" });
  });

  it("abandons a read that hangs and carries on", async () => {
    const { states, done } = run(["hang", "0.2.0"]);
    await vi.advanceTimersByTimeAsync(4000);
    await done;

    expect(states.map((s) => s.phase)).toEqual(["waiting", "arrived"]);
    expect(states[0]).toMatchObject({ away: true, elapsedMs: 2000 });
  });

  it("gives up after the timeout, saying what answers then", async () => {
    const { states, read, done } = run(["0.1.0"], { timeoutMs: 5000 });
    await vi.advanceTimersByTimeAsync(10_000);
    await done;

    expect(states.at(-1)).toEqual({ phase: "timedOut", elapsedMs: 5000, seen: "0.1.0" });
    expect(read).toHaveBeenCalledTimes(6);
  });

  it("asks every few old answers whether the update failed, and stops when it did", async () => {
    const { states, check, done } = run(["0.1.0"], { failureAt: 6 });
    await vi.advanceTimersByTimeAsync(10_000);
    await done;

    expect(check).toHaveBeenCalledTimes(2); // after the 3rd and the 6th old answer
    expect(states.at(-1)).toEqual({ phase: "failed", failure: { message: "failed" } });
  });

  it("stops at once when aborted", async () => {
    const { states, read, controller, done } = run(["0.1.0"]);
    await vi.advanceTimersByTimeAsync(1500);
    controller.abort();
    await done;
    const seen = states.length;
    await vi.advanceTimersByTimeAsync(5000);

    expect(read).toHaveBeenCalledTimes(2);
    expect(states).toHaveLength(seen);
  });
});
