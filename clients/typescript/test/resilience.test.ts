// The client's policy against a local HTTP server that fails on purpose:
// retries with Retry-After, bounds, abort, the token cache and the
// getFacts fallback. The same policy meets the real service's faults in
// localtest/tse2e.

import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { UserMemoryError, UserMemoryStoreClient, classify, jwtExpiry, type ClientOptions, type MemoryErrorReport, type Token } from "../src/index.js";

let answer: (url: string, res: ServerResponse) => void = (_, res) => res.writeHead(204).end();
let hits = 0;
const server = createServer((req, res) => {
  hits++;
  req.resume().on("end", () => answer(req.url ?? "", res));
});
let apiUrl = "";
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const ana = { tenantId: "acme", userId: "ana" };
const fact = { key: "home_city", value: "Lisbon", updatedAt: "2026-12-02T00:00:00Z", origin: "conversation" as const };
const ok = (res: ServerResponse) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ facts: [fact], limits: { maxFacts: 30, maxFactChars: 200 } }));
const busy = (res: ServerResponse, status = 503, retryAfter?: string) =>
  res.writeHead(status, { "content-type": "application/problem+json", ...(retryAfter ? { "retry-after": retryAfter } : {}) })
    .end(JSON.stringify({ type: "about:blank", title: "busy", status, detail: "busy", code: 5380000000213 }));

