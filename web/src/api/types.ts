import type { paths } from "./schema";

type JsonContent<T> = T extends { content: { "application/json": infer B } } ? B : never;

type SuccessResponse<Op> = Op extends { responses: infer R }
  ? 200 extends keyof R
    ? R[200]
    : 201 extends keyof R
      ? R[201]
      : never
  : never;

/** The JSON body of the success response of `METHOD path`, from the generated schema. */
export type ResponseBody<P extends keyof paths, M extends keyof paths[P]> = JsonContent<SuccessResponse<paths[P][M]>>;

/** The JSON request body of `METHOD path`, from the generated schema. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: infer RB;
}
  ? JsonContent<NonNullable<RB>>
  : never;

export type User = ResponseBody<"/api/auth/me", "get">;
export type Role = User["role"];
export type Health = ResponseBody<"/api/health", "get">;
export type SystemInfo = ResponseBody<"/api/system/info", "get">;
export type AuditPage = ResponseBody<"/api/audit", "get">;
export type AuditEntry = AuditPage["items"][number];
export type UserRow = ResponseBody<"/api/users", "get">[number];
export type NewUser = RequestBody<"/api/users", "post">;
export type ApiToken = ResponseBody<"/api/auth/tokens", "get">[number];
export type CreatedToken = ResponseBody<"/api/auth/tokens", "post">;
