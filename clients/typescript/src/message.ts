// The extraction message, version 1 (schema/extraction-message.v1.json):
// its type, its rules and its JSON, written as the Go producer writes it.

import { createHash } from "node:crypto";
import { goString, goTime } from "./gojson.js";
import { runeCount } from "./transcript.js";

/** VERSION is the version of the message format this package writes. */
export const VERSION = 1;

/** MAX_TURNS is the most turns one message carries; the newest are kept. */
export const MAX_TURNS = 2000;

/** MAX_COUNT is the largest turn count. */
export const MAX_COUNT = 2 ** 31 - 1;

/** MAX_THREAD_TITLE_CHARS is the longest threadTitle, in characters (code points): schema.MaxThreadTitleChars. */
export const MAX_THREAD_TITLE_CHARS = 60;

/** Role is who spoke a turn. */
export type Role = "user" | "assistant" | "tool";

/** Turn is one turn of a thread: tool turns are counted, never transcribed. */
export interface Turn {
  role: Role | string;
  text: string;
}

/** Meta carries the gateway's IDs of the call: printable ASCII without spaces, at most 256 bytes each. */
export interface Meta {
  requestId?: string;
  traceId?: string;
}

/**
 * MessageInput is what a gateway gives to build one message: the members
 * of the schema without version, and sentAt optional (now by default).
 */
export interface MessageInput {
  tenantId: string;
  userId: string;
  threadId: string;
  /**
   * The thread's title as a person knows it: at most 60 characters
   * (code points) of valid Unicode, sent as given; the extractor keeps it,
   * cleaned to one line, with the facts it sets. Empty or absent: none.
   */
  threadTitle?: string;
  /**
   * The thread's turn count before the call that just ended. Optional,
   * together with turnCount: a message with both is counted (its
   * watermark is turnCount); one with neither is uncounted (always due,
   * its watermark the digest of its turns, see [turnsDigest]).
   */
  previousTurnCount?: number;
  /** The thread's turn count now, at least previousTurnCount; given with previousTurnCount or not at all. */
  turnCount?: number;
  /** The turns since the last extraction, oldest first. */
  turns: readonly Turn[];
  /** The turns just before turns, already read: context for the model. */
  contextTurns?: readonly Turn[];
  /** When the message is sent; a string keeps its nanoseconds. Default: now. */
  sentAt?: Date | string;
  /** A Bedrock model ID that overrides the extractor's cheap model. */
  cheapModelId?: string;
  meta?: Meta;
}

/** Violation is one rule a message breaks: where (a JSON pointer) and the rule in words. */
export interface Violation {
  pointer: string;
  rule: string;
}

const idPattern = /^[A-Za-z0-9_.:@|+=-]{1,128}$/;
const modelIdPattern = /^[A-Za-z0-9._:/+-]{1,256}$/;
const tracePattern = /^[!-~]{0,256}$/;
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const roles: readonly string[] = ["user", "assistant", "tool"];

/**
 * validate returns the rules m breaks, as schema.ExtractionMessage.Validate
 * checks them, in its order; [] for a valid message. Values never appear
 * in the result.
 */
export function validate(m: MessageInput, sentAt: string | undefined): Violation[] {
  const v: Violation[] = [];
  for (const name of ["tenantId", "userId", "threadId"] as const) {
    if (typeof m[name] !== "string" || !idPattern.test(m[name])) {
      v.push({ pointer: "/" + name, rule: "1 to 128 ASCII letters, digits or - _ . : @ | + =" });
    }
  }
  validateCounts(m, v);
  const title = m.threadTitle ?? "";
  if (typeof title !== "string" || loneSurrogate.test(title) || runeCount(title) > MAX_THREAD_TITLE_CHARS) {
    v.push({ pointer: "/threadTitle", rule: `1 to ${MAX_THREAD_TITLE_CHARS} characters of valid Unicode (no lone surrogate)` });
  }
  validateTurns("/turns", m.turns, v);
  validateTurns("/contextTurns", m.contextTurns ?? [], v);
  if (sentAt === undefined) {
    v.push({ pointer: "/sentAt", rule: "an RFC 3339 date-time, years 0 to 9999" });
  }
  if (m.cheapModelId !== undefined && m.cheapModelId !== "" && !modelIdPattern.test(m.cheapModelId)) {
    v.push({ pointer: "/cheapModelId", rule: "1 to 256 of A-Z a-z 0-9 . _ : / + -" });
  }
  for (const name of ["requestId", "traceId"] as const) {
    const value = m.meta?.[name];
    if (value !== undefined && (typeof value !== "string" || !tracePattern.test(value))) {
      v.push({ pointer: "/meta/" + name, rule: "printable ASCII without spaces, at most 256 bytes" });
    }
  }
  return v;
}

/** validateCounts checks the turn counts: both absent (an uncounted message), or both integers in range, turnCount at least previousTurnCount. */
function validateCounts(m: MessageInput, v: Violation[]): void {
  const given = [m.previousTurnCount !== undefined, m.turnCount !== undefined];
  if (given[0] !== given[1]) {
    const missing = given[0] ? "turnCount" : "previousTurnCount";
    v.push({ pointer: "/" + missing, rule: "previousTurnCount and turnCount are given together or not at all" });
    return;
  }
  if (!given[0]) {
    return;
  }
  let inRange = true;
  for (const name of ["previousTurnCount", "turnCount"] as const) {
    const n = m[name]!;
    if (!Number.isInteger(n) || n < 0 || n > MAX_COUNT) {
      v.push({ pointer: "/" + name, rule: `an integer from 0 to ${MAX_COUNT}` });
      inRange = false;
    }
  }
  if (inRange && m.turnCount! < m.previousTurnCount!) {
    v.push({ pointer: "/turnCount", rule: "at least previousTurnCount" });
  }
}

