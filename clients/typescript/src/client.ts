// UserMemoryStoreClient: IUserMemoryStore over the usermemory service.

import type { SQSClient } from "@aws-sdk/client-sqs";
import { checkDueConfig, isExtractDue, type DueConfig } from "./due.js";
import { UserMemoryError } from "./errors.js";
import type { MessageInput, Meta, Turn } from "./message.js";
import type { components } from "./openapi.js";
import { Producer, type ProducerOptions } from "./producer.js";

/**
 * Fact is one stored fact, as the fact API returns it (IUserMemoryFact),
 * with its origin (conversation, manual or remember_tool) and, for a fact
 * learned from a thread, sourceThreadId, sourceThreadTitle and evidence
 * (the user's own words it rests on); validUntil is the last day of a
 * temporary fact, category a special category (GDPR Art. 9).
 */
export type Fact = components["schemas"]["Fact"];

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

/** Export is everything the service holds about one user (GDPR access and portability). */
export type Export = components["schemas"]["Export"];

/** Scope names one user of one tenant. */
export interface Scope {
  tenantId: string;
  userId: string;
}

/**
 * Token is what a [TokenProvider] gives: a JWT for the fact API and its
 * scope. "me" is the user's own access token (the /v1/me routes, its sub
 * must be the user); "admin" a token with the admin scope in the user's
 * tenant (the /v1/users/{userId} routes, and the only way to deleteByUser
 * and eraseUser).
 */
export interface Token {
  token: string;
  scope: "me" | "admin";
}

/** Operation names the method a token is asked for. */
export type Operation =
  | "getFacts"
  | "upsertFact"
  | "removeFact"
  | "clear"
  | "deleteByUser"
  | "exportData"
  | "extract"
  | "keepPending"
  | "discardPending";

/**
 * TokenProvider returns the token to call the fact API with for one user,
 * called with the tenant, the user and the operation (deleteByUser needs
 * an admin token, keepPending and discardPending the user's own: it is the
 * user's consent; the others take either).
 */
export type TokenProvider = (req: Scope & { operation: Operation }) => Promise<Token>;

/** ClientOptions configure a [UserMemoryStoreClient]. */
export interface ClientOptions extends DueConfig {
  /** apiUrl is the fact API's base URL (the stack's ApiUrl output). */
  apiUrl: string;
  /** tokens gives the token of each call. */
  tokens: TokenProvider;
  /** sqs and queueUrl are the extraction queue; without them extract throws. */
  sqs?: Pick<SQSClient, "send">;
  queueUrl?: string;
  /** producer sets the size and transcript limits of the extractor the queue feeds. */
  producer?: ProducerOptions;
  /** fetch replaces the global fetch (a proxy, a test). */
  fetch?: typeof fetch;
  /** timeoutMs bounds one HTTP call. Default 10000. */
  timeoutMs?: number;
}

/** ExtractArgs are the arguments of extract: those of IUserMemoryStore.extract, and the thread's turn counts. */
export interface ExtractArgs extends Scope {
  threadId: string;
  /**
   * The thread's title as a person knows it, at most 60 characters: kept
   * with the facts the extraction sets (sourceThreadTitle) and shown
   * instead of the thread's ID. Optional.
   */
  threadTitle?: string;
  /** The turns since the last extraction, oldest first. */
  turns: readonly Turn[];
  /** The thread's turn count before the call that just ended, and now: the message carries them. */
  previousTurnCount: number;
  turnCount: number;
  /** The turns before turns, already read: context for the model. */
  contextTurns?: readonly Turn[];
  cheapModelId?: string;
  meta?: Meta & Record<string, unknown>;
}

/**
 * UpsertArgs are the arguments of upsertFact: the fact, how it came to be
 * set (default "manual"), and for a temporary fact its last day,
 * "YYYY-MM-DD" (UTC), from today to 366 days ahead.
 */
