import { hostApi, hostOfPath } from "./hosts";

/** How long a stream asked to end may take to end before it is cut after all. */
const END_WITHIN_MS = 5_000;

/**
 * 32 random hex digits. (`crypto.randomUUID` is there only in a secure context: a service
 * reached over plain HTTP at a LAN address is none; `getRandomValues` is always there.)
 */
function randomName(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export interface NamedStream {
  source: EventSource;
  /**
   * Ends the stream when its page no longer wants it: the server it comes from is asked
   * to end it, and the source is closed once the answer has completed (or cut after a few
   * seconds, or at once when the server does not know the name: an agent of an earlier
   * version). Chromium reports every stream a page cuts as a failed request
   * (net::ERR_ABORTED); one that completes is no failure. Its own handlers (`on...`) are
   * not called again; a listener added to the source checks for itself.
   */
  end: () => void;
  /** Its last event came (the server ends it next): closed once the answer has completed. */
  done: () => void;
}

/**
 * An EventSource on `url` (a path of this service, an agent's through the central's
 * proxy), named (`?stream=`) so that the host it comes from can be asked to end it.
 */
export function openNamedStream(url: string): NamedStream {
  const name = randomName();
  const source = new EventSource(`${url}${url.includes("?") ? "&" : "?"}stream=${name}`);
  let closing = false;

  /** Closed when the server has ended the answer (the source would connect again), or cut after a while. */
  function closeAtItsEnd(): () => void {
    const cut = window.setTimeout(() => source.close(), END_WITHIN_MS);
    const close = () => {
      window.clearTimeout(cut);
      source.close();
    };
    source.onerror = close;
    return close;
  }

  function done() {
    if (closing || source.readyState === EventSource.CLOSED) return;
    closing = true;
    closeAtItsEnd();
  }

  function end() {
    source.onopen = null;
    source.onmessage = null;
    if (closing || source.readyState === EventSource.CLOSED) return;
    closing = true;
    const close = closeAtItsEnd();
    hostApi(hostOfPath(url))
      .POST("/api/streams/{name}/end", { params: { path: { name } } })
      .then(({ response }) => {
        if (!response.ok) close();
      })
      .catch(close);
  }

  return { source, end, done };
}