function jwt(expSeconds: number): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "none" })}.${part({ sub: "ana", exp: expSeconds })}.`;
}

function store(opts: Partial<ClientOptions> = {}, reports: MemoryErrorReport[] = []) {
  return new UserMemoryStoreClient({
    apiUrl, tokens: async () => ({ token: "t", scope: "me" }), onError: (r) => reports.push(r),
    retry: { baseDelayMs: 10, maxDelayMs: 50, totalMs: 5000 }, ...opts,
  });
}

test("a 503 with Retry-After is retried after the time it asks for, and answers", async () => {
  hits = 0;
  let n = 0;
  answer = (_, res) => (n++ === 0 ? busy(res, 503, "1") : ok(res));
  const start = Date.now();
  assert.deepEqual(await store().getMemory(ana).then((m) => m.facts), [fact]);
  assert.ok(Date.now() - start >= 1000, `answered after ${Date.now() - start} ms, before the Retry-After`);
  assert.equal(hits, 2);
});

test("429, 502 and 504 are retried; 400 and 500 are not", async () => {
  for (const status of [429, 502, 504]) {
    let n = 0;
    answer = (_, res) => (n++ === 0 ? busy(res, status) : ok(res));
    assert.equal((await store({ strict: true }).getFacts(ana)).length, 1, String(status));
  }
  for (const status of [400, 500]) {
    hits = 0;
    answer = (_, res) => busy(res, status);
    await assert.rejects(store({ strict: true }).getFacts(ana), (e: unknown) => e instanceof UserMemoryError && e.status === status);
    assert.equal(hits, 1, `${status} was tried ${hits} times`);
  }
});

test("the attempts are bounded in number and in total time", async () => {
  hits = 0;
  answer = (_, res) => busy(res);
  await assert.rejects(store({ strict: true, retry: { maxAttempts: 3, baseDelayMs: 1 } }).getFacts(ana), UserMemoryError);
  assert.equal(hits, 3);
  hits = 0;
  answer = (_, res) => busy(res, 503, "5");
  const start = Date.now();
  await assert.rejects(store({ strict: true, retry: { totalMs: 1000 } }).getFacts(ana), UserMemoryError);
  assert.ok(Date.now() - start < 1000, "a Retry-After past the total time is not waited for");
  assert.equal(hits, 1);
});

test("a network error is retried", async () => {
  let calls = 0;
  const flaky: typeof fetch = async (input, init) => {
    if (calls++ === 0) {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) });
    }
    return fetch(input, init);
  };
  answer = (_, res) => ok(res);
  assert.equal((await store({ fetch: flaky, strict: true }).getFacts(ana)).length, 1);
  assert.equal(calls, 2);
  assert.equal(classify(new TypeError("fetch failed")).retry, true);
});

test("an attempt that hangs times out and is tried again; a caller's abort ends the call at once", async () => {
  let n = 0;
  answer = (_, res) => (n++ === 0 ? undefined : ok(res)); // the first request never answers
  assert.equal((await store({ strict: true, retry: { attemptTimeoutMs: 200, baseDelayMs: 1 } }).getFacts(ana)).length, 1);

  answer = () => undefined;
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(new Error("user left")), 100);
  const start = Date.now();
  await assert.rejects(store().getFacts({ ...ana, signal: ctl.signal }), /user left/);
  assert.ok(Date.now() - start < 1000);

  answer = (_, res) => busy(res, 503, "3");
  const ctl2 = new AbortController();
  setTimeout(() => ctl2.abort(new Error("user left during the wait")), 200);
  await assert.rejects(store().upsertFact({ ...ana, key: "k", value: "v", signal: ctl2.signal }), /during the wait/);
  await assert.rejects(store().clear({ ...ana, signal: AbortSignal.abort(new Error("before")) }), /before/);
});

test("getFacts answers from the last-known copy, or [], and reports the error; strict throws", async () => {
  const reports: MemoryErrorReport[] = [];
  const s = store({ retry: { maxAttempts: 2, baseDelayMs: 1 } }, reports);
  answer = (_, res) => ok(res);
  assert.deepEqual(await s.getFacts(ana), [fact]);
  answer = (_, res) => busy(res);
  assert.deepEqual(await s.getFacts(ana), [fact]);
  assert.deepEqual(await s.getFacts({ tenantId: "acme", userId: "bob" }), []);
  assert.deepEqual(reports.map((r) => [r.userId, r.operation, r.served, (r.error as UserMemoryError).status]), [
    ["ana", "getFacts", "last-known", 503], ["bob", "getFacts", "empty", 503],
  ]);
  // A write makes the copy stale: it is dropped.
  await s.upsertFact({ ...ana, key: "k", value: "v" }).catch(() => undefined);
  assert.deepEqual(await s.getFacts(ana), []);

  const old = store({ lastKnownMs: 0, retry: { maxAttempts: 1 } }, reports);
  answer = (_, res) => ok(res);
  await old.getFacts(ana);
  await new Promise((r) => setTimeout(r, 5));
  answer = (_, res) => busy(res);
  assert.deepEqual(await old.getFacts(ana), [], "a copy older than lastKnownMs is not served");
  await assert.rejects(store({ strict: true, retry: { maxAttempts: 1 } }).getFacts(ana), UserMemoryError);
});

test("tokens are kept per tenant, user and scope until shortly before they expire", async () => {
  answer = (_, res) => ok(res);
  const asked: string[] = [];
  let exp = Math.floor(Date.now() / 1000) + 3600;
  const s = store({
    tokens: async ({ userId, operation }) => {
      asked.push(`${userId}:${operation}`);
      return operation === "deleteByUser" ? { token: jwt(exp), scope: "admin" } : { token: jwt(exp), scope: "me" };
    },
  });
  await s.getFacts(ana);
  await s.getFacts(ana);
  await s.upsertFact({ ...ana, key: "k", value: "v" });
  await s.getFacts({ tenantId: "acme", userId: "bob" });
  await Promise.all([s.getFacts({ tenantId: "other", userId: "ana" }), s.getFacts({ tenantId: "other", userId: "ana" })]);
  assert.deepEqual(asked, ["ana:getFacts", "bob:getFacts", "ana:getFacts"]);
  // Within the refresh margin of its expiry, a token is asked for again.
  exp = Math.floor(Date.now() / 1000) + 30;
  asked.length = 0;
  const soon = store({ tokens: async () => (asked.push("x"), { token: jwt(exp), scope: "me" }) });
  await soon.getFacts(ana);
  await soon.getFacts(ana);
  assert.equal(asked.length, 2);
  // An expiry the provider gives wins; a token without any is not kept.
  asked.length = 0;
  const given = store({ tokens: async () => (asked.push("x"), { token: "opaque", scope: "me", expiresAt: new Date(Date.now() + 600_000) }) });
  await given.getFacts(ana);
  await given.getFacts(ana);
  assert.equal(asked.length, 1);
  const opaque = store({ tokens: async () => (asked.push("y"), { token: "opaque", scope: "me" } satisfies Token) });
  await opaque.getFacts(ana);
  await opaque.getFacts(ana);
  assert.deepEqual(asked, ["x", "y", "y"]);
  assert.equal(jwtExpiry(jwt(1700000000)), 1700000000_000);
  assert.equal(jwtExpiry("not a jwt"), undefined);
});

test("a refused token is dropped and asked for once more", async () => {
  let n = 0;
  answer = (_, res) => (n++ === 0 ? res.writeHead(401, { "content-type": "application/json" }).end('{"message":"Unauthorized"}') : ok(res));
  let asked = 0;
  const s = store({ strict: true, tokens: async () => (asked++, { token: jwt(Math.floor(Date.now() / 1000) + 3600), scope: "me" }) });
  await s.getFacts(ana);
  assert.deepEqual(await s.getFacts(ana), [fact]);
  assert.equal(asked, 2);
  assert.equal(n, 3);
});
