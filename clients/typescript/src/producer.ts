// The producer: the extraction message built and sent as the Go producer
// package builds and sends it (producer.Producer.Build and Send).

import { SendMessageCommand, type SendMessageCommandInput, type SQSClient } from "@aws-sdk/client-sqs";
import {
  MAX_TURNS,
  deduplicationId,
  encodeMessage,
  encodeTurn,
  groupId,
  turnsDigest,
  validate,
  wireTime,
  type MessageInput,
  type Turn,
  type Violation,
  type Wire,
} from "./message.js";
import { DEFAULT_CONTEXT_CHARS, DEFAULT_TRANSCRIPT_CHARS, firstRunes, transcriptTurns, forExtractor, runeCount } from "./transcript.js";

/** DEFAULT_MAX_BYTES is the SQS limit of one message, body and attributes together: 256 KiB. */
export const DEFAULT_MAX_BYTES = 256 * 1024;

/** ZERO_TIME is Go's zero time.Time, as it encodes. */
const ZERO_TIME = "0001-01-01T00:00:00Z";

/** DEFAULT_SEND_TIMEOUT_MS bounds one send, the SDK's retries included. */
export const DEFAULT_SEND_TIMEOUT_MS = 5000;

/** ProducerOptions configure a [Producer]; each has the default of the Go producer. */
export interface ProducerOptions {
  /** The size limit of a whole message; values below 1024 are raised to 1024. Default 256 KiB. */
  maxBytes?: number;
  /** The extractor's TRANSCRIPT_CHARS; 0 sends the turns whole. Default 12000. */
  transcriptChars?: number;
  /** String message attributes added to every message; they count towards the size limit. */
  attributes?: Record<string, string>;
  /** The most one send may take, in milliseconds. Default 5000. */
  sendTimeoutMs?: number;
  /** The clock that stamps sentAt when a message has none. */
  now?: () => Date;
}

/** ProducerErrorReason says why a message was not sent: as the Go producer's ErrInvalid, ErrTooLarge and ErrTimeout. */
export type ProducerErrorReason = "invalid" | "too_large" | "timeout";

/** ProducerError is the error of a message that was not built or not sent in time. */
export class ProducerError extends Error {
  /** reason is invalid (nothing sent), too_large (nothing sent) or timeout (the message may or may not be queued; sending it again is safe). */
  readonly reason: ProducerErrorReason;
  /** violations are the rules broken, for reason invalid. */
  readonly violations: readonly Violation[];

  constructor(reason: ProducerErrorReason, message: string, violations: readonly Violation[] = [], options?: { cause?: unknown }) {
    super("usermemory producer: " + message, options);
    this.name = "ProducerError";
    this.reason = reason;
    this.violations = violations;
  }
}

/** BuiltMessage is what a [Producer] sends: the body and the FIFO IDs. */
export interface BuiltMessage {
  body: string;
  groupId: string;
  deduplicationId: string;
}

/** Producer builds and sends extraction messages to one FIFO queue. */
export class Producer {
  readonly #sqs: Pick<SQSClient, "send"> | undefined;
  readonly #queueUrl: string;
  readonly #maxBytes: number;
  readonly #transcriptChars: number;
  readonly #attributes: Record<string, string>;
  readonly #sendTimeoutMs: number;
  readonly #now: () => Date;

