import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api/errors";
import { fetchDownload, saveBlob, type DownloadProgress } from "./download";

export interface DownloadEntry {
  id: number;
  /** What is shown: the file's name, or `<folder>.zip`; the server's filename once known. */
  name: string;
  status: "preparing" | "receiving" | "done" | "error";
  received: number;
  /** Content-Length; null for a folder's zip stream. */
  total: number | null;
  error: string | null;
}

/** How often a running download's byte count is redrawn. */
const REDRAW_MS = 100;

/** Downloads started on the Files page, with their byte counts. */
export function useDownloads() {
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

  /** Fetches `path` (a file, or a folder as a zip) and hands it to the browser as a download. */
  const start = useCallback(
    (path: string, name: string) => {
      const id = nextId.current++;
      const controller = new AbortController();
      controllers.current.set(id, controller);
      setDownloads((list) => [
        ...list.filter((entry) => entry.status === "preparing" || entry.status === "receiving"),
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
      fetchDownload(path, name, onProgress, controller.signal)
        .then(({ blob, filename }) => {
          saveBlob(blob, filename);
          update(id, { status: "done", name: filename, received: blob.size });
        })
        .catch((err: unknown) => {
          if (controller.signal.aborted) return;
          update(id, { status: "error", error: errorMessage(err) });
        })
        .finally(() => controllers.current.delete(id));
    },
    [update],
  );

  const cancel = useCallback((id: number) => {
    controllers.current.get(id)?.abort();
    controllers.current.delete(id);
    setDownloads((list) => list.filter((entry) => entry.id !== id));
  }, []);

  const dismiss = useCallback((id: number) => {
    setDownloads((list) => list.filter((entry) => entry.id !== id));
  }, []);

  return { downloads, start, cancel, dismiss };
}
