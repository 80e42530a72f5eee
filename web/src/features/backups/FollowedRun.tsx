import { useQuery } from "@tanstack/react-query";
import { useEffect, useEffectEvent, useRef, type ReactNode } from "react";
import type { Run } from "../../api/types";
import { DeployConsole } from "../stacks/DeployConsole";
import { useHost } from "../hosts/host";
import { stackRunQueryOptions } from "../stacks/queries";

/**
 * The deploy console of a run this page started (a backup, restore, push or pull: each is
 * a run of its stack; a restore drill too), followed live; `onSucceeded` is called once when
 * that run (not a later one on the same stack) has succeeded, `onEnded` once when it has
 * ended, however it went.
 */
export function FollowedRun({
  run,
  title,
  transfer = false,
  onClose,
  onSucceeded,
  onEnded,
}: {
  run: Run;
  title: ReactNode;
  /** On an agent: a push or pull of its archives, which the central runs. */
  transfer?: boolean;
  onClose: () => void;
  onSucceeded?: (run: Run) => void;
  onEnded?: (run: Run) => void;
}) {
  // The console keeps this query up to date from the run's event stream.
  const host = useHost();
  const current = useQuery(stackRunQueryOptions(host, run.stack, transfer)).data;
  const reported = useRef<string | null>(null);
  const ended = useEffectEvent((done: Run) => {
    if (done.status === "succeeded") onSucceeded?.(done);
    onEnded?.(done);
  });

  useEffect(() => {
    if (current?.id !== run.id || current.status === "running" || reported.current === run.id) return;
    reported.current = run.id;
    ended(current);
  }, [current, run.id]);

  return <DeployConsole stackId={run.stack} title={title} transfer={transfer} onClose={onClose} />;
}
