import { MutationObserver, QueryObserver } from "@tanstack/react-query";
import { waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ApiError } from "./api/errors";
import { auditQueryOptions } from "./features/settings/queries";
import { createQueryClient } from "./queryClient";

async function callsUntilFailure(error: Error): Promise<number> {
  const client = createQueryClient();
  let calls = 0;
  await expect(
    client.fetchQuery({
      queryKey: ["x", error.message],
      queryFn: () => {
        calls += 1;
        throw error;
      },
      retryDelay: 0,
    }),
  ).rejects.toBe(error);
  return calls;
}

describe("query retries", () => {
  it("shows an answer at once, an offline agent's 502 as a 404: asking again gives the same words later", async () => {
    expect(await callsUntilFailure(new ApiError("Agent 'nas' is unreachable", 502))).toBe(1);
    expect(await callsUntilFailure(new ApiError("No such stack", 404))).toBe(1);
  });

  it("tries a request that got no answer once more", async () => {
    expect(await callsUntilFailure(new Error("Cannot reach the Stackyard server (Failed to fetch)"))).toBe(2);
  });
});

describe("the audit log after a mutation", () => {
  /** A client whose first audit page was read (as the settings page reads it), and how often. */
  function withAuditRead() {
    const client = createQueryClient({ retry: false });
    let reads = 0;
    const options = {
      ...auditQueryOptions(),
      queryFn: () => {
        reads += 1;
        return Promise.resolve({ items: [], total: reads });
      },
    };
    return { client, options, reads: () => reads };
  }

  it("is read again while shown after any mutation that succeeded, none of which names it", async () => {
    const { client, options, reads } = withAuditRead();
    const shown = new QueryObserver(client, options).subscribe(() => undefined);
    await waitFor(() => expect(reads()).toBe(1));

    await new MutationObserver(client, { mutationFn: () => Promise.resolve("saved") }).mutate();

    await waitFor(() => expect(reads()).toBe(2));
    shown();
  });

  it("is marked stale after a refused mutation too: the server audits a refusal as a failure", async () => {
    const { client, options } = withAuditRead();
    await client.fetchQuery(options);
    expect(client.getQueryState(options.queryKey)?.isInvalidated).toBe(false);

    const refusal = new ApiError("The last admin cannot be demoted or disabled", 409);
    const refused = new MutationObserver(client, { mutationFn: () => Promise.reject(refusal) }).mutate();
    await expect(refused).rejects.toBe(refusal);

    expect(client.getQueryState(options.queryKey)?.isInvalidated).toBe(true);
  });
});
