import { useEffect, useState } from "react";

/** What a failed update left (its helper's outcome), when the old version still answers. */
export interface UpdateFailure {
  message: string;
  output?: string;
}

/** One answer of the service being watched. */
export interface VersionProbe {
  version: string;
  /** The update failed: the service stays on its old version. */
  failure?: UpdateFailure | null;
}

export interface VersionWatchOptions {
  /** The version the update installs. */
  target: string;
  /** Asks the service which version runs; throws while it is away (restarting). */
  read: (signal: AbortSignal) => Promise<VersionProbe>;
  /** While the old version still answers, asks now and then whether the update failed. */
  check?: (signal: AbortSignal) => Promise<UpdateFailure | null>;
  /** Between two reads. */
  intervalMs?: number;
  /** When to give up. */
  timeoutMs?: number;
  /** A read that takes longer is abandoned (a restarting server may hold the connection). */
  readTimeoutMs?: number;
  /** `check` runs every this many reads that answer the old version. */
  checkEvery?: number;
}

export type WatchState =
  /** `seen`: the version the last read answered (null: none yet, or it is away now). */
  | { phase: "waiting"; elapsedMs: number; seen: string | null; away: boolean }
  | { phase: "arrived"; version: string }
  | { phase: "failed"; failure: UpdateFailure }
  /** `seen` as above: what answers when it gives up. */
  | { phase: "timedOut"; elapsedMs: number; seen: string | null };

export const WATCH_INTERVAL_MS = 1_000;
export const WATCH_TIMEOUT_MS = 3 * 60_000;
const READ_TIMEOUT_MS = 5_000;
const CHECK_EVERY = 5;

/** "v1.2.3" and "1.2.3" are the same version. */
export function sameVersion(a: string | null | undefined, b: string | null | undefined): boolean {
  const norm = (v: string | null | undefined) => (v ?? "").trim().replace(/^v/i, "");
  return norm(a) !== "" && norm(a) === norm(b);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}

/** `work`, abandoned after `ms` (its signal aborted) or when `outer` aborts. */
async function bounded<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, outer: AbortSignal): Promise<T> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, ms);
  outer.addEventListener("abort", abort);
  try {
    return await Promise.race([
      work(controller.signal),
      new Promise<never>((_, reject) =>
        controller.signal.addEventListener("abort", () => reject(new Error("No answer in time"))),
      ),
    ]);
  } finally {
    clearTimeout(timer);
    outer.removeEventListener("abort", abort);
  }
}

/**
 * Reads the service's version every `intervalMs` until it answers `target` ("arrived"), its
 * update is known to have failed ("failed"), or `timeoutMs` has passed ("timedOut"). Reads
 * that fail are the service restarting: they are waited through. Each state goes to
 * `onState`; nothing more happens once `signal` aborts.
 */
export async function watchVersion(
  options: VersionWatchOptions,
  onState: (state: WatchState) => void,
  signal: AbortSignal,
): Promise<void> {
  const interval = options.intervalMs ?? WATCH_INTERVAL_MS;
  const timeout = options.timeoutMs ?? WATCH_TIMEOUT_MS;
  const readTimeout = options.readTimeoutMs ?? READ_TIMEOUT_MS;
  const checkEvery = options.checkEvery ?? CHECK_EVERY;
  const started = Date.now();
  let oldAnswers = 0;

  for (;;) {
    if (signal.aborted) return;
    // No answer: away, restarting.
    const probe = await bounded(options.read, readTimeout, signal).catch(() => null);
    if (signal.aborted) return;
    if (probe) {
      if (sameVersion(probe.version, options.target)) {
        onState({ phase: "arrived", version: probe.version });
        return;
      }
      let failure = probe.failure ?? null;
      oldAnswers += 1;
      if (!failure && options.check && oldAnswers % checkEvery === 0) {
        failure = await bounded(options.check, readTimeout, signal).catch(() => null);
        if (signal.aborted) return;
      }
      if (failure) {
        onState({ phase: "failed", failure });
        return;
      }
    }
    const elapsedMs = Date.now() - started;
    const seen = probe ? probe.version : null;
    if (elapsedMs >= timeout) {
      onState({ phase: "timedOut", elapsedMs, seen });
      return;
    }
    onState({ phase: "waiting", elapsedMs, seen, away: probe === null });
    await sleep(interval, signal);
  }
}

/**
 * Watches as `watchVersion` does while `options` is given (a new object starts anew; keep it
 * in state); the latest state, or null when nothing is watched.
 */
export function useVersionWatch(options: VersionWatchOptions | null): WatchState | null {
  const [state, setState] = useState<{ of: VersionWatchOptions; state: WatchState } | null>(null);
  useEffect(() => {
    if (!options) return;
    const controller = new AbortController();
    void watchVersion(options, (next) => setState({ of: options, state: next }), controller.signal);
    return () => controller.abort();
  }, [options]);
  if (!options) return null;
  if (state?.of !== options) return { phase: "waiting", elapsedMs: 0, seen: null, away: false };
  return state.state;
}
