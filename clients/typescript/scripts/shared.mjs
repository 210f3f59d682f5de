// The repository's files the package's tests read, copied into shared/ so
// that the package is built and tested from its own folder: the fact API's
// OpenAPI document (src/openapi.ts is generated from it), the message's
// JSON Schema and the producer vectors the Go tests share.
//
//   node scripts/shared.mjs --write   copy them from the repository (npm run sync)
//   node scripts/shared.mjs --check   fail when a copy differs from the repository's file
//
// Outside the repository (the package folder alone) there is nothing to
// compare with: --check says so and passes.

import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(pkg, "..", "..");

/** copies maps each copy in the package to its source in the repository. */
export const copies = {
  "shared/openapi.yaml": "api/openapi.yaml",
  "shared/extraction-message.v1.json": "schema/extraction-message.v1.json",
  "shared/producer-vectors/messages.json": "testdata/producer-vectors/messages.json",
  "shared/producer-vectors/due.json": "testdata/producer-vectors/due.json",
};

const mode = process.argv[2];
if (mode !== "--write" && mode !== "--check") {
  console.error("usage: node scripts/shared.mjs --write | --check");
  process.exit(2);
}
if (!existsSync(join(repo, "go.mod")) || !existsSync(join(repo, "api", "openapi.yaml"))) {
  console.log("shared: not inside the usermemory repository; nothing to compare the copies with");
  process.exit(mode === "--write" ? 1 : 0);
}
let stale = 0;
for (const [copy, source] of Object.entries(copies)) {
  const to = join(pkg, copy);
  const from = join(repo, source);
  if (mode === "--write") {
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
  } else if (!existsSync(to) || !readFileSync(to).equals(readFileSync(from))) {
    console.error(`shared: ${copy} differs from the repository's ${source}: run npm run sync (then npm run generate if the API changed)`);
    stale++;
  }
}
process.exit(stale > 0 ? 1 : 0);
