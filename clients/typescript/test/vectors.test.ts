// The shared vectors: this package builds every message and answers every
// isExtractDue case exactly as the Go packages do (the repository's
// testdata/producer-vectors), and every message it builds validates against
// the message's JSON Schema; both copied into shared/ (npm run sync).

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Producer, ProducerError, isExtractDue, type MessageInput } from "../src/index.js";

/** shared resolves a path of the package's shared/ folder (this file runs from dist/test/). */
export function shared(path: string): URL {
  return new URL("../../shared/" + path, import.meta.url);
}

function readJSON<T>(path: string): T {
  return JSON.parse(readFileSync(shared(path), "utf8")) as T;
}

interface MessageVector {
  name: string;
  queueUrl?: string;
  maxBytes?: number;
  transcriptChars?: number;
  attributes?: Record<string, string>;
  message: MessageInput;
  want?: { groupId: string; deduplicationId: string; bodyBytes: number; bodySha256: string; body?: string };
  error?: string;
}

const vectors = readJSON<{ now: string; queueUrl: string; messages: MessageVector[] }>("producer-vectors/messages.json");

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats.default(ajv);
const validSchema = ajv.compile(readJSON<object>("extraction-message.v1.json"));

test("the vectors hold every case", () => {
  assert.ok(vectors.messages.length >= 40, `${vectors.messages.length} message vectors`);
});

for (const v of vectors.messages) {
  test(`message vector: ${v.name}`, () => {
    const producer = new Producer(undefined, v.queueUrl ?? vectors.queueUrl, {
      maxBytes: v.maxBytes,
      transcriptChars: v.transcriptChars,
      attributes: v.attributes,
      now: () => new Date(vectors.now),
    });
    if (v.error !== undefined) {
      assert.throws(() => producer.build(v.message), (err: unknown) => err instanceof ProducerError && err.reason === v.error);
      return;
    }
    const got = producer.build(v.message);
    const want = v.want!;
    if (want.body !== undefined) {
      assert.equal(got.body, want.body);
    }
    assert.equal(Buffer.byteLength(got.body, "utf8"), want.bodyBytes, "body bytes");
    assert.equal(createHash("sha256").update(got.body, "utf8").digest("hex"), want.bodySha256, "body SHA-256");
    assert.equal(got.groupId, want.groupId);
    assert.equal(got.deduplicationId, want.deduplicationId);
    assert.ok(validSchema(JSON.parse(got.body)), ajv.errorsText(validSchema.errors));
  });
}

test("isExtractDue answers as memory.Store.IsExtractDue on every shared case", () => {
  const due = readJSON<{ configs: { extractEveryTurns: number; extractionDisabled: boolean; cases: [number, number, number][] }[] }>(
    "producer-vectors/due.json",
  );
  let n = 0;
  for (const c of due.configs) {
    for (const [prev, count, want] of c.cases) {
      assert.equal(isExtractDue(c, prev, count), want === 1, `every ${c.extractEveryTurns}, disabled ${c.extractionDisabled}: (${prev}, ${count})`);
      n++;
    }
  }
  assert.ok(n >= 500, `${n} cases`);
});