function validateTurns(pointer: string, turns: readonly Turn[], v: Violation[]): void {
  if (!Array.isArray(turns)) {
    v.push({ pointer, rule: "an array of turns" });
    return;
  }
  turns.forEach((t, i) => {
    if (!roles.includes(t?.role)) {
      v.push({ pointer: `${pointer}/${i}/role`, rule: "user, assistant or tool" });
    }
    if (typeof t?.text !== "string" || loneSurrogate.test(t.text)) {
      v.push({ pointer: `${pointer}/${i}/text`, rule: "a string of valid Unicode (no lone surrogate)" });
    }
  });
}

/** Wire is a message ready to encode: valid, sentAt in Go's form. */
export interface Wire extends Omit<MessageInput, "sentAt"> {
  sentAt: string;
  contextTurns?: Turn[];
}

/** encodeTurn returns the JSON of one turn, as Go writes it. */
export function encodeTurn(t: Turn): string {
  return `{"role":${goString(t.role)},"text":${goString(t.text)}}`;
}

function encodeTurns(turns: readonly Turn[]): string {
  return "[" + turns.map(encodeTurn).join(",") + "]";
}

/**
 * fields lists the members of the message in the order of the Go struct,
 * each with its encoding, or undefined where Go's omitempty leaves it out.
 * A new optional member of the schema is one more line here.
 */
const fields: readonly [string, (m: Wire) => string | undefined][] = [
  ["version", () => String(VERSION)],
  ["tenantId", (m) => goString(m.tenantId)],
  ["userId", (m) => goString(m.userId)],
  ["threadId", (m) => goString(m.threadId)],
  ["threadTitle", (m) => (m.threadTitle ? goString(m.threadTitle) : undefined)],
  ["previousTurnCount", (m) => (m.previousTurnCount === undefined ? undefined : String(m.previousTurnCount))],
  ["turnCount", (m) => (m.turnCount === undefined ? undefined : String(m.turnCount))],
  ["turns", (m) => encodeTurns(m.turns)],
  ["contextTurns", (m) => (m.contextTurns?.length ? encodeTurns(m.contextTurns) : undefined)],
  ["sentAt", (m) => goString(m.sentAt)],
  ["cheapModelId", (m) => (m.cheapModelId ? goString(m.cheapModelId) : undefined)],
  ["meta", (m) => (m.meta ? encodeMeta(m.meta) : undefined)],
];

function encodeMeta(meta: Meta): string {
  const parts: string[] = [];
  if (meta.requestId) parts.push(`"requestId":${goString(meta.requestId)}`);
  if (meta.traceId) parts.push(`"traceId":${goString(meta.traceId)}`);
  return "{" + parts.join(",") + "}";
}

/** encodeMessage returns the JSON body of m, byte for byte as Go's json.Marshal writes it. */
export function encodeMessage(m: Wire): string {
  const parts: string[] = [];
  for (const [name, encode] of fields) {
    const value = encode(m);
    if (value !== undefined) {
      parts.push(`"${name}":${value}`);
    }
  }
  return "{" + parts.join(",") + "}";
}

/** wireTime returns the sentAt of a message in Go's form, or undefined when it is not a valid time. */
export function wireTime(sentAt: Date | string): string | undefined {
  return goTime(sentAt);
}

/** MAX_GROUP_ID is the longest MessageGroupId SQS accepts. */
const MAX_GROUP_ID = 128;

/**
 * groupId returns the FIFO MessageGroupId of the messages of one user, as
 * schema.GroupID: "tenantId/userId", or "sha256:" and the hex SHA-256 of
 * it when that is over 128 characters.
 */
export function groupId(tenantId: string, userId: string): string {
  const g = tenantId + "/" + userId;
  if (Buffer.byteLength(g, "utf8") <= MAX_GROUP_ID) {
    return g;
  }
  return "sha256:" + createHash("sha256").update(g, "utf8").digest("hex");
}

/** DIGEST_BYTES is how many bytes of the SHA-256 a turns digest keeps. */
const DIGEST_BYTES = 9;

/**
 * turnsDigest returns the watermark of an uncounted message: "#" and the
 * base64url (no padding) of the first 9 bytes of the SHA-256 over, for
 * each turn in order, its role, a zero byte, the decimal length in bytes
 * of its text's UTF-8, a zero byte, the text's UTF-8 and a zero byte; 13
 * characters that never equal a count. Undefined for no turn: there is
 * nothing to read. turns are those the message carries (context turns
 * are not part of it).
 */
export function turnsDigest(turns: readonly Turn[]): string | undefined {
  if (turns.length === 0) {
    return undefined;
  }
  const h = createHash("sha256");
  const zero = new Uint8Array([0]);
  for (const t of turns) {
    const text = Buffer.from(t.text, "utf8");
    h.update(t.role, "utf8").update(zero);
    h.update(String(text.length), "utf8").update(zero);
    h.update(text).update(zero);
  }
  return "#" + h.digest().subarray(0, DIGEST_BYTES).toString("base64url");
}

/**
 * deduplicationId returns the FIFO MessageDeduplicationId of a message, as
 * producer.DeduplicationID: the hex SHA-256 of tenant, user, thread and
 * watermark, each followed by a zero byte. The watermark is the turn count
 * of a counted message, or the [turnsDigest] of an uncounted one (with its
 * "#"; "" for one without turns).
 */
export function deduplicationId(tenantId: string, userId: string, threadId: string, watermark: number | string): string {
  const h = createHash("sha256");
  for (const s of [tenantId, userId, threadId, String(watermark)]) {
    h.update(s, "utf8");
    h.update(new Uint8Array([0]));
  }
  return h.digest("hex");
}