export interface UpsertArgs extends Scope {
  key: string;
  value: string;
  origin?: WriteOrigin;
  validUntil?: string;
}

/**
 * IUserMemoryStore is the store interface of the behaviour reference's
 * gateway, with its method names and argument shapes; extract takes the
 * thread's turn counts too (see [ExtractArgs]).
 */
export interface IUserMemoryStore {
  getFacts(args: Scope): Promise<Fact[]>;
  upsertFact(args: UpsertArgs): Promise<void>;
  removeFact(args: Scope & { key: string }): Promise<void>;
  clear(args: Scope): Promise<void>;
  deleteByUser(args: Scope): Promise<number>;
  isExtractDue(args: { previousTurnCount: number; turnCount: number }): boolean;
  extract(args: ExtractArgs): Promise<Fact[]>;
}

/**
 * UserMemoryStoreClient is an IUserMemoryStore over the usermemory
 * service: the facts through its HTTP API, the extraction through its
 * queue. A host passes it as overrides.userMemoryStore.
 */
export class UserMemoryStoreClient implements IUserMemoryStore {
  readonly #opts: ClientOptions;
  readonly #producer: Producer | undefined;
  readonly #fetch: typeof fetch;

  /** Throws a RangeError for an extractEveryTurns the service would refuse. */
  constructor(opts: ClientOptions) {
    checkDueConfig(opts);
    this.#opts = { ...opts, apiUrl: opts.apiUrl.replace(/\/+$/, "") };
    this.#producer = opts.queueUrl ? new Producer(opts.sqs, opts.queueUrl, opts.producer) : undefined;
    this.#fetch = opts.fetch ?? fetch;
  }

  /**
   * getFacts returns the user's facts, sorted by key; [] for a user without
   * any. These are the facts for a prompt: pending facts are not among
   * them (getMemory returns those too).
   */
  async getFacts(sc: Scope): Promise<Fact[]> {
    return (await this.getMemory(sc)).facts;
  }

  /**
   * getMemory returns, in one read, what a user's page shows: the facts,
   * the pending facts that wait for the user's answer (sorted by key,
   * always present), and the caps.
   */
  async getMemory(sc: Scope): Promise<Memory> {
    return this.#memory(sc, "getFacts");
  }

