import type { ReactNode } from "react";

/** A form control with its label: the text above the input, select or textarea given as children. */
export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
    </label>
  );
}
