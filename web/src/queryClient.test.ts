import { describe, expect, it } from "vitest";
import { ApiError } from "./api/errors";
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
