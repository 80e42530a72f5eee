/** Shared by the Files page's tests: a folder, its routes and the helpers to drive the page. */
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { expect } from "vitest";
import type { User } from "../../api/types";
import type { Routes } from "../../test/fakeFetch";
import { FakeXMLHttpRequest, pendingXhr } from "../../test/fakeXhr";
import { makeEntry, makeFolder } from "../../test/fileFixtures";
import { adminUser, signedInAs } from "../../test/fixtures";

export const conf = makeFolder("web/conf", [
  makeEntry({ path: "web/conf/data", type: "dir", mode: "0755" }),
  makeEntry({ path: "web/conf/app.yml", size: 1536 }),
  makeEntry({ path: "web/conf/current", type: "symlink", target: "../shared", link: "dir" }),
]);

export function fileRoutes(extra: Routes = {}, user: User = adminUser): Routes {
  return {
    ...signedInAs(user),
    "GET /api/files": conf,
    "POST /api/files/exists": { existing: [] },
    ...extra,
  };
}

export function query(request: Request | undefined): Record<string, string> {
  return Object.fromEntries(new URL(request?.url ?? "http://x/").searchParams);
}

export function rowOf(name: string): HTMLElement {
  const table = screen.getByRole("table", { name: "Files" });
  const row = within(table)
    .getAllByRole("row")
    .find((r) => within(r).queryByText(name, { exact: true }));
  if (!row) throw new Error(`no row for ${name}`);
  return row;
}

export function filesInput(): HTMLInputElement {
  return screen.getByTestId("upload-files-input");
}

export function folderInput(): HTMLInputElement {
  return screen.getByTestId("upload-folder-input");
}

/** What a picker does: sets the input's files and fires change. */
export function pick(input: HTMLInputElement, files: File[]) {
  Object.defineProperty(input, "files", { value: files, configurable: true });
  fireEvent.change(input);
}

export function instances(): FakeXMLHttpRequest[] {
  return FakeXMLHttpRequest.instances;
}

/** Waits for the `count`-th upload request and returns it (still unanswered). */
export async function nextXhr(count: number): Promise<FakeXMLHttpRequest> {
  await waitFor(() => expect(instances()).toHaveLength(count));
  const xhr = pendingXhr();
  if (!xhr) throw new Error("no pending upload");
  return xhr;
}
