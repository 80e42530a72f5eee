import { act } from "@testing-library/react";
import { vi } from "vitest";

/** Lets promises, React and the query cache settle. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

type ProgressHandler = ((event: ProgressEvent) => void) | null;

/**
 * A stand-in for XMLHttpRequest (uploads): it records each request, and the test answers it
 * with `progress()` and `respond()`; nothing reaches the network.
 */
export class FakeXMLHttpRequest {
  static readonly UNSENT = 0;
  static readonly OPENED = 1;
  static readonly DONE = 4;
  /** Every request created since `installFakeXhr()`, oldest first. */
  static instances: FakeXMLHttpRequest[] = [];

  method = "";
  url = "";
  readonly requestHeaders: Record<string, string> = {};
  body: unknown = null;
  withCredentials = false;
  responseType = "";
  readyState = FakeXMLHttpRequest.UNSENT;
  status = 0;
  statusText = "";
  responseText = "";
  sent = false;
  aborted = false;
  readonly upload: { onprogress: ProgressHandler } = { onprogress: null };
  onload: ((event: ProgressEvent) => void) | null = null;
  onerror: ((event: ProgressEvent) => void) | null = null;
  onabort: ((event: ProgressEvent) => void) | null = null;
  private responseHeaders: Record<string, string> = {};

  constructor() {
    FakeXMLHttpRequest.instances.push(this);
  }

  open(method: string, url: string) {
    this.method = method;
    this.url = url;
    this.readyState = FakeXMLHttpRequest.OPENED;
  }

  setRequestHeader(name: string, value: string) {
    this.requestHeaders[name] = value;
  }

  getResponseHeader(name: string): string | null {
    return this.responseHeaders[name.toLowerCase()] ?? null;
  }

  send(body: unknown) {
    this.body = body;
    this.sent = true;
  }

  abort() {
    if (this.readyState === FakeXMLHttpRequest.DONE) return;
    this.aborted = true;
    this.readyState = FakeXMLHttpRequest.DONE;
    this.onabort?.(new ProgressEvent("abort"));
  }

  /** The query of the request's URL. */
  get query(): URLSearchParams {
    return new URL(this.url, "http://localhost").searchParams;
  }

  get pathname(): string {
    return new URL(this.url, "http://localhost").pathname;
  }

  get done(): boolean {
    return this.readyState === FakeXMLHttpRequest.DONE;
  }

  /** Reports `loaded` bytes of the body sent. */
  async progress(loaded: number, total?: number) {
    const size = total ?? (this.body instanceof Blob ? this.body.size : loaded);
    await act(async () => {
      this.upload.onprogress?.(new ProgressEvent("progress", { loaded, total: size, lengthComputable: true }));
      await settle();
    });
  }

  /** Completes the request with `status` and a JSON body. */
  async respond(status: number, body: unknown, headers: Record<string, string> = {}) {
    this.status = status;
    this.responseText = body === undefined ? "" : JSON.stringify(body);
    this.responseHeaders = Object.fromEntries(
      Object.entries({ "content-type": "application/json", ...headers }).map(([k, v]) => [k.toLowerCase(), v]),
    );
    this.readyState = FakeXMLHttpRequest.DONE;
    await act(async () => {
      this.onload?.(new ProgressEvent("load"));
      await settle();
    });
  }

  /** A network failure. */
  async fail() {
    this.readyState = FakeXMLHttpRequest.DONE;
    await act(async () => {
      this.onerror?.(new ProgressEvent("error"));
      await settle();
    });
  }
}

/** Installs FakeXMLHttpRequest as the global XMLHttpRequest for the current test. */
export function installFakeXhr(): typeof FakeXMLHttpRequest {
  FakeXMLHttpRequest.instances = [];
  vi.stubGlobal("XMLHttpRequest", FakeXMLHttpRequest);
  return FakeXMLHttpRequest;
}

/** The newest request that is sent and not answered yet. */
export function pendingXhr(): FakeXMLHttpRequest | undefined {
  return FakeXMLHttpRequest.instances.filter((x) => x.sent && !x.done).at(-1);
}
