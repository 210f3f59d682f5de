// UserMemoryStoreClient: IUserMemoryStore over the usermemory service.

import type { SQSClient } from "@aws-sdk/client-sqs";
import { isDate } from "./dates.js";
import { checkDueConfig, isExtractDue, type DueConfig } from "./due.js";
import { UserMemoryError } from "./errors.js";
import type { MessageInput } from "./message.js";
import type { components } from "./openapi.js";
import { Producer, type ProducerOptions } from "./producer.js";
import { DEFAULT_RETRY, withRetry, type RetryOptions } from "./retry.js";
import { TokenCache, type Operation, type Scope, type TokenProvider } from "./tokens.js";
import { toTurns, type GatewayTurn } from "./turns.js";

export type { Operation, Scope, Token, TokenProvider } from "./tokens.js";

/**
 * Fact is one stored fact, as the fact API returns it (IUserMemoryFact),
 * with its origin (how it came to be stored: the values are the OpenAPI
 * document's, Fact's origin) and, for a fact
 * learned from a thread, sourceThreadId, sourceThreadTitle, evidence
 * (the user's own words it rests on) and saidAt (when the user said
 * them; updatedAt later than it is when the fact was kept or changed);
 * validUntil is the last day of a
 * temporary fact, category a special category (GDPR Art. 9).
 */
export type Fact = components["schemas"]["Fact"];

/**
 * PreviousValue is a value a fact held before a change replaced it (a
 * Fact's history, newest first): when, and the change's origin, thread,
 * title and evidence.
 */
export type PreviousValue = components["schemas"]["PreviousValue"];

/**
 * PendingFact is an extracted fact of a special category that waits for
 * the user's yes (keepPending) or no (discardPending), in no prompt until
 * kept, and dropped at pendingUntil if nobody answers.
 */
export type PendingFact = components["schemas"]["PendingFact"];

/**
 * Memory is what a user's page shows: the facts (the prompt's), the
 * pending facts (no prompt's) and the caps.
 */
export type Memory = components["schemas"]["Facts"];

/**
 * WriteOrigin says how a fact set through upsertFact came to be: "manual"
 * (by hand, the default) or "remember_tool" (a remember tool call the
 * user approved). "conversation" is the extractor's alone.
 */
export type WriteOrigin = components["schemas"]["ValueBody"]["origin"];

/** Erasure is the answer of an erasure: the facts removed, and until when backups and queued messages may still hold the user. */
export type Erasure = components["schemas"]["Erased"];

/**
 * ForgottenThread is the answer of forgetThread: the facts one
 * conversation taught, forgotten, its pending facts discarded, and
 * forgottenAt, the thread's fence (a message of the thread sent at or
 * before it writes nothing).
 */
export type ForgottenThread = components["schemas"]["ForgottenThread"];

/**
 * ThreadChanges is the answer of threadChanges: the facts one
 * conversation's extractions set after a time, sorted by key, each with
 * previous, the value it replaced, when it replaced one ("Memory updated:
 * home city → Porto"), or previousUnknown when that value is no longer kept
 * (then offer no Undo: it is refused, 409).
 */
export type ThreadChanges = components["schemas"]["Changes"];

/** Change is one change of ThreadChanges. */
export type Change = components["schemas"]["Change"];

/**
 * Undone is the answer of undoChange: restored, the value set back as
 * the fact held it, or removed, the thread's new fact removed; neither when nothing
 * of the thread's was there to undo.
 */
export type Undone = components["schemas"]["Undone"];

/** Export is everything the service holds about one user (GDPR access and portability). */
export type Export = components["schemas"]["Export"];

/**
 * ImportView is where an import stands: "queued" until the extractor read
 * it, then "done" (its facts wait for the user's review), "failed" or
 * "refused" with a reason ("tenant_budget", "daily_imports",
 * "bad_answer", "model_failed"); leftOut counts what it found and did not
 * propose, by reason.
 */
