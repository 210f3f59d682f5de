// extract with the behaviour reference's arguments: no turn counts, turns
// as gateways shape them, a call meta of the gateway's own type. The
// message is uncounted: its watermark and deduplication ID come from the
// digest of its turns.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { Producer, ProducerError, UserMemoryStoreClient, deduplicationId, turnsDigest, type MemoryErrorReport, type Turn } from "../src/index.js";

/** A gateway's call meta: an interface, without an index signature. */
interface CallMeta {
  kind: string;
  requestId?: string;
  traceId?: string;
  costCenter: number;
}

const queueUrl = "https://sqs.example/123/q.fifo";

function client(sent: { input: Record<string, unknown> }[], send?: (input: Record<string, unknown>) => Promise<unknown>, reports: MemoryErrorReport[] = []) {
  return new UserMemoryStoreClient({
    apiUrl: "http://127.0.0.1:9", tokens: async () => ({ token: "t", scope: "me" }), queueUrl, onError: (r) => reports.push(r),
    fetch: async () => new Response(JSON.stringify({ facts: [], limits: { maxFacts: 30, maxFactChars: 200 } }), { status: 200 }),
    sqs: { send: async (cmd: { input: Record<string, unknown> }) => (sent.push(cmd), send?.(cmd.input)) } as never,
    retry: { baseDelayMs: 1 },
  });
}

/** digest is the contract's turns digest, written again from its words. */
function digest(turns: Turn[]): string {
  const parts: Buffer[] = [];
  for (const t of turns) {
    const text = Buffer.from(t.text, "utf8");
    parts.push(Buffer.from(t.role), Buffer.of(0), Buffer.from(String(text.length)), Buffer.of(0), text, Buffer.of(0));
  }
  return "#" + createHash("sha256").update(Buffer.concat(parts)).digest().subarray(0, 9).toString("base64url");
}

test("extract takes the reference's arguments: no counts, content or text, system turns dropped, any meta", async () => {
  const sent: { input: Record<string, unknown> }[] = [];
  const meta: CallMeta = { kind: "MEMORY_USER", requestId: "r-1", costCenter: 7 };
  const facts = await client(sent).extract({
    tenantId: "acme", userId: "ana", threadId: "th-1", cheapModelId: "us.amazon.nova-micro-v1:0", meta,
    turns: [
      { role: "system", content: "You are helpful." },
      { role: "developer", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "I live in Porto" }, { type: "image_url", image_url: "x" }, { type: "text", text: "and I'm a nurse" }] },
      { role: "assistant", content: null, tool_calls: [{ id: "c1" }] } as never,
      { role: "tool", content: undefined },
      { role: "assistant", text: " Noted. " },
    ],
  });
  assert.deepEqual(facts, []);
  assert.equal(sent.length, 1);
  const body = JSON.parse(sent[0]!.input.MessageBody as string) as Record<string, unknown>;
  assert.equal("previousTurnCount" in body || "turnCount" in body, false, "an uncounted message carries no count");
  const turns: Turn[] = [{ role: "user", text: "I live in Porto\nand I'm a nurse" }, { role: "assistant", text: "Noted." }];
  assert.deepEqual(body.turns, turns, "system and developer turns dropped, the tool turn and the empty answer left out by the transcript rule");
  assert.deepEqual(body.meta, { requestId: "r-1" });
  assert.equal(body.cheapModelId, undefined, "the gateway's cheap model is not forwarded by default");
  assert.equal(turnsDigest(turns), digest(turns));
  assert.equal(turnsDigest(turns)!.length, 13);
  assert.equal(sent[0]!.input.MessageDeduplicationId, deduplicationId("acme", "ana", "th-1", digest(turns)));
});

test("the same turns give the same deduplication ID; other turns another; counts, when given, are the watermark", () => {
  const p = new Producer(undefined, queueUrl, { now: () => new Date("2026-12-03T00:00:00Z") });
  const m = { tenantId: "acme", userId: "ana", threadId: "th-1", turns: [{ role: "user", text: "I live in Porto" }] };
  const a = p.build(m);
  assert.equal(p.build({ ...m, sentAt: "2026-12-03T01:00:00Z" }).deduplicationId, a.deduplicationId);
  assert.notEqual(p.build({ ...m, turns: [{ role: "user", text: "I live in Braga" }] }).deduplicationId, a.deduplicationId);
  // Trimmed as the extractor reads it: the same digest.
  assert.equal(p.build({ ...m, turns: [{ role: "user", text: "  I live in Porto\n" }] }).deduplicationId, a.deduplicationId);
  const counted = p.build({ ...m, previousTurnCount: 0, turnCount: 2 });
  assert.equal(counted.deduplicationId, deduplicationId("acme", "ana", "th-1", 2));
  assert.match(counted.body, /"previousTurnCount":0,"turnCount":2,/);
  for (const half of [{ previousTurnCount: 0 }, { turnCount: 2 }]) {
    assert.throws(() => p.build({ ...m, ...half }), (e: unknown) => e instanceof ProducerError && e.reason === "invalid");
  }
  assert.equal(turnsDigest([]), undefined);
});

test("counts given to extract are honoured; an unknown role is refused and reported; no turn left sends nothing", async () => {
  const sent: { input: Record<string, unknown> }[] = [];
  const reports: MemoryErrorReport[] = [];
  const c = client(sent, undefined, reports);
  await c.extract({ tenantId: "acme", userId: "ana", threadId: "t", previousTurnCount: 4, turnCount: 6, turns: [{ role: "user", text: "hi" }] });
  assert.equal(sent[0]!.input.MessageDeduplicationId, deduplicationId("acme", "ana", "t", 6));
  await assert.rejects(c.extract({ tenantId: "acme", userId: "ana", threadId: "t", turns: [{ role: "narrator", content: "x" }] }),
    (e: unknown) => e instanceof ProducerError && e.violations[0]?.pointer === "/turns/0/role");
  assert.deepEqual(reports.map((r) => [r.operation, r.served]), [["extract", "thrown"]]);
  await c.extract({ tenantId: "acme", userId: "ana", threadId: "t", turns: [{ role: "system", content: "only instructions" }] });
  assert.equal(sent.length, 1);
});

test("a throttled send is sent again, with the same deduplication ID", async () => {
  const sent: { input: Record<string, unknown> }[] = [];
  let n = 0;
  const throttled = async () => {
    if (n++ === 0) {
      throw Object.assign(new Error("throttled"), { name: "RequestThrottled", $metadata: { httpStatusCode: 400 } });
    }
    return {};
  };
  await client(sent, throttled).extract({ tenantId: "acme", userId: "ana", threadId: "t", turns: [{ role: "user", content: "I am Ana" }] });
  assert.equal(sent.length, 2);
  assert.equal(sent[0]!.input.MessageDeduplicationId, sent[1]!.input.MessageDeduplicationId);
});
