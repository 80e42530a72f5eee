import { CSRF_HEADER, csrfToken, pageOrigin } from "./client";
import { ApiError, messageFromErrorBody } from "./errors";

/** An upload the user stopped. */
export class UploadCancelled extends Error {
  constructor() {
    super("Upload cancelled");
    this.name = "UploadCancelled";
  }
}

export interface PutOptions {
  contentType: string;
  /** Bytes of the body sent so far. */
  onProgress?: (sent: number) => void;
  signal?: AbortSignal;
}

function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A same-origin API address with a query. */
export function apiUrl(path: string, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `${pageOrigin()}${path}${search ? `?${search}` : ""}`;
}

/**
 * PUTs a body (a file, streamed by the browser) to an API address with its progress.
 * XMLHttpRequest, not fetch, because only it reports upload progress. Rejects with an
 * ApiError carrying the server's detail, or UploadCancelled when `signal` aborts it.
 */
export function putWithProgress<T>(url: string, body: Blob, options: PutOptions): Promise<T> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new UploadCancelled());
      return;
    }
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.withCredentials = true;
    xhr.responseType = "text";
    xhr.setRequestHeader("Content-Type", options.contentType);
    const token = csrfToken();
    if (token) xhr.setRequestHeader(CSRF_HEADER, token);

    const onAbort = () => xhr.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => options.signal?.removeEventListener("abort", onAbort);

    xhr.upload.onprogress = (event) => options.onProgress?.(Math.min(event.loaded, body.size));
    xhr.onload = () => {
      done();
      const parsed = parseBody(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) {
        options.onProgress?.(body.size);
        resolve(parsed as T);
        return;
      }
      reject(new ApiError(messageFromErrorBody(parsed, xhr), xhr.status, parsed));
    };
    xhr.onerror = () => {
      done();
      reject(new Error("Cannot reach the Stackyard server (the upload was interrupted)"));
    };
    xhr.onabort = () => {
      done();
      reject(new UploadCancelled());
    };
    xhr.send(body);
  });
}
