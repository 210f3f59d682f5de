// UserMemoryStoreClient against a local HTTP server that answers as the
// fact API does, and an SQS client that records what it is sent. The real
// service is in the end-to-end test (localtest/tse2e).

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { Producer, ProducerError, UserMemoryError, UserMemoryStoreClient, type RetryOptions, type Token } from "../src/index.js";

interface Seen {
  method: string;
  url: string;
  authorization: string;
  body: string;
}

const seen: Seen[] = [];
let answer: (req: Seen, res: ServerResponse) => void = (_, res) => res.writeHead(204).end();
const server = createServer((req: IncomingMessage, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString("utf8")));
  req.on("end", () => {
    const s = { method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization ?? "", body };
    seen.push(s);
    answer(s, res);
  });
});
let apiUrl = "";

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
after(() => server.close());

const json = (res: ServerResponse, status: number, body: unknown, type = "application/json", headers: Record<string, string> = {}) =>
  res.writeHead(status, { "content-type": type, ...headers }).end(JSON.stringify(body));

const fact = { key: "home_city", value: "Lisbon", updatedAt: "2026-12-02T00:00:00Z", origin: "conversation" as const, sourceThreadId: "th-1", sourceThreadTitle: "Trip" };

const operations: string[] = [];

function client(scope: Token["scope"], sent: unknown[] = [], retry?: RetryOptions) {
  const sqs = { send: async (cmd: { input: unknown }) => void sent.push(cmd.input) };
  return new UserMemoryStoreClient({
    apiUrl, tokens: async ({ tenantId, userId, operation }) => {
      operations.push(operation);
      return { token: `${scope}:${tenantId}:${userId}`, scope };
    },
    sqs: sqs as never, queueUrl: "https://sqs.example/123/q.fifo", forwardCheapModelId: true, ...(retry ? { retry } : {}),
  });
}

test("a user's token uses the /v1/me routes; the key is percent-encoded", async () => {
  seen.length = 0;
  operations.length = 0;
  answer = (s, res) => (s.method === "GET" ? json(res, 200, { facts: [fact], limits: { maxFacts: 30, maxFactChars: 200 } }) : json(res, 200, { fact }));
  const c = client("me");
  assert.deepEqual(await c.getFacts({ tenantId: "acme", userId: "ana" }), [fact]);
  await c.upsertFact({ tenantId: "acme", userId: "ana", key: "home city/é", value: "Porto" });
  await c.upsertFact({ tenantId: "acme", userId: "ana", key: "pet", value: "cat", origin: "remember_tool" });
  answer = (_, res) => res.writeHead(204).end();
  await c.removeFact({ tenantId: "acme", userId: "ana", key: "home city/é" });
  await c.clear({ tenantId: "acme", userId: "ana" });
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.body}`), [
    "GET /v1/me/facts ",
    'PUT /v1/me/facts/home%20city%2F%C3%A9 {"value":"Porto"}',
    'PUT /v1/me/facts/pet {"value":"cat","origin":"remember_tool"}',
    "DELETE /v1/me/facts/home%20city%2F%C3%A9 ",
    "DELETE /v1/me/facts ",
  ]);
  assert.ok(seen.every((s) => s.authorization === "Bearer me:acme:ana"));
  assert.deepEqual(operations, ["getFacts", "upsertFact", "upsertFact", "removeFact", "clear"]);
});

const exported = {
  format: 1, exportedAt: "2026-12-02T01:00:00Z", tenantId: "acme", userId: "ana@x", facts: [fact],
  forgotten: [{ key: "pet", forgottenAt: "2026-12-01T00:00:00Z" }], threads: [{ threadKey: "th-1", turnCount: 2, extractedAt: "2026-12-01T00:00:00Z" }],
};

test("exportData reads /v1/me/export with a user's token, /v1/users/{userId}/export with an admin's", async () => {
  seen.length = 0;
  operations.length = 0;
  answer = (s, res) => (s.url.endsWith("/export") ? json(res, 200, exported) : res.writeHead(404).end());
  assert.deepEqual(await client("me").exportData({ tenantId: "acme", userId: "ana@x" }), exported);
  assert.deepEqual(await client("admin").exportData({ tenantId: "acme", userId: "ana@x" }), exported);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.authorization}`), [
    "GET /v1/me/export Bearer me:acme:ana@x",
    "GET /v1/users/ana%40x/export Bearer admin:acme:ana@x",
  ]);
  assert.deepEqual(operations, ["exportData", "exportData"]);
});

