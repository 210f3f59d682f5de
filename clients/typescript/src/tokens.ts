// Tokens: the provider's answers kept per tenant, user and scope until
// shortly before they expire.

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
 * and eraseUser). expiresAt, when the provider knows it, is when the token
 * expires (a Date or milliseconds since the epoch); otherwise the JWT's
 * exp is read (not verified: the service verifies it).
 */
export interface Token {
  token: string;
  scope: "me" | "admin";
  expiresAt?: Date | number;
}

/** Operation names the method a token is asked for. */
export type Operation =
  | "getFacts"
  | "upsertFact"
  | "removeFact"
  | "clear"
  | "forgetThread"
  | "threadChanges"
  | "undoChange"
  | "deleteByUser"
  | "exportData"
  | "extract"
  | "keepPending"
  | "discardPending"
  | "importMemory"
  | "getImport"
  | "keepImport"
  | "discardImport";

/**
 * TokenProvider returns the token to call the fact API with for one user,
 * called with the tenant, the user and the operation (deleteByUser needs
 * an admin token; keepPending, discardPending and the four calls of an
 * import the user's own: it is the user's consent; the others take
 * either).
 */
export type TokenProvider = (req: Scope & { operation: Operation }) => Promise<Token>;

/** needs returns the scope an operation's token must have, or "any". */
function needs(operation: Operation): "me" | "admin" | "any" {
  switch (operation) {
    case "deleteByUser":
      return "admin";
    case "keepPending":
    case "discardPending":
    case "importMemory":
    case "getImport":
    case "keepImport":
    case "discardImport":
      return "me";
  }
  return "any";
}

/** jwtExpiry returns the exp of a JWT in milliseconds since the epoch, read without verifying it, or undefined. */
export function jwtExpiry(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined) {
    return undefined;
  }
  try {
    const exp = (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown }).exp;
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** TokenCacheOptions configure a [TokenCache]. */
export interface TokenCacheOptions {
  /** A token is asked for again this long before it expires. */
  refreshBeforeMs: number;
  /** The most entries kept; the oldest go first. */
  maxEntries: number;
  now?: () => number;
}

interface Entry {
  token: Promise<Token>;
  expiresAt: number;
}

/**
 * TokenCache calls the provider once per tenant, user and scope the
 * operation needs, and again when the token is within refreshBeforeMs of
 * its expiry. A token whose expiry is unknown is not kept. Concurrent
 * calls for the same key share one call of the provider.
 */
export class TokenCache {
  readonly #provider: TokenProvider;
  readonly #opts: TokenCacheOptions;
  readonly #entries = new Map<string, Entry>();

  constructor(provider: TokenProvider, opts: TokenCacheOptions) {
    this.#provider = provider;
    this.#opts = opts;
  }

  /** get returns the token for operation on sc, from the cache when it is still fresh. */
  async get(sc: Scope, operation: Operation): Promise<Token> {
    const key = [sc.tenantId, sc.userId, needs(operation)].join("\u0000");
    const now = (this.#opts.now ?? Date.now)();
    const hit = this.#entries.get(key);
    if (hit && hit.expiresAt - this.#opts.refreshBeforeMs > now) {
      return hit.token;
    }
    const token = this.#provider({ tenantId: sc.tenantId, userId: sc.userId, operation });
    // Shared while it is pending; kept afterwards only with a known expiry.
    const entry: Entry = { token, expiresAt: Number.POSITIVE_INFINITY };
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    try {
      const tok = await token;
      const exp = tok.expiresAt instanceof Date ? tok.expiresAt.getTime() : (tok.expiresAt ?? jwtExpiry(tok.token));
      if (exp === undefined || !Number.isFinite(exp)) {
        this.#drop(key, entry);
      } else {
        entry.expiresAt = exp;
      }
      this.#trim();
      return tok;
    } catch (err) {
      this.#drop(key, entry);
      throw err;
    }
  }

  /** forget drops the token kept for operation on sc (after a 401: it was refused). */
  forget(sc: Scope, operation: Operation): void {
    this.#entries.delete([sc.tenantId, sc.userId, needs(operation)].join("\u0000"));
  }

  #drop(key: string, entry: Entry): void {
    if (this.#entries.get(key) === entry) {
      this.#entries.delete(key);
    }
  }

  #trim(): void {
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.#opts.maxEntries) {
        return;
      }
      this.#entries.delete(key);
    }
  }
}
