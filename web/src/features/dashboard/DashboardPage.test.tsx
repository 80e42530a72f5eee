import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { adminUser, signedInAs, systemInfo } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";

describe("dashboard", () => {
  it("shows the system information", async () => {
    installFakeFetch(signedInAs(adminUser));
    renderApp("/");

    expect(await screen.findByRole("heading", { level: 1, name: "Dashboard" })).toBeInTheDocument();
    const card = screen.getByRole("region", { name: "System" });
    expect(await within(card).findByText("27.3.1")).toBeInTheDocument();
    expect(card).toHaveTextContent("API 1.47");
    expect(card).toHaveTextContent("2.29.7");
    expect(card).toHaveTextContent("Supported");
    expect(card).toHaveTextContent("/opt/stacks");
    expect(screen.getByText(/fleet dashboard is coming/i)).toBeInTheDocument();
  });

  it("shows the error when Docker is unreachable", async () => {
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/system/info": {
        ...systemInfo,
        docker: { reachable: false, version: null, api_version: null, error: "permission denied on docker.sock" },
        compose: { version: null, json_progress: false },
      },
    });
    renderApp("/");

    const card = await screen.findByRole("region", { name: "System" });
    expect(await within(card).findByText(/permission denied on docker.sock/)).toHaveTextContent("Unreachable");
    expect(card).toHaveTextContent("Not found");
    expect(card).toHaveTextContent("Not supported");
  });

  it("shows the API error with a Retry button", async () => {
    let fail = true;
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/system/info": () => (fail ? json({ detail: "Database is down" }, { status: 500 }) : json(systemInfo)),
    });
    const { user } = renderApp("/");

    expect(await screen.findByRole("alert")).toHaveTextContent("Database is down");
    fail = false;
    await user.click(screen.getByRole("button", { name: "Retry" }));
    expect(await screen.findByText("27.3.1")).toBeInTheDocument();
  });
});