  /** memory reads the user's facts and pending facts for operation. */
  async #memory(sc: Scope, operation: Operation): Promise<Memory> {
    const res = await this.#call(operation, "GET", sc, "/facts");
    return (await res.json()) as Memory;
  }

  /**
   * keepPending is the user's yes to a pending fact: it moves to the facts,
   * in every prompt from then on, and is returned. A 404 UserMemoryError
   * (code 5380000000111) when nothing waits under the key. It needs the
   * user's own token: nobody consents for the user.
   */
  async keepPending(args: Scope & { key: string }): Promise<Fact> {
    const res = await this.#call("keepPending", "POST", args, "/pending/" + encodeURIComponent(args.key) + "/keep");
    return ((await res.json()) as { fact: Fact }).fact;
  }

  /** discardPending is the user's no to a pending fact: it goes; nothing waiting under the key is not an error. It needs the user's own token. */
  async discardPending(args: Scope & { key: string }): Promise<void> {
    await this.#call("discardPending", "DELETE", args, "/pending/" + encodeURIComponent(args.key));
  }

  /**
   * upsertFact sets one fact, by hand or, with origin "remember_tool", for
   * a remember tool call the user approved, until validUntil if given; a
   * 400 UserMemoryError for an empty key or value (code 5372597957094), one
   * over maxFactChars (5377210486159, with a userMessage), another origin
   * (5380000000110), an end date out of range (5380000000112) or a value
   * that looks like a secret (5380000000113, with a userMessage).
   */
  async upsertFact(args: UpsertArgs): Promise<void> {
    const body: { value: string; origin?: WriteOrigin; validUntil?: string } = { value: args.value };
    if (args.origin !== undefined) body.origin = args.origin;
    if (args.validUntil !== undefined) body.validUntil = args.validUntil;
    await this.#call("upsertFact", "PUT", args, "/facts/" + encodeURIComponent(args.key), body);
  }

  /** removeFact forgets one fact; a key that is not there is not an error. */
  async removeFact(args: Scope & { key: string }): Promise<void> {
    await this.#call("removeFact", "DELETE", args, "/facts/" + encodeURIComponent(args.key));
  }

  /** clear forgets every fact of the user; the record stays. */
  async clear(sc: Scope): Promise<void> {
    await this.#call("clear", "DELETE", sc, "/facts");
  }

  /** deleteByUser erases the user (GDPR) and returns the number of facts removed: eraseUser's removedFacts. It needs an admin token. */
  async deleteByUser(sc: Scope): Promise<number> {
    return (await this.eraseUser(sc)).removedFacts;
  }

  /**
   * eraseUser erases the user (GDPR) and returns the service's whole
   * answer: removedFacts, erasedAt, and backupsUntil and
   * queuedMessagesUntil, until when a backup or a message queued before
   * may still hold the user. It needs an admin token (operation
   * "deleteByUser").
   */
  async eraseUser(sc: Scope): Promise<Erasure> {
    const res = await this.#call("deleteByUser", "DELETE", sc, "");
    return (await res.json()) as Erasure;
  }

  /** exportData returns everything the service holds about the user: facts, pending facts, forgotten keys, thread watermarks. */
  async exportData(sc: Scope): Promise<Export> {
    const res = await this.#call("exportData", "GET", sc, "/export");
    return (await res.json()) as Export;
  }

  /** isExtractDue is memory.IsExtractDue with the configured beat. Pure. */
  isExtractDue(args: { previousTurnCount: number; turnCount: number }): boolean {
    return isExtractDue(this.#opts, args.previousTurnCount, args.turnCount);
  }

  /**
   * extract sends the extraction message and returns the facts as stored
   * now: the extractor learns from the turns a moment later, so the new
   * facts are not in the returned list. Throws a ProducerError (invalid,
   * too_large, timeout), the SQS client's error, or a UserMemoryError.
   */
  async extract(args: ExtractArgs): Promise<Fact[]> {
    if (!this.#producer) {
      throw new Error("usermemory: extract needs the queueUrl and sqs options");
    }
    // Every member of the message passes through; meta keeps the two IDs
    // the schema allows (a host's call meta carries more).
    const { requestId, traceId } = args.meta ?? {};
    const m: MessageInput = { ...args, meta: requestId || traceId ? { requestId, traceId } : undefined };
    await this.#producer.send(m);
    return (await this.#memory(args, "extract")).facts;
  }

  /** call sends one request of the fact API for sc and operation and returns its successful answer, or throws a UserMemoryError. */
  async #call(operation: Operation, method: string, sc: Scope, path: string, body?: unknown): Promise<Response> {
    const tok = await this.#opts.tokens({ tenantId: sc.tenantId, userId: sc.userId, operation });
    if (operation === "deleteByUser" && tok.scope !== "admin") {
      throw new Error("usermemory: deleteByUser needs a token with the admin scope (scope \"admin\" from the token provider)");
    }
    if ((operation === "keepPending" || operation === "discardPending") && tok.scope !== "me") {
      throw new Error(`usermemory: ${operation} needs the user's own token (scope "me"): only the user answers for a pending fact`);
    }
    const base = tok.scope === "admin" ? "/v1/users/" + encodeURIComponent(sc.userId) : "/v1/me";
    const res = await this.#fetch(this.#opts.apiUrl + base + path, {
      method,
      headers: { authorization: "Bearer " + tok.token, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.#opts.timeoutMs ?? 10_000),
    });
    if (!res.ok) {
      throw await UserMemoryError.fromResponse(res);
    }
    return res;
  }
}
