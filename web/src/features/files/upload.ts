import { ApiError, unwrap } from "../../api/errors";
import { hostApi, hostPath, type HostId } from "../../api/hosts";
import { apiUrl, putWithProgress, UploadCancelled } from "../../api/upload";
import type { UploadedFile } from "../../api/types";
import { joinPath } from "./paths";

interface SendOptions {
  overwrite: boolean;
  /** Bytes of the body sent so far. */
  onProgress?: (sent: number) => void;
  signal?: AbortSignal;
}

/** PUTs one file's bytes to `path` (relative to `host`'s stacks folder): 409 "Already exists: …"
 * when the target exists and `overwrite` is false. */
function sendFile(host: HostId, path: string, body: Blob, options: SendOptions): Promise<UploadedFile> {
  return putWithProgress<UploadedFile>(
    apiUrl(hostPath("/api/files/upload", host), { path, overwrite: String(options.overwrite) }),
    body,
    { contentType: "application/octet-stream", onProgress: options.onProgress, signal: options.signal },
  );
}

/** The server's answer to an upload over an existing file without `overwrite`. */
function isAlreadyExists(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409 && /^already exists/i.test(err.message);
}

/** One file to upload and where, relative to the target folder (`a/b.txt` for a folder upload). */
export interface UploadItem {
  file: File;
  relativePath: string;
  /** Overrides the plan's `overwrite` for this file (the files of a dropped folder). */
  overwrite?: boolean;
}

export interface UploadProgress {
  /** "single": one file, bytes of its size; "batch": several, byte-weighted with a file count. */
  mode: "single" | "batch";
  /** The file being sent, relative to the target folder. */
  current: string;
  filesDone: number;
  filesTotal: number;
  bytesSent: number;
  bytesTotal: number;
}

export interface UploadFailure {
  path: string;
  message: string;
}

export interface UploadResult {
  total: number;
  uploaded: number;
  /** Where the uploaded files are now, relative to the stacks folder. */
  uploadedPaths: string[];
  /** Existing files the user chose not to overwrite. */
  skipped: number;
  failures: UploadFailure[];
  cancelled: boolean;
}

export interface UploadPlan {
  /** The host whose stacks folder receives them (null: this host). */
  host: HostId;
  /** Where the files go, relative to the stacks folder. */
  folder: string;
  items: UploadItem[];
  /**
   * Folder upload: every file is sent with overwrite=true. Otherwise each is sent without,
   * and an "Already exists" answer asks `confirmOverwrite` before retrying with it.
   */
  overwrite: boolean;
  confirmOverwrite: (item: UploadItem, detail: string) => Promise<boolean>;
  onProgress: (progress: UploadProgress) => void;
  signal?: AbortSignal;
}

/** Sends the files one after another, reporting byte-weighted progress; never throws. */
export async function runUploads(plan: UploadPlan): Promise<UploadResult> {
  const { items } = plan;
  const bytesTotal = items.reduce((sum, item) => sum + item.file.size, 0);
  const mode = items.length === 1 ? "single" : "batch";
  const result: UploadResult = {
    total: items.length,
    uploaded: 0,
    uploadedPaths: [],
    skipped: 0,
    failures: [],
    cancelled: false,
  };
  let bytesDone = 0;
  let filesDone = 0;

  const report = (current: string, sent: number) =>
    plan.onProgress({
      mode,
      current,
      filesDone,
      filesTotal: items.length,
      bytesSent: Math.min(bytesTotal, bytesDone + sent),
      bytesTotal,
    });

  for (const item of items) {
    if (plan.signal?.aborted) {
      result.cancelled = true;
      break;
    }
    const target = joinPath(plan.folder, item.relativePath);
    const onProgress = (sent: number) => report(item.relativePath, sent);
    const overwrite = item.overwrite ?? plan.overwrite;
    report(item.relativePath, 0);
    try {
      try {
        await sendFile(plan.host, target, item.file, { overwrite, onProgress, signal: plan.signal });
        result.uploaded += 1;
        result.uploadedPaths.push(target);
      } catch (err) {
        if (overwrite || !isAlreadyExists(err)) throw err;
        const detail = err instanceof Error ? err.message : String(err);
        if (await plan.confirmOverwrite(item, detail)) {
          report(item.relativePath, 0);
          await sendFile(plan.host, target, item.file, { overwrite: true, onProgress, signal: plan.signal });
          result.uploaded += 1;
          result.uploadedPaths.push(target);
        } else {
          result.skipped += 1;
        }
      }
    } catch (err) {
      if (err instanceof UploadCancelled) result.cancelled = true;
      else result.failures.push({ path: item.relativePath, message: err instanceof Error ? err.message : String(err) });
    }
    if (result.cancelled) break;
    bytesDone += item.file.size;
    filesDone += 1;
    report(item.relativePath, 0);
  }
  return result;
}

/** Paths one existence check sends (the server takes a few thousand). */
const CHECK_BATCH = 1000;

/**
 * The items that `overwrite` would replace: those sent with overwrite whose target exists
 * (asked of the server in batches before a folder upload starts).
 */
export async function existingTargets(
  host: HostId,
  folder: string,
  items: UploadItem[],
  overwrite: boolean,
): Promise<UploadItem[]> {
  const replacing = items.filter((item) => item.overwrite ?? overwrite);
  const found = new Set<string>();
  for (let start = 0; start < replacing.length; start += CHECK_BATCH) {
    const paths = replacing.slice(start, start + CHECK_BATCH).map((item) => joinPath(folder, item.relativePath));
    const answer = await unwrap(hostApi(host).POST("/api/files/exists", { body: { paths } }));
    for (const path of answer.existing) found.add(path);
  }
  return replacing.filter((item) => found.has(joinPath(folder, item.relativePath)));
}

function files(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

/** "Uploaded 10 files", or "Uploaded 9 of 10 files; first failure: a/b.txt: <detail>". */
export function resultMessage(result: UploadResult, names: string[]): string {
  const { total, uploaded, skipped, failures } = result;
  const first = failures[0];
  if (result.cancelled) return `Upload cancelled after ${uploaded} of ${files(total)}`;
  if (total === 1 && uploaded === 1) return `Uploaded ${names[0] ?? "1 file"}`;
  if (total === 1 && skipped === 1) return `${names[0] ?? "The file"} was not overwritten`;
  if (total === 1 && first) return `Upload of ${first.path} failed: ${first.message}`;
  if (first) {
    const also = skipped ? `; ${skipped} not overwritten` : "";
    return `Uploaded ${uploaded} of ${files(total)}${also}; first failure: ${first.path}: ${first.message}`;
  }
  if (skipped) return `Uploaded ${uploaded} of ${files(total)}; ${skipped} not overwritten`;
  return `Uploaded ${files(uploaded)}`;
}