test("an admin token uses the /v1/users/{userId} routes, and erases", async () => {
  seen.length = 0;
  const erased = { removedFacts: 3, erasedAt: "2026-12-02T01:00:00Z", backupsUntil: "2027-01-06T01:00:00Z", queuedMessagesUntil: "2026-12-30T01:00:00Z" };
  answer = (s, res) => (s.method === "DELETE" && s.url === "/v1/users/ana%40x" ? json(res, 200, erased) : res.writeHead(204).end());
  const c = client("admin");
  await c.clear({ tenantId: "acme", userId: "ana@x" });
  assert.equal(await c.deleteByUser({ tenantId: "acme", userId: "ana@x" }), 3);
  assert.deepEqual(await c.eraseUser({ tenantId: "acme", userId: "ana@x" }), erased);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), ["DELETE /v1/users/ana%40x/facts", "DELETE /v1/users/ana%40x", "DELETE /v1/users/ana%40x"]);
});

test("forgetThread deletes the thread's facts on the user's or the admin's route and returns what was forgotten", async () => {
  seen.length = 0;
  operations.length = 0;
  const forgotten = { threadId: "th 1/é", forgottenAt: "2026-12-02T01:00:00Z", facts: [fact], pending: [] };
  answer = (s, res) => (s.method === "DELETE" && s.url.endsWith("/facts") ? json(res, 200, forgotten) : res.writeHead(404).end());
  assert.deepEqual(await client("me").forgetThread({ tenantId: "acme", userId: "ana@x", threadId: "th 1/é" }), forgotten);
  assert.deepEqual(await client("admin").forgetThread({ tenantId: "acme", userId: "ana@x", threadId: "th-1" }), forgotten);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [
    "DELETE /v1/me/threads/th%201%2F%C3%A9/facts",
    "DELETE /v1/users/ana%40x/threads/th-1/facts",
  ]);
  assert.deepEqual(operations, ["forgetThread", "forgetThread"]);
});

test("threadChanges reads the thread's changes since a time on the user's or the admin's route", async () => {
  seen.length = 0;
  operations.length = 0;
  const changes = { threadId: "th 1/é", changes: [{ key: "city", value: "Porto", previous: "Lisbon", at: "2026-12-02T01:00:00Z" }] };
  answer = (s, res) => (s.method === "GET" && s.url.includes("/changes") ? json(res, 200, changes) : res.writeHead(404).end());
  assert.deepEqual(await client("me").threadChanges({ tenantId: "acme", userId: "ana@x", threadId: "th 1/é", since: new Date("2026-12-02T00:59:00Z") }), changes);
  assert.deepEqual(await client("admin").threadChanges({ tenantId: "acme", userId: "ana@x", threadId: "th-1", since: "2026-12-02T00:59:00+01:00" }), changes);
  assert.deepEqual(await client("me").threadChanges({ tenantId: "acme", userId: "ana@x", threadId: "th-1" }), changes);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [
    "GET /v1/me/threads/th%201%2F%C3%A9/changes?since=2026-12-02T00%3A59%3A00.000Z",
    "GET /v1/users/ana%40x/threads/th-1/changes?since=2026-12-02T00%3A59%3A00%2B01%3A00",
    "GET /v1/me/threads/th-1/changes",
  ]);
  assert.deepEqual(operations, ["threadChanges", "threadChanges", "threadChanges"]);
});

test("undoChange posts the undo of the thread's setting of a key and returns what it did", async () => {
  seen.length = 0;
  operations.length = 0;
  const undone = { threadId: "th-1", key: "home city", restored: "Lisbon", removed: false };
  answer = (s, res) => (s.method === "POST" && s.url.endsWith("/undo") ? json(res, 200, undone) : res.writeHead(404).end());
  assert.deepEqual(await client("me").undoChange({ tenantId: "acme", userId: "ana@x", threadId: "th-1", key: "home city" }), undone);
  assert.deepEqual(await client("admin").undoChange({ tenantId: "acme", userId: "ana@x", threadId: "th-1", key: "home city" }), undone);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [
    "POST /v1/me/threads/th-1/changes/home%20city/undo",
    "POST /v1/users/ana%40x/threads/th-1/changes/home%20city/undo",
  ]);
  assert.deepEqual(operations, ["undoChange", "undoChange"]);
});

