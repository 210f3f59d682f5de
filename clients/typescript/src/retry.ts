// The retry policy: exponential backoff with full jitter, Retry-After
// honoured, bounded in attempts and in total time, and a caller's
// AbortSignal on every wait and attempt.

import { UserMemoryError } from "./errors.js";
import { ProducerError } from "./producer.js";

/** RetryOptions bound the retries of one call; every field has a default ([DEFAULT_RETRY]). */
export interface RetryOptions {
  /** The most attempts of one call, the first included; 1 switches retries off. */
  maxAttempts?: number;
  /** The backoff before the second attempt; it doubles each time, up to maxDelayMs, and a random part of it is waited (full jitter). */
  baseDelayMs?: number;
  /** The longest wait between two attempts when the service gave no Retry-After. */
  maxDelayMs?: number;
  /** The most one call may take, attempts and waits together: a wait that would end past it is not started. */
  totalMs?: number;
  /** The most one attempt may take. */
  attemptTimeoutMs?: number;
}

/** DEFAULT_RETRY is the policy of a client configured without one. */
export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 4000,
  totalMs: 12_000,
  attemptTimeoutMs: 5000,
};

/** Statuses of the fact API worth another attempt: throttled, or a gateway or the service unavailable for a while. */
const retryStatuses: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Names of AWS SDK errors that mean throttling or a passing failure of SQS. */
const retryNames: ReadonlySet<string> = new Set([
  "RequestThrottled", "ThrottlingException", "Throttling", "ServiceUnavailable", "InternalFailure", "InternalError",
  "TimeoutError", "RequestTimeout", "RequestTimeoutException",
]);

/** Network error codes of Node's fetch and HTTP clients that a new attempt may not meet. */
const retryCodes: ReadonlySet<string> = new Set([
  "ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT",
]);

/** Retry is the decision about one failed attempt: whether to try again, and the server's wait, if it asked for one. */
export interface Retry {
  retry: boolean;
  retryAfterMs?: number;
}

/**
 * classify says whether err, the error of one attempt, is worth another:
 * a UserMemoryError 429, 502, 503 or 504 (with its Retry-After); a
 * network error of fetch; an attempt that timed out; a ProducerError
 * timeout; an SQS error that the SDK marks retryable, a throttling or a
 * 5xx. Anything else, the caller's abort included, is final.
 */
export function classify(err: unknown): Retry {
  if ((err as { retryNow?: unknown } | null)?.retryNow === true) {
    return { retry: true, retryAfterMs: 0 };
  }
  if (err instanceof UserMemoryError) {
    const retryAfterMs = err.retryAfterSeconds === undefined ? undefined : err.retryAfterSeconds * 1000;
    return { retry: retryStatuses.has(err.status), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }
  if (err instanceof ProducerError) {
    return { retry: err.reason === "timeout" };
  }
  if (!(err instanceof Error)) {
    return { retry: false };
  }
  if (err.name === "AttemptTimeout") {
    return { retry: true };
  }
  const e = err as Error & { code?: unknown; cause?: unknown; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  if (e.$retryable || retryNames.has(e.name)) {
    return { retry: true };
  }
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) {
    return { retry: status === 429 || status >= 500 };
  }
  // fetch fails with a TypeError whose cause is the network error.
  const cause = e.cause as { code?: unknown } | undefined;
  const code = typeof e.code === "string" ? e.code : typeof cause?.code === "string" ? cause.code : undefined;
  return { retry: (err.name === "TypeError" && err.message === "fetch failed") || (code !== undefined && retryCodes.has(code)) };
}

/** AttemptTimeout is the error of one attempt that did not end within its time. */
export class AttemptTimeout extends Error {
  constructor(ms: number, cause?: unknown) {
    super(`usermemory: no answer within ${ms} ms`, { cause });
    this.name = "AttemptTimeout";
  }
}

/** sleep waits ms milliseconds, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/** Attempt is one try of a call: its signal ends at the attempt's timeout or at the caller's abort. */
export type Attempt<T> = (signal: AbortSignal, attempt: number) => Promise<T>;

/**
 * withRetry runs attempt until it succeeds, its error is final, the
 * attempts run out or the next wait would end past totalMs; it then
 * throws the last error. Each wait is a random time up to the backoff
 * (full jitter), or the server's Retry-After plus up to one base delay of
 * jitter. signal aborts the attempt and the wait: the call then rejects
 * with the signal's reason.
 */
export async function withRetry<T>(policy: Required<RetryOptions>, attempt: Attempt<T>, signal?: AbortSignal, random = Math.random): Promise<T> {
  const deadline = Date.now() + policy.totalMs;
  for (let n = 1; ; n++) {
    signal?.throwIfAborted();
    const left = deadline - Date.now();
    const limit = Math.max(1, Math.min(policy.attemptTimeoutMs, left));
    const timeout = AbortSignal.timeout(limit);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      return await attempt(both, n);
    } catch (err) {
      if (signal?.aborted) {
        throw signal.reason;
      }
      const final = timeout.aborted ? new AttemptTimeout(limit, err) : err;
      const c = classify(final);
      if (!c.retry || n >= policy.maxAttempts) {
        throw final;
      }
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
      const wait = c.retryAfterMs !== undefined ? c.retryAfterMs + random() * policy.baseDelayMs : random() * backoff;
      if (Date.now() + wait >= deadline) {
        throw final;
      }
      await sleep(wait, signal);
    }
  }
}
