// extract called exactly as the behaviour reference's updateMemory calls
// it: no turn counts, the gateway's turns (a system turn among them, the
// text under content), its cheap model and its call meta. localtest/tse2e
// runs it in two phases:
//
//   node dist/e2e/uncounted.js learn   extract, then wait for the facts
//   node dist/e2e/uncounted.js again   the same turns sent again: through
//                                      extract, and once more straight to
//                                      the queue under another FIFO
//                                      deduplication ID, so that only the
//                                      extractor's watermark can catch it
//
// The Go test counts the model calls around "again": none.

import { randomUUID } from "node:crypto";
import { SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
import { Producer, UserMemoryStoreClient, toTurns } from "../src/index.js";
import type { ILLMClientCallMeta, ITurn } from "../reference/IUserMemoryStore.js";
import { waitFor } from "../examples/gateway.js";

function env(name: string): string {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set`);
  }
  return v;
}

const threadId = "ts-uncounted";
const turns: ITurn[] = [
  { role: "system", content: "You are a helpful assistant." },
  { role: "user", content: "Hi, I'm Ana from Lisbon, answer in Portuguese" },
  { role: "assistant", content: "Olá Ana! Como posso ajudar?" },
];

/** main runs the phase named on the command line. */
export async function main(phase: string): Promise<void> {
  const sc = { tenantId: env("USERMEMORY_TENANT"), userId: env("USERMEMORY_USER") };
  const sqs = new SQSClient({ region: env("AWS_REGION"), endpoint: env("USERMEMORY_SQS_ENDPOINT"),
    credentials: { accessKeyId: "test", secretAccessKey: "test" } });
  const store = new UserMemoryStoreClient({
    apiUrl: env("USERMEMORY_API_URL"), sqs, queueUrl: env("USERMEMORY_QUEUE_URL"),
    tokens: async () => ({ token: env("USERMEMORY_USER_TOKEN"), scope: "me" }),
  });
  const meta: ILLMClientCallMeta = { kind: "MEMORY_USER", requestId: "req-1", traceId: "trace-1" };
  const args = { ...sc, threadId, turns, cheapModelId: "the-gateway-cheap-model", meta };
  if (phase === "learn") {
    const returned = await store.extract(args);
    console.log(`extract returned: ${JSON.stringify(returned.map((f) => f.key))}`);
    const facts = await waitFor(store, sc, (fs) => fs.some((f) => f.key === "home_city" && f.value === "Lisbon"));
    console.log(`learned: ${JSON.stringify(facts.map((f) => `${f.key}=${f.value}`))}`);
  } else if (phase === "again") {
    await store.extract(args);
    const built = new Producer(undefined, env("USERMEMORY_QUEUE_URL")).build({ ...sc, threadId, turns: toTurns("/turns", turns) });
    await sqs.send(new SendMessageCommand({
      QueueUrl: env("USERMEMORY_QUEUE_URL"), MessageBody: built.body, MessageGroupId: built.groupId, MessageDeduplicationId: randomUUID(),
    }));
    console.log("sent again: through extract, and under another deduplication ID");
  } else {
    throw new Error(`unknown phase ${phase}: learn or again`);
  }
  console.log("ok");
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/"))) {
  main(process.argv[2] ?? "").catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