test("deleteByUser with a user's token is refused before any call", async () => {
  seen.length = 0;
  await assert.rejects(client("me").deleteByUser({ tenantId: "acme", userId: "ana" }), /admin scope/);
  await assert.rejects(client("me").eraseUser({ tenantId: "acme", userId: "ana" }), /admin scope/);
  assert.equal(seen.length, 0);
});

test("errors carry the service's status, code and userMessage", async () => {
  const problem = { type: "about:blank", title: "Bad Request", status: 400, detail: "value too long", code: 5377210486159, userMessage: "At most 200 characters." };
  answer = (_, res) => json(res, 400, problem, "application/problem+json");
  const err = await client("me").upsertFact({ tenantId: "acme", userId: "ana", key: "k", value: "v".repeat(201) }).catch((e: unknown) => e);
  assert.ok(err instanceof UserMemoryError);
  assert.deepEqual([err.status, err.code, err.userMessage], [400, 5377210486159, "At most 200 characters."]);

  answer = (_, res) => json(res, 503, { ...problem, status: 503, code: 5380000000213 }, "application/problem+json", { "retry-after": "2" });
  const busy = await client("me", [], { maxAttempts: 1 }).getMemory({ tenantId: "acme", userId: "ana" }).catch((e: unknown) => e);
  assert.ok(busy instanceof UserMemoryError);
  assert.deepEqual([busy.status, busy.code, busy.retryAfterSeconds], [503, 5380000000213, 2]);

  answer = (_, res) => json(res, 401, { message: "Unauthorized" });
  const gw = await client("me").getMemory({ tenantId: "acme", userId: "ana" }).catch((e: unknown) => e);
  assert.ok(gw instanceof UserMemoryError);
  assert.deepEqual([gw.status, gw.code, gw.message], [401, undefined, "usermemory: 401 Unauthorized"]);
});

test("extract sends the message the producer builds and returns the facts stored now", async () => {
  answer = (_, res) => json(res, 200, { facts: [fact], limits: { maxFacts: 30, maxFactChars: 200 } });
  const sent: unknown[] = [];
  const args = {
    tenantId: "acme", userId: "ana", threadId: "th-2", threadTitle: "Moving <north>", previousTurnCount: 0, turnCount: 2,
    turns: [{ role: "user", text: "I moved to Porto" }, { role: "assistant", text: "Nice!" }],
    cheapModelId: "us.amazon.nova-micro-v1:0", meta: { kind: "MEMORY_USER", traceId: "t-1" }, sentAt: "2026-12-02T00:00:00Z",
  };
  assert.deepEqual(await client("me", sent).extract(args), [fact]);
  const built = new Producer(undefined, "https://sqs.example/123/q.fifo").build({ ...args, meta: { traceId: "t-1" } });
  assert.deepEqual(sent, [{
    QueueUrl: "https://sqs.example/123/q.fifo", MessageBody: built.body,
    MessageGroupId: "acme/ana", MessageDeduplicationId: built.deduplicationId,
  }]);
  assert.match(built.body, /"meta":\{"traceId":"t-1"\}\}$/);
  assert.match(built.body, /"threadId":"th-2","threadTitle":"Moving \\u003cnorth\\u003e",/);
});

test("a thread title that is not valid Unicode or not a string is refused, naming /threadTitle", () => {
  // A lone surrogate is JavaScript's form of what Go refuses as invalid
  // UTF-8; JSON cannot carry it into the shared vectors (Go's decoder
  // reads it as U+FFFD).
  const p = new Producer(undefined, "https://sqs.example/123/q.fifo");
  const m = { tenantId: "acme", userId: "ana", threadId: "t", previousTurnCount: 0, turnCount: 1, turns: [{ role: "user", text: "hi" }] };
  for (const threadTitle of ["Trip \ud83d", "\ude00 Trip", 7 as unknown as string]) {
    assert.throws(() => p.build({ ...m, threadTitle }), (e: unknown) =>
      e instanceof ProducerError && e.reason === "invalid" && e.violations.map((v) => v.pointer).join() === "/threadTitle");
  }
  assert.match(p.build({ ...m, threadTitle: "Trip \ud83d\ude00" }).body, /"threadTitle":"Trip 😀"/);
});

