import { formatBytes } from "../../components/format";
import { ConfirmDialog } from "../../components/Dialog";
import { ProgressBar } from "../../components/ProgressBar";
import { baseName } from "./paths";
import type { UploadProgress } from "./upload";
import { isRunning, type DownloadEntry } from "./useDownloads";
import type { ReplaceQuestion, Uploads } from "./useUploads";

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

/** How many of the listed names a question shows. */
const SHOWN_NAMES = 5;

/** Before a folder upload: "N files exist and will be replaced", asked once. */
function ReplaceDialog({
  question,
  folderLabel,
  onAnswer,
}: {
  question: ReplaceQuestion;
  folderLabel: (path: string) => string;
  onAnswer: (replace: boolean) => void;
}) {
  const { existing, total } = question;
  const count = existing.length === 1 ? "1 file exists" : `${existing.length} files exist`;
  const more = existing.length - SHOWN_NAMES;
  return (
    <ConfirmDialog
      title={`${count} and will be replaced`}
      confirmLabel="Replace and upload"
      danger
      onConfirm={() => onAnswer(true)}
      onCancel={() => onAnswer(false)}
    >
      <p>
        Of the {total === 1 ? "file" : `${total} files`} you are uploading to {folderLabel(question.folder)},{" "}
        {existing.length === 1 ? "this one already exists" : `${existing.length} already exist`}. Uploading replaces{" "}
        {existing.length === 1 ? "it" : "them"}:
      </p>
      <ul className="replace-list">
        {existing.slice(0, SHOWN_NAMES).map((path) => (
          <li key={path}>
            <code>{path}</code>
          </li>
        ))}
        {more > 0 && <li className="muted">and {more} more</li>}
      </ul>
    </ConfirmDialog>
  );
}

/** The upload (one byte-weighted bar and its detail line), the questions and the result. */
export function UploadStatus({ uploads, folderLabel }: { uploads: Uploads; folderLabel: (path: string) => string }) {
  const { progress, running, notice, question, replaceQuestion } = uploads;
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
                tone={running ? undefined : failed ? "bad" : "good"}
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
      {replaceQuestion && (
        <ReplaceDialog question={replaceQuestion} folderLabel={folderLabel} onAnswer={uploads.answerReplace} />
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
      return `${entry.name}: ${formatBytes(entry.received)} downloaded · saved`;
    case "browser":
      return `${entry.name}: handed to the browser, which saves it to disk as it arrives (see its downloads for the progress)`;
    case "error":
      return `${entry.name}: ${entry.error ?? "download failed"}`;
  }
}

function downloadPercent(entry: DownloadEntry): number | null {
  if (entry.status === "done") return 100;
  if (entry.total && entry.total > 0) return (entry.received / entry.total) * 100;
  return null; // a zip stream has no length: no percentage
}

/**
 * Running and finished downloads: "Preparing <name>", then the bytes written so far; or, where
 * the browser cannot write to a picked file, that the browser's own download took over.
 */
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
          const running = isRunning(entry);
          return (
            <li key={entry.id} className="transfer-item">
              <div className="transfer-head">
                <span
                  className={entry.status === "error" ? "error" : entry.status === "done" ? "success" : undefined}
                  role={entry.status === "error" ? "alert" : "status"}
                >
                  {downloadText(entry)}
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
              {(running || entry.status === "done") && (
                <ProgressBar
                  label="Download progress"
                  percent={downloadPercent(entry)}
                  tone={entry.status === "done" ? "good" : undefined}
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
