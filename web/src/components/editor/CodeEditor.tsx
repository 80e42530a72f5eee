import { useEffect, useEffectEvent, useRef, useState } from "react";
import type { EditorHandle, EditorLanguage } from "./codemirror";

/**
 * A code editor over `value`: CodeMirror (loaded on first use, in its own chunk) with YAML or
 * KEY=VALUE highlighting; a plain textarea stands in while it loads or if it cannot load.
 */
export function CodeEditor({
  value,
  onChange,
  language,
  label,
  onSave,
}: {
  value: string;
  onChange: (value: string) => void;
  language: EditorLanguage;
  /** Accessible name of the text area. */
  label: string;
  /** Ctrl/Cmd-S in the editor. */
  onSave?: () => void;
}) {
  const hostRef = useRef<HTMLDivElement>(null);
  const handleRef = useRef<EditorHandle | null>(null);
  const [state, setState] = useState<"loading" | "ready" | "failed">("loading");
  // The editor is created once: it starts from the text of that moment and calls the latest props.
  const currentValue = useEffectEvent(() => value);
  const changed = useEffectEvent((doc: string) => onChange(doc));
  const saved = useEffectEvent(() => onSave?.());

  useEffect(() => {
    let cancelled = false;
    import("./codemirror").then(
      ({ createEditor }) => {
        const parent = hostRef.current;
        if (cancelled || !parent) return;
        handleRef.current = createEditor({
          parent,
          doc: currentValue(),
          language,
          label,
          onChange: (doc) => changed(doc),
          onSave: () => saved(),
        });
        setState("ready");
      },
      () => {
        if (!cancelled) setState("failed");
      },
    );
    return () => {
      cancelled = true;
      handleRef.current?.destroy();
      handleRef.current = null;
    };
  }, [language, label]);

  // Changes from outside (a reload, a revert) replace the editor's text.
  useEffect(() => {
    handleRef.current?.setDoc(value);
  }, [value, state]);

  return (
    <div className="code-editor-host" data-editor={state === "ready" ? "codemirror" : state}>
      {state !== "ready" && (
        <textarea
          className="code-editor"
          aria-label={label}
          rows={18}
          spellCheck={false}
          value={value}
          onChange={(event) => onChange(event.target.value)}
          onKeyDown={(event) => {
            if ((event.ctrlKey || event.metaKey) && event.key === "s") {
              event.preventDefault();
              onSave?.();
            }
          }}
        />
      )}
      <div ref={hostRef} hidden={state !== "ready"} />
    </div>
  );
}
