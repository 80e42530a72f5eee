import { pageOrigin } from "../../api/client";
import { apiErrorFrom, unreachableError } from "../../api/errors";
import { hostPath, type HostId } from "../../api/hosts";

/**
 * Downloads never collect the body in memory: where the browser can write to a file the
 * user picked (`showSaveFilePicker`: Chromium on localhost or HTTPS) the response streams
 * into it with a running byte count; elsewhere a plain link hands the download to the
 * browser, which streams it to disk itself (and shows its own progress).
 */

export interface DownloadProgress {
  /** Bytes written so far; 0 while the server prepares (a zip is built while it is sent). */
  received: number;
  /** From Content-Length; null for a folder's zip stream, which has none. */
  total: number | null;
}

/** What the File System Access API gives for a picked file (the part used here). */
export interface WritableFileHandle {
  createWritable(): Promise<WritableStream<Uint8Array>>;
}

type SaveFilePicker = (options?: { suggestedName?: string }) => Promise<WritableFileHandle>;

/** The browser's save picker, where there is one. */
export function saveFilePicker(): SaveFilePicker | null {
  const picker = (globalThis as { showSaveFilePicker?: SaveFilePicker }).showSaveFilePicker;
  return typeof picker === "function" ? picker.bind(globalThis) : null;
}

/** The user closed the save picker without choosing a file. */
export function isPickerCancelled(err: unknown): boolean {
  return err instanceof DOMException && err.name === "AbortError";
}

/** The filename of a Content-Disposition header (`filename*=UTF-8''…` preferred), or null. */
export function filenameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (extended?.[2]) {
    try {
      return decodeURIComponent(extended[2].trim().replace(/^"|"$/g, ""));
    } catch {
      // fall through to the plain form
    }
  }
  const quoted = /filename\s*=\s*"((?:\\.|[^"\\])*)"/i.exec(header);
  if (quoted?.[1] !== undefined) return quoted[1].replace(/\\(.)/g, "$1");
  const bare = /filename\s*=\s*([^;]+)/i.exec(header);
  return bare?.[1]?.trim() || null;
}

/** The download of `path` on `host` (an agent's through the central's proxy). */
export function downloadUrl(host: HostId, path: string): string {
  return `${pageOrigin()}${hostPath("/api/files/download", host)}?${new URLSearchParams({ path }).toString()}`;
}

async function errorBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** GET the download; rejects with an ApiError carrying the server's detail when refused. */
async function request(host: HostId, path: string, signal?: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(downloadUrl(host, path), { credentials: "same-origin", signal });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw unreachableError(err);
  }
  if (!response.ok) throw apiErrorFrom(await errorBody(response), response);
  return response;
}

function contentLength(response: Response): number | null {
  if (!response.headers.has("Content-Length")) return null;
  const length = Number(response.headers.get("Content-Length"));
  return Number.isFinite(length) ? length : null;
}

/**
 * Streams `path` (a file, or a folder as a zip) into `handle` (a file the user picked),
 * counting the bytes as they are written. Nothing is kept in memory beyond the chunk in
 * flight. On failure or cancel the partly written file is discarded (the writable is
 * aborted). Resolves with the bytes written and the server's filename.
 */
export async function streamToFile(
  host: HostId,
  path: string,
  handle: WritableFileHandle,
  onProgress: (progress: DownloadProgress) => void,
  signal?: AbortSignal,
): Promise<{ received: number; filename: string | null }> {
  const writable = await handle.createWritable();
  let response: Response;
  try {
    response = await request(host, path, signal);
  } catch (err) {
    await writable.abort(err).catch(() => undefined);
    throw err;
  }
  const filename = filenameFromDisposition(response.headers.get("Content-Disposition"));
  const total = contentLength(response);
  let received = 0;
  onProgress({ received, total });
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      received += chunk.byteLength;
      onProgress({ received, total });
      controller.enqueue(chunk);
    },
  });
  if (!response.body) {
    await writable.abort(new Error("empty response")).catch(() => undefined);
    throw new Error("The server sent no body");
  }
  // pipeTo closes the writable at the end (the file is then saved) and aborts it on error.
  await response.body.pipeThrough(counter).pipeTo(writable, { signal });
  return { received, filename };
}

/**
 * Checks that the download is answered (so a refusal shows the server's detail), then
 * hands it to the browser as a plain link download: the browser streams it to disk itself.
 * The check's body is not read: it is cancelled once the headers are in.
 */
export async function linkDownload(host: HostId, path: string, name: string, signal?: AbortSignal): Promise<string> {
  const response = await request(host, path, signal);
  const filename = filenameFromDisposition(response.headers.get("Content-Disposition")) ?? name;
  await response.body?.cancel().catch(() => undefined);
  const link = document.createElement("a");
  link.href = downloadUrl(host, path);
  link.download = filename;
  link.rel = "noopener";
  link.style.display = "none";
  document.body.append(link);
  link.click();
  link.remove();
  return filename;
}
