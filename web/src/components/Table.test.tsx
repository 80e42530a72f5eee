import { render, screen, within } from "@testing-library/react";
import { useState } from "react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { RowActions, Table } from "./Table";

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
