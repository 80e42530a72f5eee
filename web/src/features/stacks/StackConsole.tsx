import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { LogsCard, type LogSource } from "../containers/LogsCard";
import { useHost } from "../hosts/host";
import { DeployConsole } from "./DeployConsole";
import { stackRunQueryOptions } from "./queries";

type Tab = "deploy" | "logs";

const TAB_LABEL: Record<Tab, string> = { deploy: "Deploy", logs: "Logs" };

/**
 * The console beside a stack's editor, as Dockge has it: the deploy console (the current or
 * last run) and, for those who may read them (`logs`), the stack's logs, as two tabs.
 *
 * A run that starts, from this page ("Save and deploy", an action, a backup) or elsewhere
 * (another tab, auto-update), brings the deploy tab forward, and it stays there once the run
 * is over, so its outcome is read where it was followed. On opening the page the deploy tab
 * is shown when there is something to read there (a run going on, or a last run that did
 * not succeed), the logs otherwise. Both stay mounted: a run is followed, and the log kept,
 * while the other tab is shown.
 */
export function StackConsole({
  stackId,
  busy,
  logs,
}: {
  stackId: string;
  busy: string | null | undefined;
  /** The stack's services and their containers, for the logs; null: no logs here. */
  logs: LogSource[] | null;
}) {
  const host = useHost();
  const run = useQuery(stackRunQueryOptions(host, stackId)).data;
  const [chosen, setChosen] = useState<Tab | null>(null);
  const [followed, setFollowed] = useState<string | null>(null);
  const box = useRef<HTMLElement>(null);
  const baseId = useId();

  if (run?.status === "running" && run.id !== followed) {
    // A run began: show it, and keep it shown after it ends.
    setFollowed(run.id);
    setChosen("deploy");
  }

  useEffect(() => {
    // Where the console is not beside the editor (one column), a run begun lower down, by
    // "Save and deploy", is brought into view.
    const top = box.current?.getBoundingClientRect().top;
    if (followed && top !== undefined && (top < 0 || top > window.innerHeight - 80)) {
      box.current?.scrollIntoView({ block: "start" });
    }
  }, [followed]);

  const tabs: Tab[] = logs ? ["deploy", "logs"] : ["deploy"];
  const automatic: Tab = logs && (!run || run.status === "succeeded") ? "logs" : "deploy";
  const shown: Tab = logs ? (chosen ?? automatic) : "deploy";

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    // Arrow keys move between the tabs (the tab list is one stop of the Tab key).
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    event.preventDefault();
    const next = tabs[(tabs.indexOf(shown) + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    if (!next) return;
    setChosen(next);
    document.getElementById(`${baseId}-${next}-tab`)?.focus();
  }

  if (!logs) {
    return (
      <section className="stack-console" ref={box} aria-label="Console">
        <DeployConsole stackId={stackId} busy={busy} />
      </section>
    );
  }
  return (
    <section className="card stack-console" ref={box} aria-label="Console">
      <div className="console-tabs" role="tablist" aria-label="What the console shows" onKeyDown={onKeyDown}>
        {tabs.map((tab) => (
          <button
            key={tab}
            type="button"
            role="tab"
            id={`${baseId}-${tab}-tab`}
            aria-selected={shown === tab}
            aria-controls={`${baseId}-${tab}`}
            tabIndex={shown === tab ? 0 : -1}
            onClick={() => setChosen(tab)}
          >
            {TAB_LABEL[tab]}
            {tab === "deploy" && run?.status === "running" && shown !== "deploy" && (
              <>
                <span className="spinner" aria-hidden="true" />
                <span className="visually-hidden"> (running)</span>
              </>
            )}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${baseId}-deploy`} aria-labelledby={`${baseId}-deploy-tab`} hidden={shown !== "deploy"}>
        <DeployConsole stackId={stackId} busy={busy} embedded />
      </div>
      <div role="tabpanel" id={`${baseId}-logs`} aria-labelledby={`${baseId}-logs-tab`} hidden={shown !== "logs"}>
        <LogsCard stackId={stackId} sources={logs} embedded />
      </div>
    </section>
  );
}
