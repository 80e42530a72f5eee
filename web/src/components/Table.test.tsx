import { render, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Cell, Row, RowActions, Table } from "./Table";

function Rows() {
  const [names, setNames] = useState(["web"]);
  return (
    <>
      <button type="button" onClick={() => setNames((all) => [...all, "db"])}>
        More
      </button>
      <Table label="Things" columns={["Name", "Size"]} actions>
        {names.map((name) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>1 kB</td>
            <RowActions>
              <button type="button">Delete {name}</button>
            </RowActions>
          </tr>
        ))}
      </Table>
    </>
  );
}

describe("Table", () => {
  it("names every cell after its column, also in rows added later, for the phone's cards", async () => {
    render(<Rows />);
    await userEvent.click(screen.getByRole("button", { name: "More" }));

    const table = screen.getByRole("table", { name: "Things" });
    const rows = within(table).getAllByRole("row").slice(1); // the header's row first
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const cells = Array.from((row as HTMLTableRowElement).cells);
      expect(cells.map((cell) => cell.dataset.label)).toEqual(["Name", "Size", ""]);
      expect(cells.map((cell) => cell.getAttribute("role"))).toEqual(["rowheader", "cell", "cell"]);
    }
    expect(within(rows[1] as HTMLElement).getByRole("rowheader")).toHaveTextContent("db");
  });
});

/**
 * jsdom lays nothing out: a table here is as wide as 1000 px less 200 for each folded
 * column, in a box of `room` px, and the box's size is said to have changed on demand.
 */
function fakeLayout(room: number) {
  const watchers: (() => void)[] = [];
  vi.stubGlobal(
    "ResizeObserver",
    class {
      constructor(callback: () => void) {
        watchers.push(callback);
      }
      observe() {}
      disconnect() {}
    },
  );
  const box = { room };
  vi.spyOn(HTMLElement.prototype, "clientWidth", "get").mockImplementation(function (this: HTMLElement) {
    return this.classList.contains("table-wrap") ? box.room : 0;
  });
  vi.spyOn(HTMLElement.prototype, "getBoundingClientRect").mockImplementation(function (this: HTMLElement) {
    const folded = Number(this.dataset.folded ?? 0);
    return new DOMRect(0, 0, this.tagName === "TABLE" ? 1000 - 200 * folded : 0, 20);
  });
  return {
    resize(width: number) {
      box.room = width;
      for (const watcher of watchers) watcher();
    },
  };
}

function Archives() {
  return (
    <Table label="Archives" columns={["Archive", "Stack", "Made", "Size"]} fold={["Size", "Stack", "Made"]} actions>
      <Row>
        <th scope="row">web.tar</th>
        <Cell column="Stack">web</Cell>
        <Cell column="Made">2026-03-01 14:03:22</Cell>
        <Cell column="Size">6.7 kB</Cell>
        <RowActions>
          <button type="button">Delete</button>
        </RowActions>
      </Row>
    </Table>
  );
}

describe("a table that folds what its box cannot show", () => {
  afterEach(() => vi.restoreAllMocks());

  it("moves columns to a line of details under each row, in the order given, until it fits", async () => {
    const layout = fakeLayout(650);
    render(<Archives />);

    const table = screen.getByRole("table", { name: "Archives" });
    // 1000 px in 650: Size, then Stack fold (600 px fits).
    await waitFor(() => expect(table).toHaveAttribute("data-folded", "2"));
    expect(within(table).getAllByRole("columnheader").map((th) => th.textContent)).toEqual([
      "Archive",
      "Made",
      "Actions",
    ]);
    const [, row, details] = within(table).getAllByRole("row");
    expect(within(row as HTMLElement).getAllByRole("cell").map((td) => td.textContent)).toEqual([
      "2026-03-01 14:03:22",
      "Delete",
    ]);
    // Each value after its column's name, in the columns' order (not the order they folded in).
    const terms = within(details as HTMLElement).getAllByRole("term").map((dt) => dt.textContent);
    const values = within(details as HTMLElement).getAllByRole("definition").map((dd) => dd.textContent);
    expect(terms).toEqual(["Stack", "Size"]);
    expect(values).toEqual(["web", "6.7 kB"]);
    expect(details?.querySelector("td")).toHaveAttribute("colspan", "3");

    // Room again for what folded last: Stack comes back (it took 800 px with Size folded).
    layout.resize(820);
    await waitFor(() => expect(table).toHaveAttribute("data-folded", "1"));
    expect(within(table).getAllByRole("columnheader").map((th) => th.textContent)).toEqual([
      "Archive",
      "Stack",
      "Made",
      "Actions",
    ]);
    layout.resize(1200);
    await waitFor(() => expect(table).not.toHaveAttribute("data-folded"));
    expect(within(table).queryByRole("term")).toBeNull();
  });
});
