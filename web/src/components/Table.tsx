import { useLayoutEffect, useRef, type ReactNode, type RefObject } from "react";

/**
 * Names each cell of `table`'s body after its column (`data-label`), so that on a narrow
 * screen, where each row is drawn as a card (styles.css), every value keeps its name; and
 * gives rows and cells their roles, which a table drawn as blocks loses in some browsers.
 * Rows come and go, so the body is watched.
 */
function useCellLabels(table: RefObject<HTMLTableElement | null>, columns: readonly string[]) {
  const names = columns.join("\n"); // the same columns, a new array each render
  useLayoutEffect(() => {
    const body = table.current?.tBodies[0];
    if (!body) return;
    const columns = names.split("\n");
    const label = () => {
      for (const row of Array.from(body.rows)) {
        if (row.getAttribute("role") !== "row") row.setAttribute("role", "row");
        Array.from(row.cells).forEach((cell, index) => {
          const name = columns[index] ?? "";
          if (cell.dataset.label !== name) cell.dataset.label = name;
          const role = cell.tagName === "TH" ? "rowheader" : "cell";
          if (cell.getAttribute("role") !== role) cell.setAttribute("role", role);
        });
      }
    };
    label();
    const watch = new MutationObserver(label);
    watch.observe(body, { childList: true, subtree: true });
    return () => watch.disconnect();
  }, [table, names]);
}

/**
 * A table in a wrapper that scrolls sideways, with shadows at the edges that have more:
 * `columns` are the header cells and the children the rows. `actions` adds a last column
 * for each row's buttons (`RowActions`), named for screen readers only, which stays in view
 * while the rest scrolls; `busy` dims the table while it is being refreshed. On a narrow
 * screen each row is a card of named values (styles.css, `useCellLabels`).
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
  const table = useRef<HTMLTableElement>(null);
  useCellLabels(table, columns);
  return (
    <div className="table-wrap">
      <table ref={table} aria-label={label} aria-busy={busy || undefined} className="data-table">
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col" className="row-actions">
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
