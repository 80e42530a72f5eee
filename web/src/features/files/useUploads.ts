import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api/errors";
import { hasDotSegment } from "./paths";
import { useHost } from "../hosts/host";
import { invalidateFolders } from "./queries";
import { existingTargets, resultMessage, runUploads, type UploadItem, type UploadProgress } from "./upload";

export interface UploadNotice {
  tone: "success" | "error";
  text: string;
}

/** One file's "Already exists" answer (a single-file upload): overwrite it? */
export interface OverwriteQuestion {
  item: UploadItem;
  detail: string;
  folder: string;
}

/** Before a folder upload: these files exist and would be replaced. Go on? */
export interface ReplaceQuestion {
  folder: string;
  /** Relative to `folder`. */
  existing: string[];
  total: number;
}

export interface Uploads {
  /** The running upload's progress, or the last one's final state (kept until dismissed). */
  progress: UploadProgress | null;
  /** From the start (the existence check included) to the end. */
  running: boolean;
  notice: UploadNotice | null;
  question: OverwriteQuestion | null;
  replaceQuestion: ReplaceQuestion | null;
  /**
   * Uploads `items` into `folder` (relative to the stacks folder). With `overwrite` (a folder
   * upload) every file replaces what is there, after one question when some exist; without,
   * an existing file asks first.
   */
  start: (folder: string, items: UploadItem[], overwrite: boolean) => void;
  answer: (overwrite: boolean) => void;
  answerReplace: (replace: boolean) => void;
  cancel: () => void;
  fail: (text: string) => void;
  dismiss: () => void;
}

function files(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

/**
 * The upload on the Files page: its progress, the questions and the result. `onUploaded`
 * gets the paths (relative to the stacks folder) of the files written.
 */
export function useUploads({
  onDotSegment,
  onUploaded,
}: {
  onDotSegment: () => void;
  onUploaded?: (paths: string[]) => void;
}): Uploads {
  const queryClient = useQueryClient();
  const host = useHost();
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [running, setRunning] = useState(false);
  const [notice, setNotice] = useState<UploadNotice | null>(null);
  const [question, setQuestion] = useState<OverwriteQuestion | null>(null);
  const [replaceQuestion, setReplaceQuestion] = useState<ReplaceQuestion | null>(null);
  const controller = useRef<AbortController | null>(null);
  const resolveQuestion = useRef<((overwrite: boolean) => void) | null>(null);
  const resolveReplace = useRef<((replace: boolean) => void) | null>(null);
  // The latest callbacks, for uploads started before a render changed them.
  const callbacks = useRef({ onDotSegment, onUploaded });
  useEffect(() => {
    callbacks.current = { onDotSegment, onUploaded };
  });

  // Leaving the page stops what is still being sent.
  useEffect(() => () => controller.current?.abort(), []);

  /** Asks once when files would be replaced; true: go on. */
  const confirmReplacing = useCallback(async (folder: string, items: UploadItem[], overwrite: boolean) => {
    const existing = await existingTargets(host, folder, items, overwrite);
    if (existing.length === 0) return true;
    return new Promise<boolean>((resolve) => {
      resolveReplace.current = resolve;
      setReplaceQuestion({ folder, existing: existing.map((item) => item.relativePath), total: items.length });
    });
  }, [host]);

  const start = useCallback(
    (folder: string, items: UploadItem[], overwrite: boolean) => {
      if (controller.current || items.length === 0) return;
      const abort = new AbortController();
      controller.current = abort;
      setNotice(null);
      setRunning(true);
      const finish = () => {
        if (controller.current === abort) controller.current = null;
        resolveQuestion.current = null;
        resolveReplace.current = null;
        setQuestion(null);
        setReplaceQuestion(null);
        setRunning(false);
      };
      confirmReplacing(folder, items, overwrite).then(
        (go) => {
          if (!go || abort.signal.aborted) {
            setProgress(null);
            setNotice({ tone: "error", text: `Upload cancelled: nothing was uploaded (${files(items.length)})` });
            finish();
            return;
          }
          // Uploaded dotfiles would be invisible otherwise.
          if (items.some((item) => hasDotSegment(item.relativePath))) callbacks.current.onDotSegment();
          void runUploads({
            host,
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
              if (result.uploadedPaths.length) callbacks.current.onUploaded?.(result.uploadedPaths);
            })
            .finally(() => {
              finish();
              void invalidateFolders(queryClient, host);
            });
        },
        (err: unknown) => {
          setProgress(null);
          setNotice({ tone: "error", text: `Cannot check which files exist: ${errorMessage(err)}` });
          finish();
        },
      );
    },
    [queryClient, host, confirmReplacing],
  );

  const answer = useCallback((overwrite: boolean) => {
    const resolve = resolveQuestion.current;
    resolveQuestion.current = null;
    setQuestion(null);
    resolve?.(overwrite);
  }, []);

  const answerReplace = useCallback((replace: boolean) => {
    const resolve = resolveReplace.current;
    resolveReplace.current = null;
    setReplaceQuestion(null);
    resolve?.(replace);
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

  return {
    progress,
    running,
    notice,
    question,
    replaceQuestion,
    start,
    answer,
    answerReplace,
    cancel,
    fail,
    dismiss,
  };
}