test("isExtractDue uses the configured beat; a beat the service refuses throws", () => {
  const c = new UserMemoryStoreClient({ apiUrl, tokens: async () => ({ token: "", scope: "me" }), extractEveryTurns: 4 });
  assert.deepEqual([[0, 2], [2, 3], [3, 4], [2, 9]].map(([p, n]) => c.isExtractDue({ previousTurnCount: p!, turnCount: n! })), [true, false, true, true]);
  assert.throws(() => new UserMemoryStoreClient({ apiUrl, tokens: async () => ({ token: "", scope: "me" }), extractEveryTurns: 0 }), RangeError);
});

test("a send that SQS does not answer in time is a ProducerError timeout", async () => {
  const stalled = {
    send: (_: unknown, opts?: { abortSignal?: AbortSignal }) =>
      new Promise((_, reject) => opts?.abortSignal?.addEventListener("abort", () => reject(new Error("aborted")))),
  };
  const p = new Producer(stalled as never, "https://sqs.example/123/q.fifo", { sendTimeoutMs: 50 });
  const m = { tenantId: "acme", userId: "ana", threadId: "t", previousTurnCount: 0, turnCount: 1, turns: [{ role: "user", text: "hi" }] };
  await assert.rejects(p.send(m), (e: unknown) => e instanceof ProducerError && e.reason === "timeout");
});

test("getMemory reads the facts and the pending facts; getFacts only the facts", async () => {
  seen.length = 0;
  const pending = { ...fact, key: "health_condition", value: "asthma", evidence: "I have asthma", category: "health" as const, saidAt: "2026-12-02T19:31:00Z", pendingUntil: "2026-12-09T00:00:00Z" };
  const body = { facts: [fact], pending: [pending], limits: { maxFacts: 30, maxFactChars: 200 } };
  answer = (_, res) => json(res, 200, body);
  const c = client("me");
  assert.deepEqual(await c.getMemory({ tenantId: "acme", userId: "ana" }), body);
  assert.deepEqual(await c.getFacts({ tenantId: "acme", userId: "ana" }), [fact]);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), ["GET /v1/me/facts", "GET /v1/me/facts"]);
});

