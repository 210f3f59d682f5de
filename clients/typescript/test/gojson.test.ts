// Go's encoding where the shared vectors cannot reach: strings that are
// not well-formed and times that are not valid.

import assert from "node:assert/strict";
import { test } from "node:test";
import { goString, goTime } from "../src/gojson.js";
import { Producer, ProducerError } from "../src/index.js";

test("a lone surrogate encodes as Go encodes invalid UTF-8: \\ufffd", () => {
  assert.equal(goString("a\uD800b\uDC00c\uD83D\uDE00"), '"a\\ufffdb\\ufffdc\uD83D\uDE00"');
});

test("goTime writes UTC with the fraction's trailing zeros left out", () => {
  const cases: [Date | string, string | undefined][] = [
    [new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600)), "2026-01-02T03:04:05.6Z"],
    [new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 0)), "2026-01-02T03:04:05Z"],
    ["2024-02-29T23:30:00.000000001-01:00", "2024-03-01T00:30:00.000000001Z"],
    ["0001-01-01T00:30:00+00:30", "0001-01-01T00:00:00Z"],
    ["2026-02-29T00:00:00Z", undefined],
    ["2026-13-01T00:00:00Z", undefined],
    ["2026-01-01T24:00:00Z", undefined],
    ["2026-01-01T00:00:00.1234567891Z", undefined],
    ["2026-01-01 00:00:00Z", undefined],
    [new Date(Number.NaN), undefined],
  ];
  for (const [t, want] of cases) {
    assert.equal(goTime(t), want, String(t));
  }
});

test("build refuses text that is not well-formed, and an invalid sentAt, naming where", () => {
  const p = new Producer(undefined, "https://sqs.example/q.fifo");
  const m = { tenantId: "acme", userId: "ana", threadId: "t", previousTurnCount: 0, turnCount: 1 };
  assert.throws(() => p.build({ ...m, turns: [{ role: "user", text: "a\uD800" }] }),
    (e: unknown) => e instanceof ProducerError && e.reason === "invalid" && e.violations[0]?.pointer === "/turns/0/text");
  assert.throws(() => p.build({ ...m, turns: [], sentAt: "yesterday" }),
    (e: unknown) => e instanceof ProducerError && e.violations[0]?.pointer === "/sentAt");
  assert.throws(() => p.build({ ...m, turnCount: 1.5, turns: [] }),
    (e: unknown) => e instanceof ProducerError && e.violations[0]?.pointer === "/turnCount");
});
