/**
 * @usermemory/client: an IUserMemoryStore over the usermemory service for
 * a gateway on Node 20 or later. The facts go through the fact API, the
 * extraction through the service's FIFO queue, with the messages, FIFO IDs
 * and isExtractDue rule of the Go packages.
 */
export { UserMemoryStoreClient, type ClientOptions, type Erasure, type Export, type ExtractArgs, type Fact, type IUserMemoryStore, type Memory, type PendingFact, type Operation, type Scope, type Token, type TokenProvider, type UpsertArgs, type WriteOrigin } from "./client.js";
export { isExtractDue, DEFAULT_EXTRACT_EVERY_TURNS, type DueConfig } from "./due.js";
export { UserMemoryError, type Problem } from "./errors.js";
export { deduplicationId, groupId, encodeMessage, validate, MAX_THREAD_TITLE_CHARS, type MessageInput, type Meta, type Turn, type Violation } from "./message.js";
export { Producer, ProducerError, DEFAULT_MAX_BYTES, type BuiltMessage, type ProducerErrorReason, type ProducerOptions } from "./producer.js";
export { forExtractor, transcriptTurns, DEFAULT_CONTEXT_CHARS, DEFAULT_TRANSCRIPT_CHARS } from "./transcript.js";
