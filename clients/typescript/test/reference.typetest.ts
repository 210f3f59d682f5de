// The type test: UserMemoryStoreClient is an IUserMemoryStore of the
// behaviour reference (reference/IUserMemoryStore.ts). It is checked by
// the compiler (tsc --strict, the first step of npm test), and once more
// with every method compared as a function property, so that each
// parameter object of the reference must be accepted as it is (a method
// alone is compared both ways, which would let a narrower argument pass).

import type { ILLMClientCallMeta, ITurn, IUserMemoryStore } from "../reference/IUserMemoryStore.js";
import { UserMemoryStoreClient, type GatewayTurn } from "../src/index.js";

/** Strict turns each method of T into a function property: its parameters are then checked contravariantly. */
type Strict<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => R : T[K] };

/** Is compiles only when U is assignable to T. It is types only: nothing of this file runs. */
type Is<T, U extends T> = U;

/** The host's override, as the reference's gateway takes it. */
export type Overrides = Is<{ userMemoryStore: IUserMemoryStore }, { userMemoryStore: UserMemoryStoreClient }>;

/** The same, with the reference's arguments checked against the client's parameters one way only. */
export type StrictlyOne = Is<Strict<IUserMemoryStore>, Strict<UserMemoryStoreClient>>;

/** A turn of the reference's shape is a GatewayTurn. */
export type TurnFits = Is<readonly GatewayTurn[], ITurn[]>;

declare const client: UserMemoryStoreClient;

/** A call meta without an index signature is accepted as it is. */
export function extractAsUpdateMemoryDoes(meta: ILLMClientCallMeta, t: ITurn[]) {
  return client.extract({ tenantId: "acme", userId: "ana", threadId: "th", turns: t, cheapModelId: "m", meta });
}

/** A store whose extract needs the counts is not one: the test can fail. */
interface CountedStore extends Omit<IUserMemoryStore, "extract"> {
  extract(args: { tenantId: string; userId: string; threadId: string; turns: { role: string; text: string }[]; previousTurnCount: number; turnCount: number }): Promise<[]>;
}
// @ts-expect-error the reference's extract passes no counts and no text
export type Refused = Is<Strict<IUserMemoryStore>, Strict<CountedStore>>;
