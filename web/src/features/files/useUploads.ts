import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { hasDotSegment } from "./paths";
import { invalidateFolders } from "./queries";
import { resultMessage, runUploads, type UploadItem, type UploadProgress } from "./upload";

export interface UploadNotice {
  tone: "success" | "error";
  text: string;
}

export interface OverwriteQuestion {
  item: UploadItem;
  detail: string;
  folder: string;
}

export interface Uploads {
  /** The running upload's progress, or the last one's final state (kept until dismissed). */
  progress: UploadProgress | null;
  running: boolean;
  notice: UploadNotice | null;
  question: OverwriteQuestion | null;
  /**
   * Uploads `items` into `folder` (relative to the stacks folder). With `overwrite` (a folder
   * upload) every file replaces what is there; without, an existing file asks first.
   */
  start: (folder: string, items: UploadItem[], overwrite: boolean) => void;
  answer: (overwrite: boolean) => void;
  cancel: () => void;
  fail: (text: string) => void;
  dismiss: () => void;
}

/** The upload on the Files page: its progress, the overwrite question and the result. */
export function useUploads({ onDotSegment }: { onDotSegment: () => void }): Uploads {
  const queryClient = useQueryClient();
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [running, setRunning] = useState(false);
  const [notice, setNotice] = useState<UploadNotice | null>(null);
  const [question, setQuestion] = useState<OverwriteQuestion | null>(null);
  const controller = useRef<AbortController | null>(null);
  const resolveQuestion = useRef<((overwrite: boolean) => void) | null>(null);
  const dotSegment = useRef(onDotSegment);
  dotSegment.current = onDotSegment;

  // Leaving the page stops what is still being sent.
  useEffect(() => () => controller.current?.abort(), []);

  const start = useCallback(
    (folder: string, items: UploadItem[], overwrite: boolean) => {
      if (controller.current || items.length === 0) return;
      // Uploaded dotfiles would be invisible otherwise.
      if (items.some((item) => hasDotSegment(item.relativePath))) dotSegment.current();
      const abort = new AbortController();
      controller.current = abort;
      setNotice(null);
      setRunning(true);
      void runUploads({
        folder,
        items,
        overwrite,
        signal: abort.signal,
        onProgress: setProgress,
        confirmOverwrite: (item, detail) =>
          new Promise<boolean>((resolve) => {
            resolveQuestion.current = resolve;
            setQuestion({ item, detail, folder });
          }),
      })
        .then((result) => {
          const text = resultMessage(
            result,
            items.map((item) => item.relativePath),
          );
          setNotice({ tone: result.failures.length || result.cancelled ? "error" : "success", text });
        })
        .finally(() => {
          if (controller.current === abort) controller.current = null;
          resolveQuestion.current = null;
          setQuestion(null);
          setRunning(false);
          void invalidateFolders(queryClient);
        });
    },
    [queryClient],
  );

  const answer = useCallback((overwrite: boolean) => {
    const resolve = resolveQuestion.current;
    resolveQuestion.current = null;
    setQuestion(null);
    resolve?.(overwrite);
  }, []);

  const cancel = useCallback(() => {
    controller.current?.abort();
    const resolve = resolveQuestion.current;
    resolveQuestion.current = null;
    setQuestion(null);
    resolve?.(false);
  }, []);

  const fail = useCallback((text: string) => {
    setProgress(null);
    setNotice({ tone: "error", text });
  }, []);

  const dismiss = useCallback(() => {
    setProgress(null);
    setNotice(null);
  }, []);

  return { progress, running, notice, question, start, answer, cancel, fail, dismiss };
}
