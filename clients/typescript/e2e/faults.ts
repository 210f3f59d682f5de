// The client's policy against the local stack's fault injection
// (localtest/tse2e runs it): the API's answers during a DynamoDB stall are
// 503s with Retry-After, which the client rides out; a caller's abort ends
// a call at once; getFacts answers from the last-known copy, or [], while
// the service cannot answer. Each step prints one line the Go test reads.

import { SQSClient } from "@aws-sdk/client-sqs";
import { UserMemoryStoreClient, type MemoryErrorReport, type RetryOptions } from "../src/index.js";

function env(name: string): string {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set`);
  }
  return v;
}

/** fault sets a fault of the stack (PUT faultUrl/{service}), or clears it when spec is undefined. */
async function fault(service: string, spec?: { kind: string; for?: string; requests?: number }): Promise<void> {
  const res = await fetch(`${env("USERMEMORY_FAULT_URL").replace(/\/+$/, "")}/${service}`, {
    method: spec ? "PUT" : "DELETE",
    headers: { "content-type": "application/json" },
    body: spec ? JSON.stringify(spec) : undefined,
  });
  if (!res.ok) {
    throw new Error(`fault ${service}: ${res.status} ${await res.text()}`);
  }
}

const step = (what: string, detail: unknown) => console.log(`${what}: ${JSON.stringify(detail)}`);
const seconds = (since: number) => Math.round((Date.now() - since) / 100) / 10;

/** main runs the steps against the stack named by the environment. */
export async function main(): Promise<void> {
  const sc = { tenantId: env("USERMEMORY_TENANT"), userId: env("USERMEMORY_USER") };
  const reports: MemoryErrorReport[] = [];
  const sqs = new SQSClient({ region: env("AWS_REGION"), endpoint: env("USERMEMORY_SQS_ENDPOINT"),
    credentials: { accessKeyId: "test", secretAccessKey: "test" }, maxAttempts: 1 });
  const store = (retry?: RetryOptions) => new UserMemoryStoreClient({
    apiUrl: env("USERMEMORY_API_URL"), tokens: async () => ({ token: env("USERMEMORY_USER_TOKEN"), scope: "me" }),
    sqs, queueUrl: env("USERMEMORY_QUEUE_URL"),
    onError: (r) => reports.push(r), ...(retry ? { retry } : {}),
  });
  const client = store();
  await client.upsertFact({ ...sc, key: "home_city", value: "Lisbon" });
  step("read before the faults", (await client.getFacts(sc)).map((f) => f.key));

  // A stall shorter than the policy's total: the API answers 503 with
  // Retry-After, the client waits and tries again, and gets the facts.
  // The attempts may last 9 s here, so an answer within that came through
  // the 503 and its Retry-After, not through an attempt's timeout.
  await fault("dynamodb", { kind: "stall", for: "4s" });
  let start = Date.now();
  const memory = await store({ attemptTimeoutMs: 9000, totalMs: 15_000 }).getMemory(sc);
  step("getMemory through a 4 s stall", { facts: memory.facts.map((f) => f.key), seconds: seconds(start) });
  await fault("dynamodb");

  // A caller's abort ends the call at once, during a stall.
  await fault("dynamodb", { kind: "stall", for: "8s" });
  start = Date.now();
  const err = await client.getMemory({ ...sc, signal: AbortSignal.timeout(300) }).then(() => undefined, (e: unknown) => e);
  step("aborted after 300 ms", { name: (err as Error | undefined)?.name, seconds: seconds(start) });

  // During the same stall, getFacts answers within its bound: the
  // last-known copy, or [] for a client that never read the user.
  const bounded = { totalMs: 3000, attemptTimeoutMs: 2000 };
  const known = store(bounded);
  await fault("dynamodb");
  await known.getFacts(sc);
  await fault("dynamodb", { kind: "stall", for: "8s" });
  start = Date.now();
  const lastKnown = await known.getFacts(sc);
  step("getFacts during a stall", { facts: lastKnown.map((f) => f.key), seconds: seconds(start) });
  const empty = await store(bounded).getFacts(sc);
  step("getFacts during a stall, never read before", empty.length);
  step("reported", reports.map((r) => `${r.operation}:${r.served}`));
  await fault("dynamodb");

  // SQS throttles the first sends (the SDK's own retries are off here):
  // the client sends again, and the message is queued.
  await fault("sqs", { kind: "throttle", requests: 2 });
  await client.extract({ ...sc, threadId: "ts-faults", previousTurnCount: 0, turnCount: 2,
    turns: [{ role: "user", content: "I work as a nurse" }, { role: "assistant", content: "Noted." }] });
  step("extract through 2 throttled sends", "queued");
  await fault("sqs");
  console.log("ok");
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/"))) {
  main().catch(async (err: unknown) => {
    console.error(err);
    await fault("dynamodb").catch(() => undefined);
    await fault("sqs").catch(() => undefined);
    process.exit(1);
  });
}