  /** The sqs client may be undefined for a producer that only builds. */
  constructor(sqs: Pick<SQSClient, "send"> | undefined, queueUrl: string, options: ProducerOptions = {}) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
    this.#maxBytes = Math.max(options.maxBytes ?? DEFAULT_MAX_BYTES, 1024);
    this.#transcriptChars = Math.max(options.transcriptChars ?? DEFAULT_TRANSCRIPT_CHARS, 0);
    this.#attributes = { ...options.attributes };
    this.#sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * build validates m and returns the message send would send, by the
   * rules of the Go producer's Build: the newest 2000 turns, of them what
   * the extractor reads; the context turns the extractor reads within its
   * 1500 characters; within the size limit by dropping the context turns
   * first, then the oldest turns, then cutting the newest turn's text.
   * Throws a [ProducerError] invalid or too_large.
   */
  build(m: MessageInput): BuiltMessage {
    // As Go's time.Time, the zero time means none: now.
    let sentAt = wireTime(m.sentAt ?? this.#now());
    if (sentAt === ZERO_TIME) {
      sentAt = wireTime(this.#now());
    }
    const turns = Array.isArray(m.turns) ? m.turns.slice(-MAX_TURNS) : m.turns;
    const context = Array.isArray(m.contextTurns) ? m.contextTurns.slice(-MAX_TURNS) : m.contextTurns;
    const checked = { ...m, turns, contextTurns: context };
    if (!this.#queueUrl.endsWith(".fifo")) {
      throw new ProducerError("invalid", "the queue URL must name a FIFO queue (ending in .fifo)");
    }
    const violations = validate(checked, sentAt);
    if (violations.length > 0) {
      throw new ProducerError("invalid", violations.map((v) => `${v.pointer || "/"}: ${v.rule}`).join("; "), violations);
    }
    const { sentAt: _omitted, ...rest } = checked;
    const kept = transcriptTurns(context ?? [], DEFAULT_CONTEXT_CHARS);
    const wire: Wire = {
      ...rest,
      sentAt: sentAt!,
      turns: this.#transcriptChars > 0 ? forExtractor(turns, this.#transcriptChars) : turns.map((t) => ({ ...t })),
      contextTurns: kept.length > 0 ? kept : undefined,
    };
    const fitted = this.#fit(wire);
    // A counted message's watermark is its turn count; an uncounted one's
    // the digest of the turns it carries, as the extractor reads them.
    const watermark = m.turnCount ?? turnsDigest(fitted.turns) ?? "";
    return {
      body: fitted.body,
      groupId: groupId(m.tenantId, m.userId),
      deduplicationId: deduplicationId(m.tenantId, m.userId, m.threadId, watermark),
    };
  }

  /**
   * send builds m and sends it to the queue, once. Throws a [ProducerError]
   * invalid or too_large before anything is sent, timeout when SQS did not
   * answer within sendTimeoutMs, the signal's reason when signal aborts
   * it, or the SQS client's error.
   */
  async send(m: MessageInput, signal?: AbortSignal): Promise<void> {
    const built = this.build(m);
    if (!this.#sqs) {
      throw new Error("usermemory producer: no SQS client to send with");
    }
    const input: SendMessageCommandInput = {
      QueueUrl: this.#queueUrl,
      MessageBody: built.body,
      MessageGroupId: built.groupId,
      MessageDeduplicationId: built.deduplicationId,
    };
    const names = Object.keys(this.#attributes);
    if (names.length > 0) {
      input.MessageAttributes = Object.fromEntries(names.map((k) => [k, { DataType: "String", StringValue: this.#attributes[k]! }]));
    }
    const timeout = AbortSignal.timeout(this.#sendTimeoutMs);
    try {
      await this.#sqs.send(new SendMessageCommand(input), { abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (err) {
      if (signal?.aborted) {
        throw signal.reason;
      }
      if (timeout.aborted) {
        throw new ProducerError("timeout", `SQS did not answer within ${this.#sendTimeoutMs} ms`, [], { cause: err });
      }
      throw err;
    }
  }

  /** size returns the SQS size of a message with body: its bytes and each attribute's name, type and value. */
  #size(body: string): number {
    let n = Buffer.byteLength(body, "utf8");
    for (const [k, v] of Object.entries(this.#attributes)) {
      n += Buffer.byteLength(k, "utf8") + "String".length + Buffer.byteLength(v, "utf8");
    }
    return n;
  }

  /**
   * fit returns the JSON of m with the context and the oldest turns
   * dropped, and the newest cut, as far as needed, and the turns it holds.
   */
  #fit(m: Wire): { body: string; turns: readonly Turn[] } {
    let body = encodeMessage(m);
    let over = this.#size(body) - this.#maxBytes;
    if (over <= 0) {
      return { body, turns: m.turns };
    }
    const hadContext = (m.contextTurns?.length ?? 0) > 0;
    let context: Turn[];
    [context, over] = dropOldest(m.contextTurns ?? [], over, 0);
    m = { ...m, contextTurns: context };
    if (hadContext && context.length === 0) {
      over -= ',"contextTurns":[]'.length;
    }
    m = { ...m, turns: dropOldest(m.turns, over, 1)[0] };
    body = encodeMessage(m);
    if (this.#size(body) <= this.#maxBytes) {
      return { body, turns: m.turns };
    }
    if (m.turns.length === 0) {
      throw new ProducerError("too_large", `${this.#size(body)} bytes without any turn, over the limit of ${this.#maxBytes}`);
    }
    return this.#cutNewest(m);
  }

  /** cutNewest cuts the text of the only turn left to the longest beginning that fits, marked with "…". */
  #cutNewest(m: Wire): { body: string; turns: readonly Turn[] } {
    const turn = m.turns[0]!;
    const cut = (runes: number): Turn[] => [{ role: turn.role, text: firstRunes(turn.text, runes) + "…" }];
    const encode = (runes: number): string => encodeMessage({ ...m, turns: cut(runes) });
    let lo = 0;
    let hi = runeCount(turn.text);
    while (lo < hi) {
      const mid = Math.floor((lo + hi + 1) / 2);
      if (this.#size(encode(mid)) <= this.#maxBytes) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const body = encode(lo);
    if (lo === 0 || this.#size(body) > this.#maxBytes) {
      throw new ProducerError("too_large", `no room for a turn within the limit of ${this.#maxBytes} bytes`);
    }
    return { body, turns: cut(lo) };
  }
}

/** dropOldest drops the oldest turns, keeping at least keep, until the bytes saved cover over. */
function dropOldest(turns: readonly Turn[], over: number, keep: number): [Turn[], number] {
  let drop = 0;
  while (drop < turns.length - keep && over > 0) {
    over -= Buffer.byteLength(encodeTurn(turns[drop]!), "utf8") + 1;
    drop++;
  }
  return [turns.slice(drop), over];
}
