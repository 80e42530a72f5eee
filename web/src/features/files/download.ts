import { pageOrigin } from "../../api/client";
import { apiErrorFrom, unreachableError } from "../../api/errors";

export interface DownloadProgress {
  /** Bytes received so far; 0 while the server prepares (a zip is built while it is sent). */
  received: number;
  /** From Content-Length; null for a folder's zip stream, which has none. */
  total: number | null;
}

export interface Downloaded {
  blob: Blob;
  filename: string;
}

/** The filename of a Content-Disposition header (`filename*=UTF-8''…` preferred), or null. */
function filenameFromDisposition(header: string | null): string | null {
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

function downloadUrl(path: string): string {
  return `${pageOrigin()}/api/files/download?${new URLSearchParams({ path }).toString()}`;
}

async function errorBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Fetches a file, or a folder as a zip, reading the body as it streams in so the caller can
 * show the bytes received. Rejects with an ApiError carrying the server's detail.
 */
export async function fetchDownload(
  path: string,
  fallbackName: string,
  onProgress: (progress: DownloadProgress) => void,
  signal?: AbortSignal,
): Promise<Downloaded> {
  let response: Response;
  try {
    response = await fetch(downloadUrl(path), { credentials: "same-origin", signal });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw unreachableError(err);
  }
  if (!response.ok) throw apiErrorFrom(await errorBody(response), response);

  const filename = filenameFromDisposition(response.headers.get("Content-Disposition")) ?? fallbackName;
  const length = Number(response.headers.get("Content-Length"));
  const total = response.headers.has("Content-Length") && Number.isFinite(length) ? length : null;
  const type = response.headers.get("Content-Type") ?? "application/octet-stream";
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let received = 0;
  onProgress({ received, total });
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.byteLength;
      onProgress({ received, total });
    }
  } else {
    const buffer = new Uint8Array(await response.arrayBuffer());
    chunks.push(buffer);
    received = buffer.byteLength;
    onProgress({ received, total });
  }
  return { blob: new Blob(chunks, { type }), filename };
}

/** Hands a blob to the browser as a download named `filename`. */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.style.display = "none";
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has taken the blob once the click is handled.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}
