import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { OutsideContainer } from "../../api/types";
import { openSource } from "../../test/fakeEventSource";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { adminUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";

function container(overrides: Partial<OutsideContainer> = {}): OutsideContainer {
  return {
    name: "adminer",
    image: "adminer:4",
    state: "running",
    status: "Up 3 minutes",
    health: null,
    ports: ["0.0.0.0:8080->8080/tcp"],
    project: null,
    ...overrides,
  };
}

describe("containers outside stacks", () => {
  it("lists them (the page says they are outside stacks, not each row); an admin stops one and follows its logs", async () => {
    let state = "running";
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/containers": () =>
        json([container({ state }), container({ name: "old-db", image: "postgres:15", state: "exited", project: "legacy" })]),
      "POST /api/containers/adminer/actions/stop": () => {
        state = "exited";
        return json(container({ state }));
      },
    });
    const { user } = renderApp("/containers");

    const table = await screen.findByRole("table", { name: "Containers outside stacks" });
    const adminer = within(table).getByRole("row", { name: /adminer/ });
    expect(table).not.toHaveTextContent("not in a stack");
    expect(screen.getByText(/Containers on this host that no stack owns/)).toBeInTheDocument();
    expect(within(adminer).getByRole("link", { name: /8080/ })).toHaveAttribute("href", "http://localhost:8080");
    expect(within(table).getByRole("row", { name: /old-db/ })).toHaveTextContent("legacy");
    expect(within(table).getByRole("button", { name: "Start old-db" })).toBeEnabled();

    await user.click(within(adminer).getByRole("button", { name: "Stop adminer" }));
    await waitFor(() => expect(within(adminer).getByRole("button", { name: "Start adminer" })).toBeEnabled());
    expect(fake.calls("POST", "/api/containers/adminer/actions/stop")).toHaveLength(1);

    await user.click(within(adminer).getByRole("button", { name: "Logs of adminer" }));
    expect(await screen.findByRole("region", { name: "Logs of adminer" })).toBeInTheDocument();
    await waitFor(() => expect(openSource("/logs")?.url).toBe("/api/containers/adminer/logs"));
  });

  it("shows a viewer the list and no button", async () => {
    installFakeFetch({ ...signedInAs(viewerUser), "GET /api/containers": [container()] });
    renderApp("/containers");

    const table = await screen.findByRole("table", { name: "Containers outside stacks" });
    expect(within(table).getByRole("row", { name: /adminer/ })).toBeInTheDocument();
    expect(within(table).queryByRole("button")).not.toBeInTheDocument();
  });
});
