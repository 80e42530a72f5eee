import { useRef, useState, type DragEvent } from "react";
import { errorMessage } from "../../api/errors";
import { droppedFiles } from "./drop";
import type { Uploads } from "./useUploads";

const hasFiles = (event: DragEvent) => Array.from(event.dataTransfer?.types ?? []).includes("Files");

/**
 * Files and folders dropped on the listing upload into `folder`: plain files ask before
 * overwriting, a dropped folder's files replace (after one question), as a folder upload.
 */
export function useDropUpload(folder: string, uploads: Uploads) {
  const [dragging, setDragging] = useState(false);
  const depth = useRef(0);

  const handlers = {
    onDragEnter(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth.current += 1;
      setDragging(true);
    },
    onDragOver(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = uploads.running ? "none" : "copy";
    },
    onDragLeave(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      depth.current = Math.max(0, depth.current - 1);
      if (depth.current === 0) setDragging(false);
    },
    onDrop(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth.current = 0;
      setDragging(false);
      if (uploads.running) {
        uploads.fail("An upload is already running; drop again when it is done.");
        return;
      }
      const target = folder;
      droppedFiles(event.dataTransfer).then(
        ({ items, folders }) => {
          if (items.length === 0) uploads.fail(folders ? "The dropped folder is empty: there is nothing to upload." : "Nothing to upload.");
          else uploads.start(target, items, false);
        },
        (err: unknown) => uploads.fail(`Cannot read the dropped files: ${errorMessage(err)}`),
      );
    },
  };

  return { dragging, handlers };
}
