import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { GitRepository, GitRepositorySpec, User } from "../../api/types";
import { makeAgent } from "../../test/agentFixtures";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { makeRepository, SHA_1 } from "../../test/gitFixtures";
import { renderApp } from "../../test/renderApp";
import { makePolicy } from "../../test/stackFixtures";

function settingsRoutes(user: User, extra: Routes = {}): Routes {
  return {
    ...signedInAs(user),
    "GET /api/auth/tokens": [],
    "GET /api/users": [],
    "GET /api/registries": [],
    "GET /api/audit": { items: [], total: 0 },
    "GET /api/stacks/update-policy": makePolicy(),
    ...extra,
  };
}

async function section() {
  return screen.findByRole("region", { name: "Git repositories" });
}

const SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDeployKeyPublicHalf stackyard-deploy-r2";
const FINGERPRINT = "SHA256:Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE";

describe("the git repositories in Settings", () => {
  it("lists each repository: address, ref, sign-in, poll, last fetch and signed commits", async () => {
    installFakeFetch(
      settingsRoutes(adminUser, {
        "GET /api/git/repositories": [
          makeRepository(),
          makeRepository({
            id: "r2",
            name: "private",
            url: "git@git.example.com:ops/private.git",
            ref: "v2",
            auth: "ssh_key",
            poll_seconds: 0,
            host_key_fingerprint: FINGERPRINT,
            require_signed: true,
            trusted_keys: ["ssh-ed25519 AAAA ada", "ssh-ed25519 BBBB bob"],
            last_fetch: { at: "2025-03-01T10:00:00Z", commit: null, error: "Permission denied (publickey)" },
          }),
        ],
      }),
    );
    renderApp("/settings");

    const table = await within(await section()).findByRole("table", { name: "Git repositories" });
    const infra = within(table).getByRole("row", { name: /infra/ });
    expect(infra).toHaveTextContent("https://git.example.com/ops/infra.git");
    expect(infra).toHaveTextContent("main");
    expect(infra).toHaveTextContent("None (a public repository)");
    expect(infra).toHaveTextContent("Every 5 min");
    expect(infra).toHaveTextContent(SHA_1.slice(0, 12));
    expect(infra).toHaveTextContent("Not required");
    const ssh = within(table).getByRole("row", { name: /private/ });
    expect(ssh).toHaveTextContent("SSH deploy key");
    expect(ssh).toHaveTextContent(FINGERPRINT);
    expect(ssh).toHaveTextContent("Only by webhook or by hand");
    expect(ssh).toHaveTextContent("Failed");
    expect(ssh).toHaveTextContent("Permission denied (publickey)");
    expect(ssh).toHaveTextContent("Required (2 trusted keys)");
    expect(screen.getByRole("link", { name: "Git repositories" })).toHaveAttribute("href", "#git-title");
  });

  it("adds a repository with a token, which an edit keeps when its field is left empty", async () => {
    let repositories: GitRepository[] = [];
    const fake = installFakeFetch(
      settingsRoutes(adminUser, {
        "GET /api/git/repositories": () => json(repositories),
        "POST /api/git/repositories": async (request) => {
          const spec = (await request.json()) as GitRepositorySpec;
          const { token, ...rest } = spec;
          repositories = [makeRepository({ ...rest, id: "r9", has_token: Boolean(token), last_fetch: null })];
          return json(repositories[0], { status: 201 });
        },
        "PUT /api/git/repositories/:id": () => json(repositories[0]),
      }),
    );
    const { user } = renderApp("/settings");

    await user.click(await within(await section()).findByRole("button", { name: "Add a repository" }));
    const form = screen.getByRole("form", { name: "Add a repository" });
    await user.type(within(form).getByLabelText("Name"), "infra");
    await user.type(within(form).getByLabelText("Repository address"), "https://git.example.com/ops/infra.git");
    await user.selectOptions(within(form).getByLabelText("Sign-in"), "token");
    expect(within(form).getByLabelText("Token")).toBeRequired();
    await user.type(within(form).getByLabelText("Token"), "glpat-secret");
    const poll = within(form).getByLabelText("Poll every (seconds)");
    await user.clear(poll);
    await user.type(poll, "0");
    expect(within(form).getByText(/0: fetched only by a webhook or by hand/)).toBeInTheDocument();
    await user.click(within(form).getByLabelText(/Require signed commits/));
    await user.type(within(form).getByLabelText("Trusted keys"), "ssh-ed25519 AAAA ada{Enter}ssh-ed25519 BBBB bob");
    await user.click(within(form).getByRole("button", { name: "Add the repository" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/git/repositories")[0]?.json()).toEqual({
      name: "infra",
      url: "https://git.example.com/ops/infra.git",
      ref: "main",
      auth: "token",
      username: "git",
      token: "glpat-secret",
      poll_seconds: 0,
      require_signed: true,
      trusted_keys: ["ssh-ed25519 AAAA ada", "ssh-ed25519 BBBB bob"],
    });

    const table = await screen.findByRole("table", { name: "Git repositories" });
    expect(within(table).getByRole("row", { name: /infra/ })).toHaveTextContent("HTTPS token");
    await user.click(within(table).getByRole("button", { name: "Edit infra" }));
    const edit = screen.getByRole("form", { name: "Edit infra" });
    const token = within(edit).getByLabelText("Token");
    expect(token).toHaveValue("");
    expect(token).not.toBeRequired();
    expect(within(edit).getByText(/A token is kept: it is never shown. Leave this empty to keep it/)).toBeInTheDocument();
    expect(within(edit).getByLabelText("Trusted keys")).toHaveValue("ssh-ed25519 AAAA ada\nssh-ed25519 BBBB bob");
    await user.click(within(edit).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/git/repositories/r9")).toHaveLength(1));
    const sent = (await fake.calls("PUT", "/api/git/repositories/r9")[0]?.json()) as GitRepositorySpec;
    expect(sent.token).toBeNull();
  });

  it("shows a new webhook's address and secret once", async () => {
    let repository = makeRepository();
    const fake = installFakeFetch(
      settingsRoutes(adminUser, {
        "GET /api/git/repositories": () => json([repository]),
        "POST /api/git/repositories/r1/webhook": () => {
          repository = { ...repository, webhook: true };
          return json({ path: "/git/hooks/r1", secret: "whsec-only-once" });
        },
      }),
    );
    const { user } = renderApp("/settings");

    const table = await within(await section()).findByRole("table", { name: "Git repositories" });
    await user.click(within(table).getByRole("button", { name: "Webhook and keys of infra" }));
    let dialog = screen.getByRole("dialog", { name: "Webhook and keys of infra" });
    expect(within(dialog).getByText(/No webhook yet/)).toBeInTheDocument();
    // An HTTPS repository has neither a deploy key nor a host key.
    expect(within(dialog).queryByRole("heading", { name: "Deploy key" })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole("heading", { name: "SSH host key" })).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "New webhook" }));

    const made = await within(dialog).findByRole("region", { name: "New webhook" });
    expect(within(made).getByTestId("webhook-url")).toHaveTextContent(`${window.location.origin}/api/git/hooks/r1`);
    expect(within(made).getByTestId("webhook-secret")).toHaveTextContent("whsec-only-once");
    expect(made).toHaveTextContent("push webhook");
    expect(made).toHaveTextContent("application/json");
    expect(made).toHaveTextContent("it will not be shown again");
    expect(within(made).getByRole("button", { name: "Copy the webhook's address" })).toBeInTheDocument();
    expect(within(made).getByRole("button", { name: "Copy the webhook's secret" })).toBeInTheDocument();

    await user.click(within(dialog).getByRole("button", { name: "Close" }));
    await user.click(within(table).getByRole("button", { name: "Webhook and keys of infra" }));
    dialog = screen.getByRole("dialog", { name: "Webhook and keys of infra" });
    await waitFor(() => expect(within(dialog).getByText(/A webhook secret is set/)).toBeInTheDocument());
    expect(screen.queryByText("whsec-only-once")).not.toBeInTheDocument();
    expect(fake.calls("POST", "/api/git/repositories/r1/webhook")).toHaveLength(1);
  });

  it("gives an agent's repository the central's address for its webhook", async () => {
    installFakeFetch(
      settingsRoutes(adminUser, {
        "GET /api/agents": [makeAgent({ id: 3, name: "nas" })],
        "GET /api/agents/3/stacks/update-policy": makePolicy(),
        "GET /api/agents/3/git/repositories": [makeRepository()],
        "POST /api/agents/3/git/repositories/r1/webhook": { path: "/git/hooks/agents/{agent}/r1", secret: "s" },
      }),
    );
    const { user } = renderApp("/settings?host=3");

    const table = await within(await section()).findByRole("table", { name: "Git repositories" });
    await user.click(within(table).getByRole("button", { name: "Webhook and keys of infra" }));
    await user.click(screen.getByRole("button", { name: "New webhook" }));
    expect(await screen.findByTestId("webhook-url")).toHaveTextContent(
      `${window.location.origin}/api/git/hooks/agents/3/r1`,
    );
  });

  it("shows an SSH repository's deploy key and pinned host key, and forgets the key after a warning", async () => {
    let repository = makeRepository({
      id: "r2",
      name: "private",
      url: "ssh://git@git.example.com:2222/ops/private.git",
      auth: "ssh_key",
      public_key: SSH_KEY,
      host_key: "ssh-ed25519 AAAAhost",
      host_key_fingerprint: FINGERPRINT,
    });
    const fake = installFakeFetch(
      settingsRoutes(adminUser, {
        "GET /api/git/repositories": () => json([repository]),
        "DELETE /api/git/repositories/r2/host-key": () => {
          repository = { ...repository, host_key: null, host_key_fingerprint: null };
          return json(repository);
        },
      }),
    );
    const { user } = renderApp("/settings");

    const table = await within(await section()).findByRole("table", { name: "Git repositories" });
    await user.click(within(table).getByRole("button", { name: "Webhook and keys of private" }));
    const dialog = screen.getByRole("dialog", { name: "Webhook and keys of private" });
    expect(within(dialog).getByTestId("deploy-key")).toHaveTextContent(SSH_KEY);
    expect(dialog).toHaveTextContent("Add it to the repository at the git host as a read-only deploy key");
    expect(within(dialog).getByRole("button", { name: "Copy the deploy key" })).toBeInTheDocument();
    expect(within(dialog).getByTestId("host-key-fingerprint")).toHaveTextContent(FINGERPRINT);

    await user.click(within(dialog).getByRole("button", { name: "Forget host key" }));
    const asking = within(dialog).getByRole("group", { name: "Forget host key" });
    expect(asking).toHaveTextContent("Check the new key's fingerprint with the server's owner");
    await user.click(within(asking).getByRole("button", { name: "Confirm" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/git/repositories/r2/host-key")).toHaveLength(1));
    expect(await within(dialog).findByText(/No host key is pinned/)).toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Pin host key" })).toBeInTheDocument();
  });

  it("shows why a repository that stacks come from is not deleted", async () => {
    installFakeFetch(
      settingsRoutes(adminUser, {
        "GET /api/git/repositories": [makeRepository()],
        "DELETE /api/git/repositories/r1": () =>
          json({ detail: "Stacks web, db come from this repository: detach them first" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/settings");

    const table = await within(await section()).findByRole("table", { name: "Git repositories" });
    await user.click(within(table).getByRole("button", { name: "Delete infra" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete repository infra?" });
    await user.click(within(dialog).getByRole("button", { name: "Delete repository" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent(
      "Stacks web, db come from this repository: detach them first",
    );
  });

  it("lets an operator sync now and shows what became of each stack, and nothing else", async () => {
    const fake = installFakeFetch(
      settingsRoutes(operatorUser, {
        "GET /api/git/repositories": [makeRepository()],
        "POST /api/git/repositories/r1/sync": {
          repository: "r1",
          commit: SHA_1,
          error: null,
          stacks: {
            web: { at: "2025-03-01T10:00:00Z", outcome: "deployed", commit: SHA_1, detail: null, by: "bob" },
            db: {
              at: "2025-03-01T10:00:00Z",
              outcome: "diverged",
              commit: SHA_1,
              detail: "Not deployed: compose.yaml was edited here",
              by: "bob",
            },
          },
        },
      }),
    );
    const { user } = renderApp("/settings");

    const region = await section();
    const table = await within(region).findByRole("table", { name: "Git repositories" });
    expect(within(table).queryByRole("button", { name: "Edit infra" })).not.toBeInTheDocument();
    expect(within(table).queryByRole("button", { name: "Delete infra" })).not.toBeInTheDocument();
    expect(within(region).queryByRole("button", { name: "Add a repository" })).not.toBeInTheDocument();
    await user.click(within(table).getByRole("button", { name: "Sync infra now" }));

    const report = await within(region).findByRole("region", { name: "Sync of infra" });
    expect(report).toHaveTextContent(`fetched commit ${SHA_1.slice(0, 12)}`);
    const stacks = within(report).getAllByRole("listitem");
    expect(stacks[0]).toHaveTextContent("web: deployed");
    expect(stacks[1]).toHaveTextContent("db: diverged: files edited here (Not deployed: compose.yaml was edited here)");
    expect(fake.calls("POST", "/api/git/repositories/r1/sync")).toHaveLength(1);
  });

  it("shows a viewer the list only", async () => {
    installFakeFetch(settingsRoutes(viewerUser, { "GET /api/git/repositories": [makeRepository()] }));
    renderApp("/settings");

    const table = await within(await section()).findByRole("table", { name: "Git repositories" });
    expect(within(table).getByRole("row", { name: /infra/ })).toBeInTheDocument();
    expect(within(table).queryAllByRole("button")).toHaveLength(0);
  });
});
