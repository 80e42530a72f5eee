import { useCallback, useRef, type Ref } from "react";

/** A hidden file input that a toolbar button clicks; emptied after each pick so the same files can be picked again. */
function FilePicker({ ref, testId, onPick }: { ref: Ref<HTMLInputElement>; testId: string; onPick: (files: FileList | null) => void }) {
  return (
    <input
      ref={ref}
      type="file"
      multiple
      hidden
      data-testid={testId}
      onChange={(e) => {
        onPick(e.target.files);
        e.target.value = "";
      }}
    />
  );
}

/**
 * The folder's actions. The buttons wrap onto more lines on a narrow screen (see
 * files.css), so every one stays reachable without scrolling sideways. While the folder
 * cannot be read (`unusable`: its host is offline, say) none of them is offered.
 */
export function FilesToolbar({
  uploading,
  unusable,
  onNew,
  onFilesPicked,
  onFolderPicked,
  onDownloadFolder,
}: {
  uploading: boolean;
  unusable: boolean;
  onNew: (kind: "folder" | "file") => void;
  onFilesPicked: (files: FileList | null) => void;
  onFolderPicked: (files: FileList | null) => void;
  onDownloadFolder: () => void;
}) {
  const filesInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement | null>(null);
  // React has no prop for the folder picker's attribute.
  const setFolderInput = useCallback((el: HTMLInputElement | null) => {
    folderInput.current = el;
    el?.setAttribute("webkitdirectory", "");
    el?.setAttribute("directory", "");
  }, []);

  return (
    <div className="files-toolbar" role="toolbar" aria-label="Folder actions">
      <button type="button" disabled={unusable} onClick={() => onNew("folder")}>
        New folder
      </button>
      <button type="button" disabled={unusable} onClick={() => onNew("file")}>
        New file
      </button>
      <button type="button" disabled={uploading || unusable} onClick={() => filesInput.current?.click()}>
        Upload files
      </button>
      <button type="button" disabled={uploading || unusable} onClick={() => folderInput.current?.click()}>
        Upload folder
      </button>
      <button type="button" disabled={unusable} onClick={onDownloadFolder}>
        Download folder
      </button>
      <FilePicker ref={filesInput} testId="upload-files-input" onPick={onFilesPicked} />
      <FilePicker ref={setFolderInput} testId="upload-folder-input" onPick={onFolderPicked} />
    </div>
  );
}
