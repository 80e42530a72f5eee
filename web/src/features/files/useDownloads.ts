import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api/errors";
import { useHost } from "../hosts/host";
import {
  isPickerCancelled,
  linkDownload,
  saveFilePicker,
  streamToFile,
  type DownloadProgress,
} from "./download";

export interface DownloadEntry {
  id: number;
  /** What is shown: the file's name, or `<folder>.zip`; the server's filename once known. */
  name: string;
  /**
   * "preparing" until the first bytes, "receiving" while they stream into the picked file;
   * "browser" once a plain link handed the download to the browser (which shows its own
   * progress); "done" and "error" at the end.
   */
  status: "preparing" | "receiving" | "browser" | "done" | "error";
  received: number;
  /** Content-Length; null for a folder's zip stream. */
  total: number | null;
  error: string | null;
}

/** How often a running download's byte count is redrawn. */
const REDRAW_MS = 100;

export function isRunning(entry: DownloadEntry): boolean {
  return entry.status === "preparing" || entry.status === "receiving";
}

/** Downloads started on the Files page (from its host), with their byte counts. */
export function useDownloads() {
  const host = useHost();
  const [downloads, setDownloads] = useState<DownloadEntry[]>([]);
  const nextId = useRef(1);
  const controllers = useRef(new Map<number, AbortController>());

  useEffect(() => {
    const running = controllers.current;
    return () => {
      for (const controller of running.values()) controller.abort();
    };
  }, []);

  const update = useCallback((id: number, change: Partial<DownloadEntry>) => {
    setDownloads((list) => list.map((entry) => (entry.id === id ? { ...entry, ...change } : entry)));
  }, []);

  const remove = useCallback((id: number) => {
    setDownloads((list) => list.filter((entry) => entry.id !== id));
  }, []);

  /**
   * Downloads `path` (a file, or a folder as a zip). Must be called from the click that
   * asked for it: the save picker needs the user's gesture.
   */
  const start = useCallback(
    (path: string, name: string) => {
      const id = nextId.current++;
      const controller = new AbortController();
      controllers.current.set(id, controller);
      setDownloads((list) => [
        ...list.filter(isRunning),
        { id, name, status: "preparing", received: 0, total: null, error: null },
      ]);
      let lastDraw = 0;
      const onProgress = ({ received, total }: DownloadProgress) => {
        const now = Date.now();
        // The first bytes and then a few redraws a second, not one per chunk.
        if (received > 0 && lastDraw !== 0 && now - lastDraw < REDRAW_MS) return;
        if (received > 0) lastDraw = now;
        update(id, { status: received > 0 ? "receiving" : "preparing", received, total });
      };
      const fail = (err: unknown) => {
        if (controller.signal.aborted) return;
        update(id, { status: "error", error: errorMessage(err) });
      };
      const finish = () => controllers.current.delete(id);

      const picker = saveFilePicker();
      if (!picker) {
        linkDownload(host, path, name, controller.signal)
          .then((filename) => update(id, { status: "browser", name: filename }))
          .catch(fail)
          .finally(finish);
        return;
      }
      // Asked before anything else, while the click still counts as the user's gesture.
      picker({ suggestedName: name })
        .then((handle) =>
          streamToFile(host, path, handle, onProgress, controller.signal).then(({ received, filename }) =>
            update(id, { status: "done", name: filename ?? name, received }),
          ),
        )
        .catch((err: unknown) => {
          if (isPickerCancelled(err) && !controller.signal.aborted) remove(id);
          else fail(err);
        })
        .finally(finish);
    },
    [host, update, remove],
  );

  const cancel = useCallback(
    (id: number) => {
      controllers.current.get(id)?.abort();
      controllers.current.delete(id);
      remove(id);
    },
    [remove],
  );

  return { downloads, start, cancel, dismiss: remove };
}