test("keepPending and discardPending answer for the user with the user's token", async () => {
  seen.length = 0;
  operations.length = 0;
  const kept = { ...fact, key: "health condition" };
  answer = (s, res) => (s.method === "POST" ? json(res, 200, { fact: kept }) : res.writeHead(204).end());
  const c = client("me");
  assert.deepEqual(await c.keepPending({ tenantId: "acme", userId: "ana", key: "health condition" }), kept);
  await c.discardPending({ tenantId: "acme", userId: "ana", key: "a/b" });
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.body}`), [
    "POST /v1/me/pending/health%20condition/keep ",
    "DELETE /v1/me/pending/a%2Fb ",
  ]);
  assert.deepEqual(operations, ["keepPending", "discardPending"]);
});

test("keepPending and discardPending with an admin's token are refused before any call", async () => {
  seen.length = 0;
  const c = client("admin");
  await assert.rejects(c.keepPending({ tenantId: "acme", userId: "ana", key: "k" }), /only the user answers/);
  await assert.rejects(c.discardPending({ tenantId: "acme", userId: "ana", key: "k" }), /only the user answers/);
  assert.equal(seen.length, 0);
});

test("upsertFact sends validUntil only when given; a 404 of keepPending carries its code", async () => {
  seen.length = 0;
  answer = (s, res) =>
    s.method === "PUT"
      ? json(res, 200, { fact })
      : json(res, 404, { type: "about:blank", title: "Not Found", status: 404, detail: "no pending fact has this key", code: 5380000000111, userMessage: "This is no longer waiting for your answer." }, "application/problem+json");
  const c = client("me");
  await c.upsertFact({ tenantId: "acme", userId: "ana", key: "city", value: "Paris", validUntil: "2026-12-05" });
  await c.upsertFact({ tenantId: "acme", userId: "ana", key: "city", value: "Paris" });
  assert.deepEqual(seen.map((s) => s.body), ['{"value":"Paris","validUntil":"2026-12-05"}', '{"value":"Paris"}']);
  await assert.rejects(c.keepPending({ tenantId: "acme", userId: "ana", key: "k" }), (e: unknown) => e instanceof UserMemoryError && e.status === 404 && e.code === 5380000000111);
});

test("upsertFact refuses a validUntil that is not a date alone before sending anything", async () => {
  seen.length = 0;
  answer = (_, res) => json(res, 200, { fact });
  const c = client("me");
  for (const bad of ["2026-12-09T23:25:53Z", "2026-2-9", "2026-02-30", "20261209", "", " 2026-12-09", "next friday"]) {
    await assert.rejects(c.upsertFact({ tenantId: "acme", userId: "ana", key: "city", value: "Paris", validUntil: bad }),
      (e: unknown) => e instanceof UserMemoryError && e.status === 400 && e.code === 5380000000112, `validUntil ${JSON.stringify(bad)}`);
  }
  assert.equal(seen.length, 0);
  await c.upsertFact({ tenantId: "acme", userId: "ana", key: "city", value: "Paris", validUntil: "2028-02-29" });
  assert.deepEqual(seen.map((s) => s.body), ['{"value":"Paris","validUntil":"2028-02-29"}']);
});

test("the four calls of an import use the user's own routes and return what the service answers", async () => {
  seen.length = 0;
  operations.length = 0;
  const view = { importId: "imp-1765000000000-ab12", source: "ChatGPT", status: "queued", requestedAt: "2026-12-07T01:00:00Z", parts: 0, statements: 0, proposed: 0,
    leftOut: { secrets: 0, instructions: 0, unsupported: 0, ended: 0, known: 0, declined: 0, deletes: 0, skipped: 0, overCap: 0, noRoom: 0 } };
  const imported = { ...fact, key: "role", value: "doctor", origin: "imported", sourceThreadId: view.importId, sourceThreadTitle: "ChatGPT",
    evidence: "The user works as a doctor", pendingUntil: "2026-12-14T01:00:00Z" };
  const review = { import: { ...view, status: "done", parts: 1, proposed: 1, doneAt: "2026-12-07T01:00:05Z" }, pending: [imported], replaces: { role: "nurse" } };
  answer = (s, res) => {
    if (s.method === "POST" && s.url === "/v1/me/imports") return json(res, 202, { import: view }, "application/json", { location: "/v1/me/imports/" + view.importId });
    if (s.method === "GET") return json(res, 200, review);
    if (s.method === "POST") return json(res, 200, { kept: [imported] });
    return json(res, 200, { discarded: 2 });
  };
  const c = client("me");
  const sc = { tenantId: "acme", userId: "ana@x" };
  assert.deepEqual(await c.importMemory({ ...sc, source: "ChatGPT", text: "The user works as a doctor." }), view);
  assert.deepEqual(await c.importMemory({ ...sc, source: "Le Chat", statements: ["The user works as a doctor."] }), view);
  assert.deepEqual(await c.getImport({ ...sc, importId: view.importId }), review);
  assert.deepEqual(await c.keepImport({ ...sc, importId: view.importId }), [imported]);
  assert.equal(await c.discardImport({ ...sc, importId: "imp 1/é" }), 2);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.body}`), [
    `POST /v1/me/imports {"source":"ChatGPT","text":"The user works as a doctor."}`,
    `POST /v1/me/imports {"source":"Le Chat","statements":["The user works as a doctor."]}`,
    `GET /v1/me/imports/${view.importId} `,
    `POST /v1/me/imports/${view.importId}/keep `,
    "DELETE /v1/me/imports/imp%201%2F%C3%A9/pending ",
  ]);
  assert.deepEqual(operations, ["importMemory", "importMemory", "getImport", "keepImport", "discardImport"]);
});

test("an import with an admin token is refused before any call: it is the user's consent", async () => {
  seen.length = 0;
  const c = client("admin");
  await assert.rejects(c.importMemory({ tenantId: "acme", userId: "ana", source: "Claude", text: "The user likes tea." }), /user's own token/);
  await assert.rejects(c.keepImport({ tenantId: "acme", userId: "ana", importId: "imp-1" }), /user's own token/);
  assert.equal(seen.length, 0);
});

test("an import over the service's limit is the service's 413, with its code", async () => {
  answer = (_, res) => json(res, 413, { title: "Payload Too Large", status: 413, code: 5380000000115, userMessage: "The list is too long." }, "application/problem+json");
  await assert.rejects(client("me").importMemory({ tenantId: "acme", userId: "ana", source: "Gemini", text: "x" }),
    (err: unknown) => err instanceof UserMemoryError && err.status === 413 && err.code === 5380000000115);
});
