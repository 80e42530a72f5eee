import { getDefaultNormalizer, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { GitStackView, User } from "../../api/types";
import { codeEditorIn, typeAtEnd } from "../../test/codeEditor";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs } from "../../test/fixtures";
import { makeCommit, makeGitStack, makePreview, makeRepository, SHA_2 } from "../../test/gitFixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeRun, makeSummary } from "../../test/stackFixtures";

function stackRoutes(git: GitStackView | null | (() => Response), user: User = adminUser, extra: Routes = {}): Routes {
  return {
    ...signedInAs(user),
    "GET /api/stacks/web": makeDetail(),
    "GET /api/stacks/updates": makeSummary([]),
    "GET /api/stacks/web/run": makeRun({ status: "succeeded", finished_at: "2025-03-01T10:00:20Z", exit_code: 0 }),
    "GET /api/git/stacks/web": typeof git === "function" ? git : () => json(git),
    ...extra,
  };
}

/** A diff line's text as it is (its indentation means something), less the line's end. */
const exact = getDefaultNormalizer({ collapseWhitespace: false });

const PENDING = makeCommit({ sha: SHA_2, short: SHA_2.slice(0, 12), subject: "web: nginx 1.28", author: "Bob" });

async function gitCard() {
  return screen.findByRole("region", { name: "From git" });
}

