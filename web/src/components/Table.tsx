import type { ReactNode } from "react";

/**
 * A table in a wrapper that scrolls sideways: `columns` are the header cells and the children
 * the rows. `actions` adds a last column for each row's buttons (`RowActions`), named for
 * screen readers only; `busy` dims the table while it is being refreshed.
 */
export function Table({
  label,
  columns,
  actions = false,
  busy = false,
  children,
}: {
  label: string;
  columns: readonly string[];
  actions?: boolean;
  busy?: boolean;
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table aria-label={label} aria-busy={busy || undefined}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** The last cell of a row in a `Table` with `actions`. */
export function RowActions({ children }: { children: ReactNode }) {
  return <td className="row-actions">{children}</td>;
}
