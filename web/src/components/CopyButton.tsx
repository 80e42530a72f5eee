import { useState } from "react";

/**
 * "Copy" (`text` to the clipboard), then says whether it worked: the clipboard API is
 * missing outside a secure context (plain http on a LAN address), where the text must be
 * selected and copied by hand.
 */
export function CopyButton({ text, label }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);

  async function copy() {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  }

  return (
    <>
      <button type="button" aria-label={label} onClick={() => void copy()}>
        Copy
      </button>
      {copied && (
        <span className={copied === "yes" ? "success small" : "error small"} role="status">
          {copied === "yes" ? " Copied." : " Could not copy: select it and copy it by hand."}
        </span>
      )}
    </>
  );
}
