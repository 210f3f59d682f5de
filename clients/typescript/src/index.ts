/**
 * @usermemory/client: an IUserMemoryStore over the usermemory service for
 * a Node gateway. The facts go through the fact API, the extraction
 * through the service's FIFO queue, with the messages, FIFO IDs and
 * isExtractDue rule of the Go packages; every call is retried with
 * backoff and takes an AbortSignal.
 */
export {
  UserMemoryStoreClient, DEFAULT_LAST_KNOWN_MS, DEFAULT_TOKEN_REFRESH_BEFORE_MS, type ClientOptions, type Erasure, type Export, type ExtractArgs, type ForgottenThread, type ThreadChanges, type Change, type Undone,
  type ImportArgs, type ImportIdArgs, type ImportLeftOut, type ImportReview, type ImportView,
  type Fact, type IUserMemoryStore, type KeyArgs, type Memory, type MemoryErrorReport, type PendingFact, type PreviousValue, type ScopeArgs, type Signal, type ThreadArgs, type ThreadChangesArgs, type ThreadKeyArgs, type UpsertArgs,
  type WriteOrigin,
} from "./client.js";
export { TokenCache, jwtExpiry, type Operation, type Scope, type Token, type TokenProvider } from "./tokens.js";
export { DEFAULT_RETRY, classify, withRetry, type RetryOptions } from "./retry.js";
export { toTurns, textOf, type GatewayTurn } from "./turns.js";
export { isExtractDue, DEFAULT_EXTRACT_EVERY_TURNS, type DueConfig } from "./due.js";
export { UserMemoryError, type Problem } from "./errors.js";
export { deduplicationId, groupId, encodeMessage, turnsDigest, validate, MAX_THREAD_TITLE_CHARS, type MessageInput, type Meta, type Turn, type Violation } from "./message.js";
export { Producer, ProducerError, DEFAULT_MAX_BYTES, type BuiltMessage, type ProducerErrorReason, type ProducerOptions } from "./producer.js";
export { forExtractor, transcriptTurns, DEFAULT_CONTEXT_CHARS, DEFAULT_TRANSCRIPT_CHARS } from "./transcript.js";
