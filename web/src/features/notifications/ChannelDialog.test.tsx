import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { catalogue, hook, images, makeChannel } from "../../test/notificationFixtures";
import { renderApp } from "../../test/renderApp";

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/notifications/catalogue": catalogue,
    "GET /api/notifications/channels": [hook],
    "GET /api/notifications/rules": [images],
    "GET /api/agents": [],
    ...extra,
  };
}

async function openAdd() {
  const rendered = renderApp("/notifications");
  await rendered.user.click(await screen.findByRole("button", { name: "Add a channel" }));
  return { ...rendered, dialog: screen.getByRole("dialog", { name: "Add a channel" }) };
}

async function openEdit(name: string) {
  const rendered = renderApp("/notifications");
  await rendered.user.click(await screen.findByRole("button", { name: `Edit channel ${name}` }));
  return { ...rendered, dialog: screen.getByRole("dialog", { name: `Edit ${name}` }) };
}

describe("the channel dialog", () => {
  it("draws each kind's fields from the catalogue: types, choices, defaults, help and what is required", async () => {
    installFakeFetch(routes());
    const { user, dialog } = await openAdd();
    const kind = within(dialog).getByRole("combobox", { name: "Kind" });
    expect(within(kind).getAllByRole("option").map((o) => o.textContent)).toEqual(["ntfy", "Gotify", "Email (SMTP)", "Webhook"]);
    expect(kind).toHaveValue("ntfy");
    expect(within(dialog).getByLabelText("Server")).toHaveValue("https://ntfy.sh");
    expect(within(dialog).getByLabelText("Server")).toHaveAttribute("type", "url");
    expect(within(dialog).getByLabelText("Server")).toHaveAccessibleDescription("Its address, as in the browser (https://...)");
    expect(within(dialog).getByLabelText("Priority")).toHaveValue("default");

    await user.selectOptions(kind, "email");
    expect(within(dialog).queryByLabelText("Topic")).not.toBeInTheDocument();
    const port = within(dialog).getByLabelText("Port");
    expect(port).toHaveAttribute("type", "number");
    expect(port).toHaveValue(587);
    expect(port).toBeRequired();
    const security = within(dialog).getByRole("combobox", { name: "Security" });
    expect(within(security).getAllByRole("option").map((o) => o.textContent)).toEqual(["starttls", "tls", "none"]);
    expect(within(dialog).getByLabelText("User name")).not.toBeRequired();
    expect(within(dialog).getByLabelText("From")).toHaveAttribute("type", "email");
    const to = within(dialog).getByLabelText("To");
    expect(to).toHaveAttribute("multiple");
    expect(to).toHaveAccessibleDescription("One or more, separated by commas");
    const password = within(dialog).getByLabelText("Password");
    expect(password).toHaveAttribute("type", "password");
    expect(password).not.toHaveAttribute("placeholder");
    // Required fields are marked (the mark is not read out: `required` is).
    expect(within(dialog).getByText("SMTP server").parentElement).toHaveTextContent("SMTP server *");
    expect(within(dialog).getByText("User name").parentElement).toHaveTextContent(/^User name$/);

    // What was typed for a kind stays when switching back.
    await user.selectOptions(kind, "ntfy");
    await user.type(within(dialog).getByLabelText("Topic"), "yard");
    await user.selectOptions(kind, "webhook");
    await user.selectOptions(kind, "ntfy");
    expect(within(dialog).getByLabelText("Topic")).toHaveValue("yard");
  });

  it("adds a webhook: the test sends the form's values and shows success, then the service's refusal", async () => {
    let answer = { ok: true, detail: "Sent: the service accepted the test message" };
    const fake = installFakeFetch(
      routes({
        "POST /api/notifications/channels/test": () => json(answer),
        "POST /api/notifications/channels": () => json(makeChannel({ id: 5, name: "hook" }), { status: 201 }),
      }),
    );
    const { user, dialog } = await openAdd();
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Kind" }), "webhook");
    await user.type(within(dialog).getByLabelText("Name"), "hook");
    await user.type(within(dialog).getByLabelText("URL"), "http://127.0.0.1:9000/in");
    const key = within(dialog).getByLabelText("Signing key");
    expect(key).toHaveAttribute("type", "password");
    expect(key).toHaveAccessibleDescription(/X-Stackyard-Signature/);
    await user.type(key, "s3cret");

    await user.click(within(dialog).getByRole("button", { name: "Send test" }));
    const passed = await within(dialog).findByRole("status");
    expect(passed).toHaveTextContent("Test passed: Sent: the service accepted the test message");
    expect(passed).toHaveClass("success");
    expect(await fake.calls("POST", "/api/notifications/channels/test")[0]?.json()).toEqual({
      kind: "webhook",
      name: "hook", // what the test message calls it
      settings: {},
      secrets: { url: "http://127.0.0.1:9000/in", signing_key: "s3cret" },
    });

    answer = { ok: false, detail: "Answered 500: receiver says no" };
    await user.click(within(dialog).getByRole("button", { name: "Send test" }));
    await waitFor(() => expect(within(dialog).getByRole("status")).toHaveTextContent("Test failed: Answered 500: receiver says no"));
    expect(within(dialog).getByRole("status")).toHaveClass("error");

    // A change makes the result stale.
    await user.type(within(dialog).getByLabelText("URL"), "x");
    expect(within(dialog).queryByRole("status")).not.toBeInTheDocument();

    await user.click(within(dialog).getByRole("button", { name: "Add the channel" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await fake.calls("POST", "/api/notifications/channels")[0]?.json()).toEqual({
      name: "hook",
      kind: "webhook",
      settings: {},
      secrets: { url: "http://127.0.0.1:9000/inx", signing_key: "s3cret" },
      enabled: true,
    });
    expect(screen.getByText("Channel hook saved.")).toBeInTheDocument();
  });

  it("shows the server's detail when it refuses the values, to test or to save", async () => {
    installFakeFetch(
      routes({
        "POST /api/notifications/channels/test": () => json({ detail: "URL: an http:// or https:// address" }, { status: 400 }),
        "POST /api/notifications/channels": () =>
          json({ detail: [{ loc: ["body", "name"], msg: "String should have at most 100 characters" }] }, { status: 422 }),
      }),
    );
    const { user, dialog } = await openAdd();
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Kind" }), "webhook");
    await user.type(within(dialog).getByLabelText("Name"), "hook");
    await user.type(within(dialog).getByLabelText("URL"), "http://x");
    await user.click(within(dialog).getByRole("button", { name: "Send test" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("URL: an http:// or https:// address");

    await user.click(within(dialog).getByRole("button", { name: "Add the channel" }));
    await waitFor(() =>
      expect(within(dialog).getAllByRole("alert").at(-1)).toHaveTextContent("name: String should have at most 100 characters"),
    );
    expect(screen.getByRole("dialog", { name: "Add a channel" })).toBeInTheDocument();
  });

  it("edits: stored secrets are never shown, kept when left empty, and an optional one can be removed", async () => {
    const fake = installFakeFetch(routes({ "PATCH /api/notifications/channels/1": hook }));
    const { user, dialog } = await openEdit("ops hook");
    expect(within(dialog).queryByRole("combobox", { name: "Kind" })).not.toBeInTheDocument();
    expect(dialog).toHaveTextContent("Kind: Webhook");
    // The URL holds its token: a stored secret too, never shown.
    expect(within(dialog).getByLabelText("URL")).toHaveValue("");
    expect(within(dialog).getByLabelText("URL")).toHaveAttribute("placeholder", "stored — leave empty to keep");
    expect(within(dialog).queryByRole("checkbox", { name: "Remove the stored url" })).not.toBeInTheDocument();
    const key = within(dialog).getByLabelText("Signing key");
    expect(key).toHaveValue("");
    expect(key).toHaveAttribute("placeholder", "stored — leave empty to keep");
    expect(key).not.toBeRequired();

    await user.type(within(dialog).getByLabelText("URL"), "https://hooks.example.net/v2");
    await user.click(within(dialog).getByRole("checkbox", { name: "Enabled (sends what the rules pick for it)" }));
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    // Secrets left out: kept (the signing key); the URL typed: replaced.
    expect(await fake.calls("PATCH", "/api/notifications/channels/1")[0]?.json()).toEqual({
      name: "ops hook",
      settings: {},
      secrets: { url: "https://hooks.example.net/v2" },
      enabled: false,
    });

    await user.click(screen.getByRole("button", { name: "Edit channel ops hook" }));
    const again = screen.getByRole("dialog", { name: "Edit ops hook" });
    await user.click(within(again).getByRole("checkbox", { name: "Remove the stored signing key" }));
    expect(within(again).getByLabelText("Signing key")).toBeDisabled();
    await user.click(within(again).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(fake.calls("PATCH", "/api/notifications/channels/1")).toHaveLength(2));
    const sent = (await fake.calls("PATCH", "/api/notifications/channels/1")[1]?.json()) as { secrets: unknown };
    expect(sent.secrets).toEqual({ signing_key: "" });
  });

  it("edits: a required stored secret can be replaced, not removed", async () => {
    const gotify = makeChannel({ id: 2, name: "phone", kind: "gotify", settings: { server: "https://gotify.lan" }, secrets_set: ["token"] });
    const fake = installFakeFetch(routes({ "GET /api/notifications/channels": [gotify], "PATCH /api/notifications/channels/2": gotify }));
    const { user, dialog } = await openEdit("phone");
    expect(within(dialog).queryByRole("checkbox", { name: /Remove the stored/ })).not.toBeInTheDocument();
    await user.type(within(dialog).getByLabelText("Application token"), "new-token");
    await user.click(within(dialog).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(fake.calls("PATCH", "/api/notifications/channels/2")).toHaveLength(1));
    const sent = (await fake.calls("PATCH", "/api/notifications/channels/2")[0]?.json()) as { secrets: unknown };
    expect(sent.secrets).toEqual({ token: "new-token" });
  });

  it("edits: the test tries the saved channel until something changes, then the form's values", async () => {
    const fake = installFakeFetch(
      routes({
        "POST /api/notifications/channels/1/test": { ok: true, detail: "Sent: the service accepted the test message" },
        "POST /api/notifications/channels/test": { ok: true, detail: "Sent: the service accepted the test message" },
      }),
    );
    const { user, dialog } = await openEdit("ops hook");
    await user.click(within(dialog).getByRole("button", { name: "Send test" }));
    expect(await within(dialog).findByRole("status")).toHaveTextContent("Test passed");
    expect(fake.calls("POST", "/api/notifications/channels/1/test")).toHaveLength(1);

    await user.type(within(dialog).getByLabelText("URL"), "https://hooks.example.net/v2");
    await user.click(within(dialog).getByRole("button", { name: "Send test" }));
    await waitFor(() => expect(fake.calls("POST", "/api/notifications/channels/test")).toHaveLength(1));
    expect(await fake.calls("POST", "/api/notifications/channels/test")[0]?.json()).toEqual({
      kind: "webhook",
      name: "ops hook",
      settings: {},
      secrets: { url: "https://hooks.example.net/v2" },
      channel_id: 1, // the stored key, never sent back, is the server's to add
    });
    expect(await within(dialog).findByRole("status")).toHaveTextContent("Test passed");
  });
});