export type ImportView = components["schemas"]["ImportView"];

/** ImportLeftOut counts what an import found and did not propose, by reason. */
export type ImportLeftOut = ImportView["leftOut"];

/**
 * ImportReview is the answer of getImport: the import, the user's pending
 * facts it proposed (origin "imported", sourceThreadId the import's ID,
 * sourceThreadTitle the source) and, for those keys that hold a stored
 * fact, its value: keeping the pending fact replaces it.
 */
export type ImportReview = components["schemas"]["ImportStatus"];

/**
 * MemoryErrorReport is what onError is told: the operation that failed,
 * for whom, the error (after the retries), and what the client did
 * instead: "last-known" (getFacts answered from its last-known copy),
 * "empty" (getFacts answered []), or "thrown" (the error goes on to the
 * caller, as for a message extract could not queue).
 */
export interface MemoryErrorReport extends Scope {
  operation: Operation;
  error: unknown;
  served: "last-known" | "empty" | "thrown";
}

/** INVALID_VALID_UNTIL is the service's code for an end date it refuses (CodeInvalidValidUntil, docs/errors.md). */
const INVALID_VALID_UNTIL = 5380000000112;

/** ClientOptions configure a [UserMemoryStoreClient]. */
export interface ClientOptions extends DueConfig {
  /** apiUrl is the fact API's base URL (the stack's ApiUrl output). */
  apiUrl: string;
  /** tokens gives the token of each call; its answers are kept per tenant, user and scope until shortly before they expire. */
  tokens: TokenProvider;
  /** sqs and queueUrl are the extraction queue; without them extract throws. */
  sqs?: Pick<SQSClient, "send">;
  queueUrl?: string;
  /** producer sets the size and transcript limits of the extractor the queue feeds. */
  producer?: ProducerOptions;
  /** fetch replaces the global fetch (a proxy, a test). */
  fetch?: typeof fetch;
  /** retry bounds the retries of every call, HTTP and SQS ([DEFAULT_RETRY]). */
  retry?: RetryOptions;
  /** timeoutMs bounds one HTTP attempt: retry.attemptTimeoutMs, kept for compatibility. */
  timeoutMs?: number;
  /**
   * strict makes getFacts throw when the service cannot answer, instead of
   * answering from the last-known copy or with [] and reporting the error
   * to onError (the default, so that the gateway's answer goes out).
   */
  strict?: boolean;
  /** lastKnownMs is how long a user's last-read facts may stand in for the service's answer. */
  lastKnownMs?: number;
  /** onError is told of every error getFacts answered around and every failed extract. Default: console.warn. */
  onError?: (report: MemoryErrorReport) => void;
  /**
   * forwardCheapModelId sends extract's cheapModelId to the extractor,
   * which then calls that model instead of its own. Off by default: the
   * reference's gateway passes its own cheap model, which the service
   * refuses unless its ALLOWED_MODEL_IDS (and IAM policy) name it, so that
   * nothing would be learned.
   */
  forwardCheapModelId?: boolean;
  /** tokenRefreshBeforeMs: a kept token is asked for again this long before it expires. */
  tokenRefreshBeforeMs?: number;
}

/** DEFAULT_LAST_KNOWN_MS is how long a user's last-read facts stand in for an unavailable service. */
/** IMPORT_OPERATIONS are the calls of an import: the user's own, with no admin route. */
const IMPORT_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>(["importMemory", "getImport", "keepImport", "discardImport"]);

export const DEFAULT_LAST_KNOWN_MS = 5 * 60_000;

/** DEFAULT_TOKEN_REFRESH_BEFORE_MS is how long before its expiry a kept token is asked for again. */
export const DEFAULT_TOKEN_REFRESH_BEFORE_MS = 60_000;

/** MAX_CACHED is the most users whose tokens and last-known facts one client keeps; the oldest go first. */
const MAX_CACHED = 10_000;

