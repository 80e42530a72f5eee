import { formatBytes } from "../../components/format";
import { ConfirmDialog } from "../../components/Dialog";
import { ProgressBar } from "../../components/ProgressBar";
import { baseName } from "./paths";
import type { UploadProgress } from "./upload";
import type { DownloadEntry } from "./useDownloads";
import type { Uploads } from "./useUploads";

function uploadPercent(progress: UploadProgress): number {
  if (progress.bytesTotal > 0) return (progress.bytesSent / progress.bytesTotal) * 100;
  return progress.filesTotal > 0 ? (progress.filesDone / progress.filesTotal) * 100 : 0;
}

/** "1.2 MB of 4.0 MB" for one file; "3 of 10 files · 1.2 MB of 4.0 MB" for several. */
function uploadDetail(progress: UploadProgress): string {
  const bytes = `${formatBytes(progress.bytesSent)} of ${formatBytes(progress.bytesTotal)}`;
  if (progress.mode === "single") return bytes;
  return `${progress.filesDone} of ${progress.filesTotal} files · ${bytes}`;
}

/** The upload (one byte-weighted bar and its detail line), the overwrite question and the result. */
export function UploadStatus({ uploads, folderLabel }: { uploads: Uploads; folderLabel: (path: string) => string }) {
  const { progress, running, notice, question } = uploads;
  const failed = notice?.tone === "error";
  return (
    <>
      {(progress || notice) && (
        <section className="card transfer" aria-label="Upload">
          {progress && (
            <>
              <div className="transfer-head">
                <span className="transfer-name">
                  {running ? "Uploading" : "Last upload:"} <code>{progress.current}</code>
                </span>
                {running && (
                  <button type="button" onClick={uploads.cancel}>
                    Cancel upload
                  </button>
                )}
              </div>
              <ProgressBar
                label="Upload progress"
                percent={uploadPercent(progress)}
                tone={running ? "normal" : failed ? "bad" : "good"}
                valueText={uploadDetail(progress)}
              />
              <p className="transfer-detail" data-testid="upload-detail">
                {uploadDetail(progress)}
              </p>
            </>
          )}
          {notice && (
            <div className={`transfer-result ${failed ? "error" : "success"}`}>
              <span role={failed ? "alert" : "status"}>{notice.text}</span>
              {!running && (
                <button type="button" className="link-button" onClick={uploads.dismiss}>
                  Dismiss
                </button>
              )}
            </div>
          )}
        </section>
      )}
      {question && (
        <ConfirmDialog
          title={`${baseName(question.item.relativePath)} already exists`}
          confirmLabel="Overwrite"
          onConfirm={() => uploads.answer(true)}
          onCancel={() => uploads.answer(false)}
        >
          <p>
            <code>{question.item.relativePath}</code> already exists in {folderLabel(question.folder)}. Overwrite it
            with the file you are uploading?
          </p>
          <p className="muted small">{question.detail}</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function downloadText(entry: DownloadEntry): string {
  switch (entry.status) {
    case "preparing":
      return `Preparing ${entry.name}`;
    case "receiving":
      return `${entry.name}: ${formatBytes(entry.received)} downloaded`;
    case "done":
      return `${entry.name}: ${formatBytes(entry.received)} downloaded`;
    case "error":
      return `${entry.name}: ${entry.error ?? "download failed"}`;
  }
}

function downloadPercent(entry: DownloadEntry): number | null {
  if (entry.status === "done") return 100;
  if (entry.total && entry.total > 0) return (entry.received / entry.total) * 100;
  return null; // a zip stream has no length: no percentage
}

/** Running and finished downloads: "Preparing <name>", then the bytes received so far. */
export function DownloadList({
  downloads,
  onCancel,
  onDismiss,
}: {
  downloads: DownloadEntry[];
  onCancel: (id: number) => void;
  onDismiss: (id: number) => void;
}) {
  if (downloads.length === 0) return null;
  return (
    <section className="card transfer" aria-label="Downloads">
      <ul className="plain transfer-list">
        {downloads.map((entry) => {
          const running = entry.status === "preparing" || entry.status === "receiving";
          return (
            <li key={entry.id} className="transfer-item">
              <div className="transfer-head">
                <span
                  className={entry.status === "error" ? "error" : entry.status === "done" ? "success" : undefined}
                  role={entry.status === "error" ? "alert" : "status"}
                >
                  {downloadText(entry)}
                  {entry.status === "done" ? " · saved" : ""}
                </span>
                {running ? (
                  <button type="button" onClick={() => onCancel(entry.id)}>
                    Cancel download
                  </button>
                ) : (
                  <button type="button" className="link-button" onClick={() => onDismiss(entry.id)}>
                    Dismiss
                  </button>
                )}
              </div>
              {entry.status !== "error" && (
                <ProgressBar
                  label="Download progress"
                  percent={downloadPercent(entry)}
                  tone={entry.status === "done" ? "good" : "normal"}
                  valueText={running ? `${formatBytes(entry.received)} downloaded` : undefined}
                />
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
