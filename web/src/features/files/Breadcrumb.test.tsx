import { render, screen, within } from "@testing-library/react";
import { createMemoryRouter, RouterProvider } from "react-router";
import { describe, expect, it } from "vitest";
import { Breadcrumb } from "./Breadcrumb";

function renderAt(folder: string) {
  const router = createMemoryRouter([{ path: "*", element: <Breadcrumb folder={folder} /> }]);
  render(<RouterProvider router={router} />);
  return screen.getByRole("navigation", { name: "Breadcrumb" });
}

describe("Breadcrumb", () => {
  it("links every part and marks the current folder", () => {
    const crumbs = renderAt("web/conf");
    expect(within(crumbs).getAllByRole("link").map((a) => [a.textContent, a.getAttribute("href")])).toEqual([
      ["Stacks folder", "/files"],
      ["web", "/files?path=web"],
      ["conf", "/files?path=web/conf"],
    ]);
    expect(within(crumbs).getByRole("link", { name: "conf" })).toHaveAttribute("aria-current", "page");
    expect(within(crumbs).getByRole("link", { name: "web" })).not.toHaveAttribute("aria-current");
  });

  it("marks the stacks folder at the root", () => {
    const crumbs = renderAt("");
    expect(within(crumbs).getByRole("link", { name: "Stacks folder" })).toHaveAttribute("aria-current", "page");
  });
});