describe("a stack from git", () => {
  it("says where it comes from and what it runs, and keeps its compose file read-only (not the host's .env)", async () => {
    installFakeFetch(
      stackRoutes(makeGitStack({ deployed: makeCommit({ url: "https://git.example.com/ops/infra/commit/1111" }) })),
    );
    renderApp("/stacks/web");

    const card = await gitCard();
    expect(card).toHaveTextContent("infra");
    expect(card).toHaveTextContent("stacks/web");
    const deployed = within(card).getByTestId("git-deployed");
    expect(deployed).toHaveTextContent("web: first version");
    expect(deployed).toHaveTextContent("by Ada");
    expect(within(deployed).getByRole("link", { name: /Commit 111111111111/ })).toHaveAttribute(
      "href",
      "https://git.example.com/ops/infra/commit/1111",
    );
    expect(within(card).getByTestId("git-last-sync")).toHaveTextContent("deployed");
    expect(within(card).queryByRole("alert")).not.toBeInTheDocument();

    const files = screen.getByRole("region", { name: "Files" });
    expect(within(files).getByRole("note", { name: "Files from git" })).toHaveTextContent(
      "These files come from infra (folder stacks/web, main): change them in git, or allow local edits.",
    );
    expect(within(files).getByRole("textbox", { name: "compose.yaml" })).toHaveAttribute("readonly");
    expect(within(files).queryByRole("button", { name: "Save compose.yaml" })).not.toBeInTheDocument();
    // The .env is the host's own (the repository's is its template): edited here.
    expect(within(files).getByRole("textbox", { name: ".env" })).not.toHaveAttribute("readonly");
    expect(screen.queryByRole("button", { name: "Deploy from git…" })).not.toBeInTheDocument();
  });

  it("lets its files be edited once local edits are allowed, and shows a refused save's reason", async () => {
    let view = makeGitStack();
    const fake = installFakeFetch(
      stackRoutes(() => json(view), adminUser, {
        "PATCH /api/git/stacks/web": async (request) => {
          view = { ...view, ...((await request.json()) as Partial<GitStackView>) };
          return json(view);
        },
        "PUT /api/stacks/web/compose": () =>
          json(
            { detail: "Stack 'web' comes from git (infra, folder stacks/web): change it there, or allow local edits" },
            { status: 403 },
          ),
      }),
    );
    const { user } = renderApp("/stacks/web");

    const files = await screen.findByRole("region", { name: "Files" });
    const banner = await within(files).findByRole("note", { name: "Files from git" });
    await user.click(within(banner).getByRole("button", { name: "Allow local edits" }));
    expect(await fake.calls("PATCH", "/api/git/stacks/web")[0]?.json()).toEqual({ local_edits: true });
    await waitFor(() => expect(within(files).queryByRole("note", { name: "Files from git" })).not.toBeInTheDocument());
    expect(within(await gitCard()).getByRole("checkbox", { name: "Allow local edits" })).toBeChecked();

    // Editable now; the server still decides, and says why when it refuses.
    typeAtEnd(await codeEditorIn(files, "compose.yaml"), "# more\n");
    await user.click(within(files).getByRole("button", { name: "Save compose.yaml" }));
    expect(await within(files).findByRole("alert")).toHaveTextContent("comes from git (infra, folder stacks/web)");
  });

  it("reviews a pending commit's diff and applies it", async () => {
    let view = makeGitStack({
      pending: PENDING,
      last_sync: { at: "2025-03-01T11:00:00Z", outcome: "pending", commit: SHA_2, detail: null, by: "webhook" },
    });
    const fake = installFakeFetch(
      stackRoutes(() => json(view), operatorUser, {
        "GET /api/git/stacks/web/preview": makePreview(),
        "POST /api/git/stacks/web/apply": () => {
          const outcome = { at: "2025-03-01T11:01:00Z", outcome: "deployed" as const, commit: SHA_2, detail: null };
          view = { ...view, deployed: PENDING, pending: null, last_sync: outcome };
          return json(outcome);
        },
      }),
    );
    const { user } = renderApp("/stacks/web");

    const card = await gitCard();
    const pending = await within(card).findByRole("group", { name: "Pending commit" });
    expect(pending).toHaveTextContent("web: nginx 1.28");
    // An operator reads the policy; an admin sets it.
    expect(within(card).queryByRole("combobox", { name: "Policy" })).not.toBeInTheDocument();
    expect(card).toHaveTextContent("Notify");
    expect(within(card).queryByRole("button", { name: "Detach from git" })).not.toBeInTheDocument();

    await user.click(within(pending).getByRole("button", { name: "Review" }));
    const diff = await within(pending).findByLabelText("Diff of compose.yaml");
    expect(within(diff).getByText("+    image: nginx:1.28", { normalizer: exact })).toHaveClass("diff-added");
    expect(within(diff).getByText("-    image: nginx:1.27", { normalizer: exact })).toHaveClass("diff-removed");
    expect(new URL(fake.calls("GET", "/api/git/stacks/web/preview")[0]?.url ?? "").searchParams.get("commit")).toBe(SHA_2);

    await user.click(within(pending).getByRole("button", { name: "Apply" }));
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(await within(card).findByText(`Commit ${SHA_2.slice(0, 12)} deployed.`)).toBeInTheDocument();
    expect(await fake.calls("POST", "/api/git/stacks/web/apply")[0]?.json()).toEqual({ commit: SHA_2, overwrite: false });
    await waitFor(() => expect(within(card).getByTestId("git-deployed")).toHaveTextContent("web: nginx 1.28"));
    expect(within(card).queryByRole("group", { name: "Pending commit" })).not.toBeInTheDocument();
  });

  it("asks before an apply overwrites files edited here, naming them", async () => {
    const detail =
      "Not deployed: compose.yaml, config/app.ini were edited here since commit 111111111111; look at the diff, then apply to overwrite them (they are kept aside) or detach the stack from git";
    const fake = installFakeFetch(
      stackRoutes(
        makeGitStack({
          pending: PENDING,
          diverged: true,
          edited: ["compose.yaml", "config/app.ini"],
          last_sync: { at: "2025-03-01T11:00:00Z", outcome: "diverged", commit: SHA_2, detail, by: "poll" },
        }),
        adminUser,
        {
          "POST /api/git/stacks/web/apply": {
            at: "2025-03-01T11:01:00Z",
            outcome: "deployed",
            commit: SHA_2,
            detail: null,
          },
        },
      ),
    );
    const { user } = renderApp("/stacks/web");

    const card = await gitCard();
    const alert = await within(card).findByRole("alert");
    expect(alert).toHaveTextContent("Last sync diverged: files edited here");
    expect(alert).toHaveTextContent(detail);
    expect(alert).toHaveTextContent("or detach the stack from git to keep them");
    const pending = within(card).getByRole("group", { name: "Pending commit" });

    // Cancelled: nothing is sent.
    await user.click(within(pending).getByRole("button", { name: "Apply" }));
    let asking = screen.getByRole("alertdialog", { name: "Overwrite the files edited here?" });
    await user.click(within(asking).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(fake.calls("POST", "/api/git/stacks/web/apply")).toHaveLength(0);

    await user.click(within(pending).getByRole("button", { name: "Apply" }));
    asking = screen.getByRole("alertdialog", { name: "Overwrite the files edited here?" });
    const files = within(within(asking).getByRole("list", { name: "Files that will be overwritten" })).getAllByRole(
      "listitem",
    );
    expect(files.map((f) => f.textContent)).toEqual(["compose.yaml", "config/app.ini"]);
    expect(asking).toHaveTextContent(".trash");
    await user.click(within(asking).getByRole("button", { name: "Overwrite and apply" }));
    await waitFor(() => expect(fake.calls("POST", "/api/git/stacks/web/apply")).toHaveLength(1));
    expect(await fake.calls("POST", "/api/git/stacks/web/apply")[0]?.json()).toEqual({ commit: SHA_2, overwrite: true });
  });

  it("shows a rolled back commit as an alert that says what to do", async () => {
    installFakeFetch(
      stackRoutes(
        makeGitStack({
          pending: PENDING,
          last_sync: {
            at: "2025-03-01T11:00:00Z",
            outcome: "rolled_back",
            commit: SHA_2,
            detail: "web: health check failed (unhealthy)",
            by: "webhook",
          },
        }),
      ),
    );
    renderApp("/stacks/web");

    const alert = await within(await gitCard()).findByRole("alert");
    expect(alert).toHaveTextContent(`Last sync rolled back (commit ${SHA_2.slice(0, 12)}): web: health check failed`);
    expect(alert).toHaveTextContent("the previous commit's files run again");
  });

  it("lets an admin change its policy and detach it from git", async () => {
    let view: GitStackView | null = makeGitStack();
    const fake = installFakeFetch(
      stackRoutes(() => json(view), adminUser, {
        "PATCH /api/git/stacks/web": async (request) => {
          view = { ...(view as GitStackView), ...((await request.json()) as Partial<GitStackView>) };
          return json(view);
        },
        "DELETE /api/git/stacks/web": () => {
          view = null;
          return noContent();
        },
        "GET /api/git/repositories": [makeRepository()],
      }),
    );
    const { user } = renderApp("/stacks/web");

    const card = await gitCard();
    await user.selectOptions(within(card).getByRole("combobox", { name: "Policy" }), "auto");
    expect(await fake.calls("PATCH", "/api/git/stacks/web")[0]?.json()).toEqual({ policy: "auto" });
    expect(await within(card).findByText(/deployed on its own, through the health gate/)).toBeInTheDocument();

    await user.click(within(card).getByRole("button", { name: "Detach from git" }));
    const asking = within(card).getByRole("group", { name: "Detach from git" });
    expect(asking).toHaveTextContent("its files become editable here");
    await user.click(within(asking).getByRole("button", { name: "Confirm" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: "From git" })).not.toBeInTheDocument());
    expect(fake.calls("DELETE", "/api/git/stacks/web")).toHaveLength(1);
    // Not from git now: its files are the editor's again, and it may be deployed from git anew.
    const files = screen.getByRole("region", { name: "Files" });
    expect(within(files).queryByRole("note", { name: "Files from git" })).not.toBeInTheDocument();
    expect(await screen.findByRole("button", { name: "Deploy from git…" })).toBeInTheDocument();
  });
});

