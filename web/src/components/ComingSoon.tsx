import type { ReactNode } from "react";

/** A page that later work fills in. */
export function ComingSoon({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <main className="page">
      <h1>{title}</h1>
      <div className="card">
        <p>Coming soon.</p>
        {children && <p className="muted">{children}</p>}
      </div>
    </main>
  );
}
