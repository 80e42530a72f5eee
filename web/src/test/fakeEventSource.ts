import { act } from "@testing-library/react";
import { vi } from "vitest";

/** The query cache notifies its observers on a zero timeout. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

type Listener = (event: MessageEvent<string>) => void;

/** A stand-in for the browser's EventSource: tests push events into it; no network. */
export class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  /** Every source created since `installFakeEventSource()`, oldest first. */
  static instances: FakeEventSource[] = [];

  /** The address as its route sees it: without the `stream` name `openNamedStream` adds. */
  readonly url: string;
  /** The name the page gave the stream (`?stream=`), to ask the server to end it. */
  readonly name: string | null;
  readonly withCredentials: boolean;
  readyState: number = FakeEventSource.CONNECTING;
  onopen: ((event: Event) => void) | null = null;
  onmessage: Listener | null = null;
  onerror: ((event: Event) => void) | null = null;
  private listeners = new Map<string, Set<Listener>>();

  constructor(url: string | URL, init?: { withCredentials?: boolean }) {
    const [address, named] = String(url).split(/[?&]stream=/);
    this.url = address ?? "";
    this.name = named ?? null;
    this.withCredentials = Boolean(init?.withCredentials);
    FakeEventSource.instances.push(this);
  }

  addEventListener(type: string, listener: Listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)?.add(listener);
  }

  removeEventListener(type: string, listener: Listener) {
    this.listeners.get(type)?.delete(listener);
  }

  close() {
    this.readyState = FakeEventSource.CLOSED;
  }

  get closed(): boolean {
    return this.readyState === FakeEventSource.CLOSED;
  }

  /**
   * Delivers a named event (`data` is JSON-encoded unless it is a string), as the server
   * would, then lets React and the query cache settle.
   */
  async emit(type: string, data: unknown = "") {
    if (this.closed) throw new Error(`event "${type}" sent to a closed EventSource (${this.url})`);
    this.readyState = FakeEventSource.OPEN;
    const event = new MessageEvent<string>(type, { data: typeof data === "string" ? data : JSON.stringify(data) });
    await act(async () => {
      if (type === "message") this.onmessage?.(event);
      for (const listener of this.listeners.get(type) ?? []) listener(event);
      await settle();
    });
  }

  /**
   * The server ended its answer (as after a run's `end`, or when the page asked it to end
   * the stream): the browser would connect again, so an error comes, its state CONNECTING.
   */
  async complete() {
    await this.fail(false);
  }

  /** A failed connection: `closed` = the server refused it (the browser gives up). */
  async fail(closed = false) {
    this.readyState = closed ? FakeEventSource.CLOSED : FakeEventSource.CONNECTING;
    const event = new MessageEvent<string>("error");
    await act(async () => {
      this.onerror?.(event);
      for (const listener of this.listeners.get("error") ?? []) listener(event);
      await settle();
    });
  }
}

/** Installs FakeEventSource as the global EventSource for the current test. */
export function installFakeEventSource(): typeof FakeEventSource {
  FakeEventSource.instances = [];
  vi.stubGlobal("EventSource", FakeEventSource);
  return FakeEventSource;
}

/** The newest source still open whose URL holds `match` (a run's events by default). */
export function openSource(match = "/run/events"): FakeEventSource | undefined {
  return FakeEventSource.instances.filter((s) => !s.closed && s.url.includes(match)).at(-1);
}

/** Every source created whose URL holds `match`. */
export function sourcesOf(match: string): FakeEventSource[] {
  return FakeEventSource.instances.filter((s) => s.url.includes(match));
}
