/**
 * The CodeMirror 6 editor. Loaded on demand (`import("./codemirror")`) so the main bundle
 * does not carry it.
 */
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { yaml } from "@codemirror/lang-yaml";
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  StreamLanguage,
  syntaxHighlighting,
  type StringStream,
} from "@codemirror/language";
import { EditorState, type Extension } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { tags as t } from "@lezer/highlight";

interface EnvState {
  /** Past the `=` of a KEY=VALUE line. */
  inValue: boolean;
  quote: string | null;
}

/** `.env` / `.secrets`: `# comments`, `export KEY=value`, quoted values and `${VAR}` references. */
const envLanguage = StreamLanguage.define<EnvState>({
  name: "env",
  startState: () => ({ inValue: false, quote: null }),
  token(stream: StringStream, state: EnvState): string | null {
    if (stream.sol()) {
      state.inValue = false;
      state.quote = null;
    }
    if (!state.inValue) {
      if (stream.eatSpace()) return null;
      if (stream.peek() === "#") {
        stream.skipToEnd();
        return "comment";
      }
      if (stream.match(/^export(?=\s)/)) return "keyword";
      if (stream.match(/^[^=\s#]+/)) return "propertyName";
      if (stream.eat("=")) {
        state.inValue = true;
        return "operator";
      }
      stream.next();
      return "invalid";
    }
    if (stream.match(/^\$\{[^}]*\}?/) || stream.match(/^\$[A-Za-z_][A-Za-z0-9_]*/)) return "variableName.special";
    if (state.quote === null && stream.peek() === "#" && /\s/.test(stream.string.charAt(stream.pos - 1) || " ")) {
      stream.skipToEnd();
      return "comment";
    }
    const ch = stream.next() ?? "";
    if (state.quote === null && (ch === '"' || ch === "'")) state.quote = ch;
    else if (state.quote !== null && ch === state.quote) state.quote = null;
    else if (ch === "\\") stream.next();
    stream.eatWhile((c) => c !== "$" && c !== '"' && c !== "'" && c !== "\\" && c !== "#");
    return "string";
  },
  languageData: { commentTokens: { line: "#" } },
});

/** Colours from CSS variables, so light and dark schemes both read well (see styles.css). */
const highlightStyle = HighlightStyle.define([
  { tag: [t.comment, t.lineComment], color: "var(--syn-comment)", fontStyle: "italic" },
  { tag: [t.propertyName, t.definition(t.propertyName)], color: "var(--syn-key)" },
  { tag: [t.string, t.special(t.string), t.attributeValue], color: "var(--syn-string)" },
  { tag: [t.keyword, t.operator, t.meta], color: "var(--syn-keyword)" },
  { tag: [t.labelName, t.typeName, t.special(t.variableName), t.variableName], color: "var(--syn-special)" },
  { tag: [t.number, t.bool, t.null, t.atom], color: "var(--syn-atom)" },
  { tag: t.invalid, color: "var(--bad)" },
]);

const theme = EditorView.theme({
  "&": {
    backgroundColor: "var(--surface)",
    color: "var(--text)",
    border: "1px solid var(--border)",
    borderRadius: "6px",
    fontSize: "0.86rem",
  },
  "&.cm-focused": { outline: "2px solid var(--focus)", outlineOffset: "1px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.45", minHeight: "16rem", maxHeight: "70vh" },
  ".cm-content": { caretColor: "var(--text)" },
  ".cm-gutters": {
    backgroundColor: "var(--surface-2)",
    color: "var(--muted)",
    borderRight: "1px solid var(--border)",
    borderRadius: "6px 0 0 6px",
  },
  ".cm-activeLine": { backgroundColor: "color-mix(in srgb, var(--accent) 7%, transparent)" },
  ".cm-activeLineGutter": { backgroundColor: "color-mix(in srgb, var(--accent) 14%, transparent)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "color-mix(in srgb, var(--accent) 30%, transparent)",
  },
  "&.cm-focused .cm-cursor": { borderLeftColor: "var(--text)" },
});

/** What the editor highlights: YAML, KEY=VALUE lines, or nothing. */
export type EditorLanguage = "yaml" | "env" | "plain";

function languageExtension(language: EditorLanguage): Extension {
  if (language === "yaml") return yaml();
  if (language === "env") return envLanguage;
  return [];
}

export interface EditorOptions {
  parent: HTMLElement;
  doc: string;
  language: EditorLanguage;
  /** The editor's accessible name. */
  label: string;
  onChange: (doc: string) => void;
  /** Ctrl/Cmd-S. */
  onSave?: () => void;
}

export interface EditorHandle {
  /** Replaces the whole text (e.g. after "Reload"); no change event. */
  setDoc: (doc: string) => void;
  destroy: () => void;
  view: EditorView;
}

export function createEditor(options: EditorOptions): EditorHandle {
  let silent = false;
  const view = new EditorView({
    parent: options.parent,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(highlightStyle),
        keymap.of([
          {
            key: "Mod-s",
            preventDefault: true,
            run: () => {
              options.onSave?.();
              return true;
            },
          },
          ...defaultKeymap,
          ...historyKeymap,
        ]),
        EditorState.tabSize.of(2),
        languageExtension(options.language),
        theme,
        EditorView.contentAttributes.of({ "aria-label": options.label, spellcheck: "false" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !silent) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    setDoc(doc) {
      if (doc === view.state.doc.toString()) return;
      silent = true;
      try {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: doc } });
      } finally {
        silent = false;
      }
    },
    destroy: () => view.destroy(),
  };
}
