// The errors of the fact API, as the service answers them.

import type { components } from "./openapi.js";

/** Problem is the problem+json body (RFC 9457) of an error of the fact API. */
export type Problem = components["schemas"]["Problem"];

/**
 * UserMemoryError is an answer of the fact API that is not a success: the
 * service's problem+json (status, code, userMessage), or API Gateway's own
 * {"message": …} before any function ran (code undefined then).
 */
export class UserMemoryError extends Error {
  /** status is the HTTP status. */
  readonly status: number;
  /** code is the service's numeric code (docs/errors.md), undefined for an answer of API Gateway itself. */
  readonly code: number | undefined;
  /** userMessage is a message to show to the person, where the service gives one. */
  readonly userMessage: string | undefined;
  /** retryAfterSeconds is the Retry-After of a 503: wait that long (with jitter) and try again. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, detail: string, code?: number, userMessage?: string, retryAfterSeconds?: number) {
    super(`usermemory: ${status} ${detail}` + (code === undefined ? "" : ` (code ${code})`));
    this.name = "UserMemoryError";
    this.status = status;
    this.code = code;
    this.userMessage = userMessage;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** fromResponse reads the error of an answer that is not a success. */
  static async fromResponse(res: Response): Promise<UserMemoryError> {
    const retry = Number(res.headers.get("retry-after") ?? NaN);
    const retryAfter = Number.isFinite(retry) ? retry : undefined;
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return new UserMemoryError(res.status, res.statusText || "not a problem+json answer", undefined, undefined, retryAfter);
    }
    if (isProblem(body)) {
      return new UserMemoryError(res.status, body.detail || body.title, body.code, body.userMessage, retryAfter);
    }
    const message = (body as { message?: unknown } | null)?.message;
    return new UserMemoryError(res.status, typeof message === "string" ? message : res.statusText, undefined, undefined, retryAfter);
  }
}

function isProblem(body: unknown): body is Problem {
  const p = body as Partial<Problem> | null;
  return typeof p === "object" && p !== null && typeof p.code === "number" && typeof p.status === "number";
}