/** Signal is the optional AbortSignal every method takes with its arguments. */
export interface Signal {
  /** signal aborts the call: its attempts and its waits; it then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * ExtractArgs are the arguments of extract: those of the reference's
 * IUserMemoryStore.extract (tenantId, userId, threadId, turns,
 * cheapModelId, meta), and optionally the thread's turn counts, its title
 * and context turns.
 */
export interface ExtractArgs extends Scope, Signal {
  threadId: string;
  /**
   * The thread's title as a person knows it, at most 60 characters: kept
   * with the facts the extraction sets (sourceThreadTitle) and shown
   * instead of the thread's ID. Optional.
   */
  threadTitle?: string;
  /** The turns since the last extraction, oldest first, as the gateway keeps them ([GatewayTurn]). */
  turns: readonly GatewayTurn[];
  /**
   * The thread's turn count before the call that just ended, and now
   * (those isExtractDue was given): both or neither. With them the
   * extractor decides again whether the message is due and keeps the
   * count as the thread's watermark; without them the message is due and
   * its watermark is the digest of its turns, so the same turns sent
   * again are not extracted twice.
   */
  previousTurnCount?: number;
  turnCount?: number;
  /** The turns before turns, already read: context for the model. */
  contextTurns?: readonly GatewayTurn[];
  /**
   * The gateway's cheap model: sent, for the extractor to use instead of
   * its own, only with the client's forwardCheapModelId option (it must
   * be a Bedrock model ID the service allows). Otherwise ignored.
   */
  cheapModelId?: string;
  /** The gateway's call meta, of any type: requestId and traceId are sent when they are strings, nothing else is read. */
  meta?: object;
}

/**
 * UpsertArgs are the arguments of upsertFact: the fact, how it came to be
 * set (default "manual"), and for a temporary fact its last day,
 * "YYYY-MM-DD" (UTC), from today to 366 days ahead.
 */
export interface UpsertArgs extends Scope, Signal {
  key: string;
  value: string;
  origin?: WriteOrigin;
  validUntil?: string;
}

/** KeyArgs name one key of one user. */
export interface KeyArgs extends Scope, Signal {
  key: string;
}

/** ThreadArgs name one thread of one user. */
export interface ThreadArgs extends Scope, Signal {
  threadId: string;
}

/** ThreadChangesArgs name one thread of one user and, optionally, the time after which its changes are listed. */
export interface ThreadChangesArgs extends ThreadArgs {
  /** since: only the changes set after it (a Date, or an RFC 3339 string); all of them when absent. */
  since?: Date | string;
}

/** ThreadKeyArgs name one fact a thread set, of one user. */
export interface ThreadKeyArgs extends ThreadArgs {
  key: string;
}

/** ScopeArgs name one user. */
export interface ScopeArgs extends Scope, Signal {}

/**
 * ImportArgs name the source of a memory list pasted from another
 * assistant ("ChatGPT") and exactly one of its text and its statements.
 */
export type ImportArgs = ScopeArgs & { source: string } & ({ text: string; statements?: never } | { statements: string[]; text?: never });

/** ImportIdArgs name one import of the user. */
export interface ImportIdArgs extends ScopeArgs {
  importId: string;
}

/**
 * IUserMemoryStore is the store interface of the behaviour reference's
 * gateway, as this package implements it (reference/IUserMemoryStore.ts
 * is the reference's own declaration, which the client is tested against).
 */
export interface IUserMemoryStore {
  getFacts(args: ScopeArgs): Promise<Fact[]>;
  upsertFact(args: UpsertArgs): Promise<void>;
  removeFact(args: KeyArgs): Promise<void>;
  clear(args: ScopeArgs): Promise<void>;
  deleteByUser(args: ScopeArgs): Promise<number>;
  isExtractDue(args: { previousTurnCount: number; turnCount: number }): boolean;
  extract(args: ExtractArgs): Promise<Fact[]>;
}

/** a string member of meta, or undefined. */
function metaString(meta: object | undefined, name: "requestId" | "traceId"): string | undefined {
  const v = (meta as Record<string, unknown> | undefined)?.[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * UserMemoryStoreClient is an IUserMemoryStore over the usermemory
 * service: the facts through its HTTP API, the extraction through its
 * queue. A host passes it as overrides.userMemoryStore. Every call is
 * retried by its retry policy and takes an AbortSignal.
 */
export class UserMemoryStoreClient implements IUserMemoryStore {
  readonly #opts: ClientOptions;
  readonly #producer: Producer | undefined;
  readonly #fetch: typeof fetch;
  readonly #retry: Required<RetryOptions>;
  readonly #tokens: TokenCache;
  readonly #lastKnown = new Map<string, { facts: Fact[]; at: number }>();

  /** Throws a RangeError for an extractEveryTurns the service would refuse. */
  constructor(opts: ClientOptions) {
    checkDueConfig(opts);
    this.#opts = { ...opts, apiUrl: opts.apiUrl.replace(/\/+$/, "") };
    this.#producer = opts.queueUrl ? new Producer(opts.sqs, opts.queueUrl, opts.producer) : undefined;
    this.#fetch = opts.fetch ?? fetch;
    this.#retry = { ...DEFAULT_RETRY, ...(opts.timeoutMs === undefined ? {} : { attemptTimeoutMs: opts.timeoutMs }), ...opts.retry };
    this.#tokens = new TokenCache(opts.tokens, {
      refreshBeforeMs: opts.tokenRefreshBeforeMs ?? DEFAULT_TOKEN_REFRESH_BEFORE_MS,
      maxEntries: MAX_CACHED,
    });
  }

  /**
   * getFacts returns the user's facts, sorted by key; [] for a user without
   * any. These are the facts for a prompt: pending facts are not among
   * them (getMemory returns those too). When the service cannot answer
   * (after the retries), it answers with the user's last-known facts if
   * they were read within lastKnownMs, or [], and reports the error to
   * onError; with strict, it throws. An abort always throws.
   */
  async getFacts(args: ScopeArgs): Promise<Fact[]> {
    try {
      return (await this.#memory(args, "getFacts")).facts;
    } catch (err) {
      if (this.#opts.strict || args.signal?.aborted) {
        throw err;
      }
      const known = this.#lastKnown.get(this.#key(args));
      const fresh = known !== undefined && Date.now() - known.at <= (this.#opts.lastKnownMs ?? DEFAULT_LAST_KNOWN_MS);
      this.#report({ tenantId: args.tenantId, userId: args.userId, operation: "getFacts", error: err, served: fresh ? "last-known" : "empty" });
      return fresh ? known.facts.map((f) => ({ ...f })) : [];
    }
  }

  /**
   * getMemory returns, in one read, what a user's page shows: the facts,
   * the pending facts that wait for the user's answer (sorted by key,
   * always present), and the caps. It throws when the service cannot answer.
   */
  async getMemory(args: ScopeArgs): Promise<Memory> {
    return this.#memory(args, "getFacts");
  }

  /** memory reads the user's facts and pending facts for operation, and keeps the facts as the last-known copy. */
  async #memory(sc: ScopeArgs, operation: Operation): Promise<Memory> {
    const m = await this.#call<Memory>(operation, "GET", sc, "/facts");
    this.#remember(sc, m.facts);
    return m;
  }

  /**
   * keepPending is the user's yes to a pending fact: it moves to the facts,
   * in every prompt from then on, and is returned. A 404 UserMemoryError
   * (code 5380000000111) when nothing waits under the key. It needs the
   * user's own token: nobody consents for the user.
   */
  async keepPending(args: KeyArgs): Promise<Fact> {
    this.#forget(args);
    return (await this.#call<{ fact: Fact }>("keepPending", "POST", args, "/pending/" + encodeURIComponent(args.key) + "/keep")).fact;
  }

  /** discardPending is the user's no to a pending fact: it goes; nothing waiting under the key is not an error. It needs the user's own token. */
  async discardPending(args: KeyArgs): Promise<void> {
    await this.#call("discardPending", "DELETE", args, "/pending/" + encodeURIComponent(args.key));
  }

  /**
   * upsertFact sets one fact, by hand or, with origin "remember_tool", for
   * a remember tool call the user approved, until validUntil if given; a
   * 400 UserMemoryError for an empty key or value (code 5372597957094), one
   * over maxFactChars (5377210486159, with a userMessage), another origin
   * (5380000000110), an end date out of range (5380000000112) or a value
   * that looks like a secret (5380000000113, with a userMessage). A
   * validUntil that is not a date alone, "YYYY-MM-DD" (a time, another
   * shape, ""), is refused before anything is sent: a 400 UserMemoryError
   * with code 5380000000112, as the service would answer.
   */
  async upsertFact(args: UpsertArgs): Promise<void> {
    if (args.validUntil !== undefined && !isDate(args.validUntil)) {
      throw new UserMemoryError(400, `validUntil ${JSON.stringify(args.validUntil.slice(0, 32))} is not a date "YYYY-MM-DD"`, INVALID_VALID_UNTIL);
    }
    const body: { value: string; origin?: WriteOrigin; validUntil?: string } = { value: args.value };
    if (args.origin !== undefined) body.origin = args.origin;
    if (args.validUntil !== undefined) body.validUntil = args.validUntil;
    this.#forget(args);
    await this.#call("upsertFact", "PUT", args, "/facts/" + encodeURIComponent(args.key), body);
  }

  /** removeFact forgets one fact; a key that is not there is not an error. */
  async removeFact(args: KeyArgs): Promise<void> {
    this.#forget(args);
    await this.#call("removeFact", "DELETE", args, "/facts/" + encodeURIComponent(args.key));
  }

  /** clear forgets every fact of the user; the record stays. */
  async clear(args: ScopeArgs): Promise<void> {
    this.#forget(args);
    await this.#call("clear", "DELETE", args, "/facts");
  }

  /**
   * forgetThread forgets what one conversation taught the user: every fact
   * learned in the thread (none set by hand, none a later thread
   * confirmed) and its pending facts, and answers with them. No message
   * of the thread sent before it brings any of it back. A gateway calls it
   * when a chat is deleted.
   */
  async forgetThread(args: ThreadArgs): Promise<ForgottenThread> {
    this.#forget(args);
    return this.#call<ForgottenThread>("forgetThread", "DELETE", args, "/threads/" + encodeURIComponent(args.threadId) + "/facts");
  }

  /**
   * threadChanges lists what one conversation's extractions set after
   * since (all of them without it), one read: a gateway asks it with the
   * time it sent an extraction message to say "Memory updated". A since
   * that is not an RFC 3339 time is a 400 UserMemoryError (code
   * 5380000000214).
   */
  async threadChanges(args: ThreadChangesArgs): Promise<ThreadChanges> {
    let query = "";
    if (args.since !== undefined) {
      query = "?since=" + encodeURIComponent(args.since instanceof Date ? args.since.toISOString() : args.since);
    }
    return this.#call<ThreadChanges>("threadChanges", "GET", args, "/threads/" + encodeURIComponent(args.threadId) + "/changes" + query);
  }

  /**
   * undoChange is the user's Undo after "Memory updated": the thread's
   * setting of key undone (the fact restored as it was, or the new fact
   * removed), and no extraction message requested before it sets the key
   * again. A fact the thread did not set, or that changed since, is left
   * as it is; a change whose earlier value is no longer kept is refused
   * (409, code 5380000000118), never a removal.
   */
  async undoChange(args: ThreadKeyArgs): Promise<Undone> {
    this.#forget(args);
    return this.#call<Undone>("undoChange", "POST", args,
      "/threads/" + encodeURIComponent(args.threadId) + "/changes/" + encodeURIComponent(args.key) + "/undo");
  }

  /**
   * importMemory asks the service to read a memory list the user pasted
   * from another assistant (POST /v1/me/imports): it answers at once with
   * the import, "queued"; follow it with getImport. Nothing imported is
   * kept before the user says yes. A text over the service's limit is a
   * 413 UserMemoryError (code 5380000000115), no source or neither or both
   * of text and statements a 400 (5380000000114), a sixth import in 24
   * hours a 429 (5380000000117). It needs the user's own token: it is the
   * user's consent.
   */
  async importMemory(args: ImportArgs): Promise<ImportView> {
    const body = args.statements !== undefined ? { source: args.source, statements: args.statements } : { source: args.source, text: args.text };
    return (await this.#call<{ import: ImportView }>("importMemory", "POST", args, "/imports", body)).import;
  }

  /**
   * getImport returns where an import stands and the pending facts it
   * proposed, with the stored values they would replace. An unknown
   * import is a 404 UserMemoryError (code 5380000000116).
   */
  async getImport(args: ImportIdArgs): Promise<ImportReview> {
    return this.#call<ImportReview>("getImport", "GET", args, "/imports/" + encodeURIComponent(args.importId));
  }

  /** keepImport is the user's yes to every fact the import proposed that still waits; it returns the kept facts. */
  async keepImport(args: ImportIdArgs): Promise<Fact[]> {
    this.#forget(args);
    return (await this.#call<{ kept: Fact[] }>("keepImport", "POST", args, "/imports/" + encodeURIComponent(args.importId) + "/keep")).kept;
  }

  /**
   * discardImport is the user's no to every fact the import proposed that
   * still waits; a later import of the same list does not propose them
   * again. It returns how many it discarded.
   */
  async discardImport(args: ImportIdArgs): Promise<number> {
    return (await this.#call<{ discarded: number }>("discardImport", "DELETE", args, "/imports/" + encodeURIComponent(args.importId) + "/pending")).discarded;
  }

  /** deleteByUser erases the user (GDPR) and returns the number of facts removed: eraseUser's removedFacts. It needs an admin token. */
  async deleteByUser(args: ScopeArgs): Promise<number> {
    return (await this.eraseUser(args)).removedFacts;
  }

  /**
   * eraseUser erases the user (GDPR) and returns the service's whole
   * answer: removedFacts, erasedAt, and backupsUntil and
   * queuedMessagesUntil, until when a backup or a message queued before
   * may still hold the user. It needs an admin token (operation
   * "deleteByUser"). The user's last-known facts are dropped first.
   */
  async eraseUser(args: ScopeArgs): Promise<Erasure> {
    this.#forget(args);
    return this.#call<Erasure>("deleteByUser", "DELETE", args, "");
  }

  /** exportData returns everything the service holds about the user: facts, pending facts, forgotten keys, thread watermarks. */
  async exportData(args: ScopeArgs): Promise<Export> {
    return this.#call<Export>("exportData", "GET", args, "/export");
  }

  /** isExtractDue is memory.Store.IsExtractDue with the configured beat. Pure. */
  isExtractDue(args: { previousTurnCount: number; turnCount: number }): boolean {
    return isExtractDue(this.#opts, args.previousTurnCount, args.turnCount);
  }

  /**
   * extract queues the extraction message for the turns and returns the
   * facts known now (as getFacts answers them): the extractor learns from
   * the turns a moment later, so the new facts come with a later getFacts.
   * The turns are read as gateways shape them ([GatewayTurn]); with no
   * turn left to send (only system turns, or none), nothing is queued.
   * Sending is retried (the FIFO queue drops a copy of the same message);
   * a message that could not be queued is reported to onError and thrown:
   * a ProducerError (invalid, too_large, timeout) or the SQS client's error.
   */
  async extract(args: ExtractArgs): Promise<Fact[]> {
    if (!this.#producer) {
      throw new Error("usermemory: extract needs the queueUrl and sqs options");
    }
    const producer = this.#producer;
    try {
      const turns = toTurns("/turns", args.turns);
      if (turns.length > 0) {
        const requestId = metaString(args.meta, "requestId");
        const traceId = metaString(args.meta, "traceId");
        const { signal: _signal, meta: _meta, cheapModelId, ...rest } = args;
        const m: MessageInput = {
          ...rest, turns, contextTurns: toTurns("/contextTurns", args.contextTurns),
          ...(this.#opts.forwardCheapModelId && cheapModelId ? { cheapModelId } : {}),
          meta: requestId || traceId ? { requestId, traceId } : undefined,
        };
        producer.build(m); // an invalid message throws here, before any retry
        await withRetry(this.#retry, (signal) => producer.send(m, signal), args.signal);
      }
    } catch (err) {
      if (!args.signal?.aborted) {
        this.#report({ tenantId: args.tenantId, userId: args.userId, operation: "extract", error: err, served: "thrown" });
      }
      throw err;
    }
    return this.getFacts({ tenantId: args.tenantId, userId: args.userId, ...(args.signal ? { signal: args.signal } : {}) });
  }

  #key(sc: Scope): string {
    return sc.tenantId + "\u0000" + sc.userId;
  }

  #remember(sc: Scope, facts: Fact[]): void {
    const key = this.#key(sc);
    this.#lastKnown.delete(key);
    this.#lastKnown.set(key, { facts: facts.map((f) => ({ ...f })), at: Date.now() });
    for (const k of this.#lastKnown.keys()) {
      if (this.#lastKnown.size <= MAX_CACHED) break;
      this.#lastKnown.delete(k);
    }
  }

  /** forget drops the user's last-known facts: a write makes them stale. */
  #forget(sc: Scope): void {
    this.#lastKnown.delete(this.#key(sc));
  }

  #report(r: MemoryErrorReport): void {
    const onError = this.#opts.onError ?? ((x: MemoryErrorReport) => console.warn(`usermemory: ${x.operation} failed (${x.served}):`, x.error));
    try {
      onError(r);
    } catch {
      // A reporter's own failure must not change the answer.
    }
  }

  /**
   * call sends one request of the fact API for sc and operation, retried
   * by the policy, and returns the JSON of its successful answer (undefined
   * for a 204), or throws a UserMemoryError. A 401 drops the kept token
   * and asks the provider again once.
   */
  async #call<T>(operation: Operation, method: string, sc: ScopeArgs, path: string, body?: unknown): Promise<T> {
    let refreshed = false;
    return withRetry(this.#retry, async (signal) => {
      const tok = await this.#tokens.get(sc, operation);
      if (operation === "deleteByUser" && tok.scope !== "admin") {
        throw new Error("usermemory: deleteByUser needs a token with the admin scope (scope \"admin\" from the token provider)");
      }
      if ((operation === "keepPending" || operation === "discardPending") && tok.scope !== "me") {
        throw new Error(`usermemory: ${operation} needs the user's own token (scope "me"): only the user answers for a pending fact`);
      }
      if (IMPORT_OPERATIONS.has(operation) && tok.scope !== "me") {
        throw new Error(`usermemory: ${operation} needs the user's own token (scope "me"): an import is the user's consent`);
      }
      const base = tok.scope === "admin" ? "/v1/users/" + encodeURIComponent(sc.userId) : "/v1/me";
      const res = await this.#fetch(this.#opts.apiUrl + base + path, {
        method,
        headers: { authorization: "Bearer " + tok.token, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      if (res.status === 401 && !refreshed) {
        refreshed = true;
        this.#tokens.forget(sc, operation);
        await res.body?.cancel();
        throw Object.assign(new UserMemoryError(401, "the token was refused; asking the provider again"), { retryNow: true });
      }
      if (!res.ok) {
        throw await UserMemoryError.fromResponse(res);
      }
      return (res.status === 204 ? undefined : await res.json()) as T;
    }, sc.signal);
  }
}
