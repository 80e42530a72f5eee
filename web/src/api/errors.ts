/** An error response from the API, carrying the server's `detail` text as message. */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  /** Seconds from a `Retry-After` header (429), when given. */
  readonly retryAfter: number | null;

  constructor(message: string, status: number, body: unknown = undefined, retryAfter: number | null = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

function detailText(detail: unknown): string | null {
  if (typeof detail === "string" && detail.trim()) return detail;
  // FastAPI validation errors: [{"loc": [...], "msg": "...", "type": "..."}]
  if (Array.isArray(detail)) {
    const msgs = (detail as unknown[])
      .map((item) => {
        if (item && typeof item === "object" && "msg" in item && typeof item.msg === "string") {
          const loc =
            "loc" in item && Array.isArray(item.loc) ? (item.loc as unknown[]).filter((p) => p !== "body").join(".") : "";
          return loc ? `${loc}: ${item.msg}` : item.msg;
        }
        return typeof item === "string" ? item : null;
      })
      .filter((m): m is string => Boolean(m));
    if (msgs.length) return msgs.join("; ");
  }
  return null;
}

/** Turns an error response (its parsed body and the Response) into a message for the user. */
export function messageFromErrorBody(body: unknown, response: Pick<Response, "status" | "statusText">): string {
  if (body && typeof body === "object" && "detail" in body) {
    const text = detailText(body.detail);
    if (text) return text;
  }
  if (typeof body === "string" && body.trim() && !body.trimStart().startsWith("<")) return body.trim();
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  return `Request failed (${status})`;
}

function parseRetryAfter(response: Response): number | null {
  const value = response.headers.get("Retry-After");
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.round((date - Date.now()) / 1000));
}

/** Builds the ApiError for a failed response. */
export function apiErrorFrom(body: unknown, response: Response): ApiError {
  return new ApiError(messageFromErrorBody(body, response), response.status, body, parseRetryAfter(response));
}

/** The error for a request that got no answer (the server is down, the network failed). */
export function unreachableError(err: unknown): Error {
  const reason = err instanceof Error ? err.message : String(err);
  return new Error(`Cannot reach the Stackyard server (${reason})`);
}

type FetchResult<T> = { data?: T; error?: unknown; response: Response };

/**
 * Awaits an openapi-fetch call and returns its data, or throws an ApiError whose
 * message is the server's `detail`. Network failures become an Error with a readable message.
 */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw unreachableError(err);
  }
  if (!result.response.ok) throw apiErrorFrom(result.error, result.response);
  return result.data as T;
}

/** A message to show for any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  if (typeof err === "string" && err) return err;
  return "Something went wrong";
}

export function isUnauthorized(err: unknown): boolean {
  return err instanceof ApiError && err.status === 401;
}
