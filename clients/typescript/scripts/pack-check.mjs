// The package as a team installs it: npm pack (prepack builds it), the
// tarball's contents, then for the oldest and the newest @aws-sdk/client-sqs
// the package supports, a scratch project in a temporary folder that
// installs the tarball with that peer and
//   - compiles (tsc --strict, the library types checked too) a host's
//     `overrides.userMemoryStore = new UserMemoryStoreClient(...)` against
//     the behaviour reference's IUserMemoryStore (reference/);
//   - runs extract with the reference's arguments through a real SQSClient
//     of that version (the request is caught before it leaves the process),
//     once imported as ESM and once with require().
//
//   node scripts/pack-check.mjs            (npm run pack-check; make typescript)
//
// It needs the npm registry, and the package's own dev dependencies (its
// TypeScript compiler) installed.

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
const peerRange = manifest.peerDependencies["@aws-sdk/client-sqs"];
const oldest = peerRange.replace(/^\^/, "");
const tsc = join(pkg, "node_modules", "typescript", "bin", "tsc");
const typesNode = JSON.parse(readFileSync(join(pkg, "node_modules", "@types", "node", "package.json"), "utf8")).version;

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function fail(msg) {
  console.error("pack-check: " + msg);
  process.exit(1);
}

/** main packs the tarball, checks its files and tries it in a scratch project per SDK version. */
function main() {
  const dir = mkdtempSync(join(tmpdir(), "usermemory-pack-"));
  try {
    const packed = JSON.parse(run(npm, ["pack", "--json", "--pack-destination", dir], pkg))[0];
    const tarball = join(dir, packed.filename);
    const files = packed.files.map((f) => f.path);
    for (const want of ["LICENSE", "README.md", "package.json", "dist/src/index.js", "dist/src/index.d.ts"]) {
      if (!files.includes(want)) fail(`the tarball lacks ${want}: ${files.join(" ")}`);
    }
    const stray = files.filter((f) => f.startsWith("dist/test") || f.startsWith("src/") || f.startsWith("shared/"));
    if (stray.length > 0) fail(`the tarball holds files a host does not need: ${stray.join(" ")}`);
    const rootLicense = join(pkg, "..", "..", "LICENSE");
    if (existsSync(rootLicense) && !readFileSync(rootLicense).equals(readFileSync(join(pkg, "LICENSE")))) {
      fail("LICENSE differs from the repository's LICENSE: copy it again");
    }
    console.log(`pack-check: ${packed.filename}, ${files.length} files, ${packed.size} bytes`);
    for (const sdk of [oldest, "latest"]) {
      scratch(tarball, sdk);
    }
    console.log("pack-check: ok");
  } finally {
    rmSync(dir, { recursive: true, force: true });
}
}

/** scratch installs the tarball with client-sqs at version sdk into a new project, compiles the host's file and runs it. */
function scratch(tarball, sdk) {
  const at = mkdtempSync(join(tmpdir(), "usermemory-host-"));
  try {
    writeFileSync(join(at, "package.json"), JSON.stringify({ name: "host", private: true, type: "module" }));
    run(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball, `@aws-sdk/client-sqs@${sdk}`, `@types/node@${typesNode}`], at);
    const version = JSON.parse(readFileSync(join(at, "node_modules", "@aws-sdk", "client-sqs", "package.json"), "utf8")).version;
    copyFileSync(join(pkg, "reference", "IUserMemoryStore.ts"), join(at, "IUserMemoryStore.ts"));
    writeFileSync(join(at, "tsconfig.json"), JSON.stringify({
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: false, outDir: "out", types: ["node"] },
      files: ["host.ts", "IUserMemoryStore.ts"],
    }));
    writeFileSync(join(at, "host.ts"), HOST);
    try {
      run(process.execPath, [tsc, "-p", "."], at);
    } catch (err) {
      fail(`client-sqs ${version}: the host's file does not compile:\n${err.stdout}${err.stderr}`);
    }
    writeFileSync(join(at, "out", "require.cjs"), REQUIRE);
    for (const entry of ["out/host.js", "out/require.cjs"]) {
      try {
        const out = run(process.execPath, [entry], at);
        if (!out.includes("queued ")) fail(`client-sqs ${version}: ${entry} said ${out}`);
      } catch (err) {
        fail(`client-sqs ${version}: ${entry} failed:\n${err.stdout ?? ""}${err.stderr ?? err}`);
      }
    }
    console.log(`pack-check: client-sqs ${version}: installs, compiles against the reference's IUserMemoryStore, extract sends (ESM and require)`);
  } finally {
    rmSync(at, { recursive: true, force: true });
  }
}

/** HOST is a gateway host's file: the override, and the reference's updateMemory call of extract. */
const HOST = `import { createHash } from "node:crypto";
import { SQSClient } from "@aws-sdk/client-sqs";
import { UserMemoryStoreClient, deduplicationId, turnsDigest } from "@usermemory/client";
import type { ILLMClientCallMeta, ITurn, IUserMemoryStore } from "./IUserMemoryStore.js";

const sqs = new SQSClient({ region: "eu-west-1", credentials: { accessKeyId: "x", secretAccessKey: "y" } });
let body = "";
// Catch the request before it leaves: the command went through this SDK version's client.
sqs.middlewareStack.add((_next) => async (args) => {
  body = String((args.request as { body?: unknown }).body);
  const md5 = createHash("md5").update(String((args.input as { MessageBody?: string }).MessageBody)).digest("hex");
  return { output: { $metadata: {}, MessageId: "m-1", MD5OfMessageBody: md5 }, response: {} } as never;
}, { step: "finalizeRequest", name: "catchSend" });

const overrides: { userMemoryStore: IUserMemoryStore } = {
  userMemoryStore: new UserMemoryStoreClient({
    apiUrl: "https://api.example", queueUrl: "https://sqs.eu-west-1.amazonaws.com/123/usermemory.fifo", sqs,
    tokens: async () => ({ token: "t", scope: "me" }),
    fetch: async () => new Response(JSON.stringify({ facts: [], limits: { maxFacts: 30, maxFactChars: 200 } })),
  }),
};

const meta: ILLMClientCallMeta = { kind: "MEMORY_USER", traceId: "t-1" };
const turns: ITurn[] = [{ role: "system", content: "Be kind." }, { role: "user", content: "I live in Porto" }, { role: "assistant", content: "Noted." }];
const facts = await overrides.userMemoryStore.extract({ tenantId: "acme", userId: "ana", threadId: "th-1", turns, cheapModelId: "m", meta });
const id = deduplicationId("acme", "ana", "th-1", turnsDigest([{ role: "user", text: "I live in Porto" }, { role: "assistant", text: "Noted." }])!);
if (!body.includes(id) || facts.length !== 0) {
  throw new Error("the message sent lacks its deduplication ID " + id + ": " + body);
}
console.log("queued " + id);
`;

/** REQUIRE loads the package with require(), as a CommonJS host does. */
const REQUIRE = `const { UserMemoryStoreClient, turnsDigest } = require("@usermemory/client");
if (typeof UserMemoryStoreClient !== "function") throw new Error("require() gave no UserMemoryStoreClient");
console.log("queued " + turnsDigest([{ role: "user", text: "hi" }]));
`;

main();
