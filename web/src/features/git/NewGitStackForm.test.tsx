import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { makeGitStack, makeRepository } from "../../test/gitFixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeSummary } from "../../test/stackFixtures";

describe("a new stack from git", () => {
  it("is made of a repository's folder, shows that it waits for the deploy, then opens the stack", async () => {
    let answer: (response: Response) => void = () => undefined;
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/stacks": [],
      "GET /api/stacks/updates": makeSummary([]),
      "GET /api/git/repositories": [makeRepository(), makeRepository({ id: "r2", name: "apps", ref: "prod" })],
      "POST /api/git/stacks": () => new Promise<Response>((resolve) => (answer = resolve)),
      "GET /api/stacks/web": makeDetail(),
      "GET /api/git/stacks/web": makeGitStack(),
    });
    const { user } = renderApp("/stacks?new=1");

    const card = await screen.findByRole("region", { name: "New stack" });
    // The compose file is the default; the repositories are asked for only when chosen.
    expect(within(card).getByRole("form", { name: "New stack" })).toBeInTheDocument();
    expect(fake.calls("GET", "/api/git/repositories")).toHaveLength(0);
    await user.click(within(card).getByRole("radio", { name: "From git" }));

    const form = await within(card).findByRole("form", { name: "New stack from git" });
    await user.type(within(form).getByLabelText("Name"), "web");
    await user.selectOptions(await within(form).findByLabelText("Repository"), "r2");
    await user.type(within(form).getByLabelText("Folder in the repository"), " stacks/web ");
    // Each policy says what it does.
    expect(within(form).getByRole("radio", { name: /^Auto: .*deployed on its own/ })).toBeChecked();
    await user.click(within(form).getByRole("radio", { name: /^Notify: .*when someone reviews and applies it/ }));
    expect(within(form).getByRole("radio", { name: /^Off: / })).not.toBeChecked();
    await user.click(within(form).getByRole("checkbox", { name: /Allow local edits/ }));
    await user.click(within(form).getByRole("button", { name: "Create and deploy" }));

    expect(await within(form).findByRole("status")).toHaveTextContent("waits for its health gate");
    expect(within(form).getByRole("button", { name: "Deploying…" })).toBeDisabled();
    expect(await fake.calls("POST", "/api/git/stacks")[0]?.json()).toEqual({
      name: "web",
      repository: "r2",
      path: "stacks/web",
      policy: "notify",
      local_edits: true,
    });

    answer(json(makeGitStack(), { status: 201 }));
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/stacks/web"));
    expect(await screen.findByRole("region", { name: "From git" })).toBeInTheDocument();
  });

  it("shows the server's reason when the stack is not made", async () => {
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/stacks": [],
      "GET /api/stacks/updates": makeSummary([]),
      "GET /api/git/repositories": [makeRepository()],
      "POST /api/git/stacks": () =>
        json({ detail: "git://127.0.0.1:1/stacks.git: could not connect: connection refused" }, { status: 502 }),
    });
    const { user } = renderApp("/stacks?new=1");

    await user.click(await screen.findByRole("radio", { name: "From git" }));
    const form = await screen.findByRole("form", { name: "New stack from git" });
    await user.type(within(form).getByLabelText("Name"), "web");
    // The one repository is chosen already.
    expect(await within(form).findByLabelText("Repository")).toHaveValue("r1");
    await user.click(within(form).getByRole("button", { name: "Create and deploy" }));
    expect(await within(form).findByRole("alert")).toHaveTextContent("could not connect: connection refused");
    expect(screen.getByTestId("location")).toHaveTextContent("/stacks");
  });

  it("says where repositories are added when there is none", async () => {
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/stacks": [],
      "GET /api/stacks/updates": makeSummary([]),
      "GET /api/git/repositories": [],
    });
    const { user } = renderApp("/stacks?new=1");

    await user.click(await screen.findByRole("radio", { name: "From git" }));
    const form = await screen.findByRole("form", { name: "New stack from git" });
    expect(await within(form).findByRole("link", { name: "Settings, Git repositories" })).toHaveAttribute(
      "href",
      "/settings#git-title",
    );
    expect(within(form).getByRole("button", { name: "Create and deploy" })).toBeDisabled();
  });
});
