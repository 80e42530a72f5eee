import {
  createContext,
  use,
  useLayoutEffect,
  useRef,
  useState,
  type ReactNode,
  type RefObject,
} from "react";
import { createPortal } from "react-dom";

/** Where a table's rows are drawn as cards of named values (styles.css): nothing folds there. */
const CARDS_QUERY = "(max-width: 720px)";

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
        const details = row.dataset.details !== undefined; // a row's folded values: named inside
        Array.from(row.cells).forEach((cell, index) => {
          const name = details ? "" : (columns[index] ?? "");
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
 * How many of the `foldable` columns are folded into the rows' details: none while the table
 * fits its box, then one more (in the order given) while it does not. Widths are measured,
 * not guessed: `needed[k]` is the width the table took with `k` columns folded when that was
 * too wide, so a column comes back once its box has that room again. On a phone, where the
 * rows are cards, nothing folds. jsdom measures nothing, so there nothing folds either.
 */
function useFolding(
  wrap: RefObject<HTMLDivElement | null>,
  table: RefObject<HTMLTableElement | null>,
  foldable: number,
): number {
  const [folded, setFolded] = useState(0);
  const needed = useRef<number[]>([]);
  useLayoutEffect(() => {
    const box = wrap.current;
    const drawn = table.current;
    if (!box || !drawn || foldable === 0 || typeof ResizeObserver === "undefined") return;
    const cards = typeof window.matchMedia === "function" ? window.matchMedia(CARDS_QUERY) : null;
    const fit = () => {
      const room = box.clientWidth;
      if (room === 0) return; // not laid out (hidden)
      if (cards?.matches) {
        setFolded(0);
        return;
      }
      const width = drawn.getBoundingClientRect().width;
      setFolded((now) => {
        if (width > room + 1 && now < foldable) {
          needed.current[now] = width;
          return now + 1;
        }
        if (now > 0 && room >= (needed.current[now - 1] ?? Infinity)) return now - 1;
        return now;
      });
    };
    fit();
    const sizes = new ResizeObserver(fit);
    sizes.observe(box);
    sizes.observe(drawn);
    cards?.addEventListener("change", fit);
    return () => {
      sizes.disconnect();
      cards?.removeEventListener("change", fit);
    };
  }, [wrap, table, foldable, folded]);
  return folded;
}

/** The columns of the table around: all, those folded into the rows' details, how many cells a row spans. */
const FoldContext = createContext<{ columns: readonly string[]; folded: ReadonlySet<string>; span: number }>({
  columns: [],
  folded: new Set(),
  span: 0,
});

/** Where the folded cells of the row around go: a place per folded column, in the columns' order. */
const RowContext = createContext<ReadonlyMap<string, HTMLElement>>(new Map());

/**
 * A table in a wrapper that scrolls sideways, with shadows at the edges that have more:
 * `columns` are the header cells and the children the rows. `actions` adds a last column
 * for each row's buttons (`RowActions`), named for screen readers only, which stays in view
 * while the rest scrolls; `busy` dims the table while it is being refreshed. On a narrow
 * screen each row is a card of named values (styles.css, `useCellLabels`).
 *
 * `fold` names the columns that may leave the table when it does not fit its box, the first
 * named first: their values then show on a line of details under each row, each after its
 * column's name, so that no value is out of reach, clipped, or under the row's buttons.
 * Rows of such a table are `Row`s and its foldable cells `Cell`s.
 */
export function Table({
  label,
  columns,
  actions = false,
  busy = false,
  fold = [],
  children,
}: {
  label: string;
  columns: readonly string[];
  actions?: boolean;
  busy?: boolean;
  fold?: readonly string[];
  children: ReactNode;
}) {
  const wrap = useRef<HTMLDivElement>(null);
  const table = useRef<HTMLTableElement>(null);
  const count = useFolding(wrap, table, fold.length);
  const folded = new Set(fold.slice(0, count));
  const shown = columns.filter((column) => !folded.has(column));
  useCellLabels(table, shown);
  return (
    <div className="table-wrap" ref={wrap}>
      <table
        ref={table}
        aria-label={label}
        aria-busy={busy || undefined}
        className="data-table"
        data-folded={count > 0 ? count : undefined}
      >
        <thead>
          <tr>
            {shown.map((column) => (
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
        <FoldContext value={{ columns, folded, span: shown.length + (actions ? 1 : 0) }}>
          <tbody>{children}</tbody>
        </FoldContext>
      </table>
    </div>
  );
}

/** The columns of the table around that are folded into its rows' details now. */
export function useFoldedColumns(): ReadonlySet<string> {
  return use(FoldContext).folded;
}

/**
 * A row of a `Table` with foldable columns; while some are folded, a line under it holds
 * their values, each after its column's name, in the columns' order (its `Cell`s of those
 * columns draw there).
 */
export function Row({ children, className }: { children: ReactNode; className?: string }) {
  const { columns, folded, span } = use(FoldContext);
  const [places, setPlaces] = useState<ReadonlyMap<string, HTMLElement>>(() => new Map());
  const folding = folded.size > 0;
  const place = (column: string) => (element: HTMLElement | null) => {
    if (!element) return;
    setPlaces((now) => (now.get(column) === element ? now : new Map(now).set(column, element)));
  };
  return (
    <RowContext value={places}>
      <tr className={folding ? `${className ?? ""} has-details`.trim() : className}>{children}</tr>
      {folding && (
        <tr className="row-details" data-details="">
          <td colSpan={span}>
            <dl>
              {columns
                .filter((column) => folded.has(column))
                .map((column) => (
                  <div key={column} className="row-detail" ref={place(column)} />
                ))}
            </dl>
          </td>
        </tr>
      )}
    </RowContext>
  );
}

/**
 * A cell of the column `column`: a `td` while the column is shown; while it is folded, its
 * value on the row's line of details, after the column's name.
 */
export function Cell({ column, className, children }: { column: string; className?: string; children: ReactNode }) {
  const places = use(RowContext);
  const { folded } = use(FoldContext);
  if (!folded.has(column)) return <td className={className}>{children}</td>;
  const place = places.get(column);
  if (!place) return null;
  return createPortal(
    <>
      <dt>{column}</dt>
      <dd className={className}>{children}</dd>
    </>,
    place,
  );
}

/** The last cell of a row in a `Table` with `actions`. */
/** A row's actions. `wrap`: many of them, on more lines rather than one wide column. */
export function RowActions({ children, wrap = false }: { children: ReactNode; wrap?: boolean }) {
  return <td className={wrap ? "row-actions wrap" : "row-actions"}>{children}</td>;
}