describe("deploying a stack from git (adoption)", () => {
  it("shows what the folder changes first, then adopts the very commit it showed", async () => {
    let view: GitStackView | null = null;
    const fake = installFakeFetch(
      stackRoutes(() => json(view), adminUser, {
        "GET /api/git/repositories": [makeRepository()],
        "POST /api/git/stacks/web/adoption": makePreview(),
        "POST /api/git/stacks/web/adopt": () => {
          view = makeGitStack({ deployed: makePreview().commit });
          return json(view);
        },
      }),
    );
    const { user } = renderApp("/stacks/web");

    await user.click(await screen.findByRole("button", { name: "Deploy from git…" }));
    const dialog = screen.getByRole("dialog", { name: "Deploy web from git" });
    // The one repository is chosen already.
    expect(await within(dialog).findByLabelText("Repository")).toHaveValue("r1");
    await user.type(within(dialog).getByLabelText("Folder in the repository"), "stacks/web");
    expect(within(dialog).queryByRole("button", { name: "Adopt" })).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "Show the changes" }));

    const changes = await within(dialog).findByRole("region", { name: "What adopting changes" });
    expect(within(changes).getByLabelText("Diff of compose.yaml")).toHaveTextContent("+    image: nginx:1.28", {
      normalizeWhitespace: false,
    });
    expect(await fake.calls("POST", "/api/git/stacks/web/adoption")[0]?.json()).toEqual({
      repository: "r1",
      path: "stacks/web",
      policy: "notify",
      local_edits: false,
    });
    await user.click(within(dialog).getByRole("button", { name: "Adopt" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/git/stacks/web/adopt")[0]?.json()).toEqual({
      repository: "r1",
      path: "stacks/web",
      policy: "notify",
      local_edits: false,
      commit: SHA_2,
    });
    expect(within(await gitCard()).getByTestId("git-deployed")).toHaveTextContent("web: nginx 1.28");
  });

  it("is not offered to an operator", async () => {
    installFakeFetch(stackRoutes(null, operatorUser));
    renderApp("/stacks/web");
    await screen.findByRole("region", { name: "Files" });
    expect(screen.queryByRole("button", { name: "Deploy from git…" })).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "From git" })).not.toBeInTheDocument();
  });
});
