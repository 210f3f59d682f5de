// IUserMemoryStore as the behaviour reference's gateway declares it
// (the UserMemoryStore page of the reference: each method's parameter
// object exactly as the page lists it). The page does not give the helper
// types; these are the shapes a gateway plausibly has, assumed here:
//
// - IUserMemoryFact: key, value, updatedAt as an ISO 8601 string, and the
//   source thread when the fact was learned from one ("a fact repeated
//   unchanged keeps its date and its source").
// - ITurn: a chat message as the OpenAI and Anthropic SDKs shape it: role
//   "system", "user", "assistant" or "tool"; content a string, absent or
//   null (a tool call's turn), or an array of parts; a tool call ID.
// - ILLMClientCallMeta: an interface, so without an index signature: the
//   kind of call (MEMORY_USER for extract) and the IDs of the trace.
//
// The package's type test (test/reference.typetest.ts) fails unless
// UserMemoryStoreClient is assignable to IUserMemoryStore, and the pack
// check compiles a scratch project's overrides.userMemoryStore against it.

/** IUserMemoryFact is one durable fact about a user. */
export interface IUserMemoryFact {
  key: string;
  value: string;
  updatedAt: string;
  sourceThreadId?: string;
}

/** ITextPart is one part of a turn's content. */
export interface ITextPart {
  type: "text";
  text: string;
}

/** IImagePart is a part of a turn's content that is not text. */
export interface IImagePart {
  type: "image_url";
  image_url: { url: string };
}

/** ITurn is one turn of a thread, as the gateway keeps it. */
export interface ITurn {
  role: "system" | "user" | "assistant" | "tool";
  content?: string | null | Array<ITextPart | IImagePart>;
  toolCallId?: string;
}

/** ILLMClientCallMeta is what the gateway tells its model client about a call. */
export interface ILLMClientCallMeta {
  kind: string;
  tenantId?: string;
  userId?: string;
  threadId?: string;
  requestId?: string;
  traceId?: string;
}

/** IUserMemoryStore is what the gateway knows about a user across threads. */
export interface IUserMemoryStore {
  clear(args: { tenantId: string; userId: string }): Promise<void>;
  deleteByUser(args: { tenantId: string; userId: string }): Promise<number>;
  extract(args: {
    cheapModelId: string;
    meta: ILLMClientCallMeta;
    tenantId: string;
    threadId: string;
    turns: ITurn[];
    userId: string;
  }): Promise<IUserMemoryFact[]>;
  getFacts(args: { tenantId: string; userId: string }): Promise<IUserMemoryFact[]>;
  isExtractDue(args: { previousTurnCount: number; turnCount: number }): boolean;
  removeFact(args: { key: string; tenantId: string; userId: string }): Promise<void>;
  upsertFact(args: { key: string; tenantId: string; userId: string; value: string }): Promise<void>;
}
