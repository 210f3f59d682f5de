// The committed types of the fact API are what openapi-typescript makes of
// the API's OpenAPI document (shared/openapi.yaml, the repository's
// api/openapi.yaml copied by npm run sync): run `npm run generate` after
// changing the API.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { VALID_UNTIL_PATTERN } from "../src/dates.js";

test("src/openapi.ts is generated from shared/openapi.yaml", () => {
  const pkg = fileURLToPath(new URL("../../", import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), "usermemory-openapi-"));
  try {
    const out = join(dir, "openapi.ts");
    const cli = join(pkg, "node_modules", "openapi-typescript", "bin", "cli.js");
    execFileSync(process.execPath, [cli, join(pkg, "shared", "openapi.yaml"), "-o", out], { cwd: pkg, stdio: "pipe" });
    assert.equal(readFileSync(join(pkg, "src", "openapi.ts"), "utf8"), readFileSync(out, "utf8"), "src/openapi.ts is stale: run npm run generate");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the client's validUntil pattern is the OpenAPI document's", () => {
  const doc = readFileSync(fileURLToPath(new URL("../../shared/openapi.yaml", import.meta.url)), "utf8");
  const start = doc.indexOf("\n    ValueBody:");
  const body = doc.slice(start, doc.indexOf("\n    Fact:", start));
  const m = /\n        validUntil:\n(?: {10}.*\n)*? {10}pattern: "([^"]+)"/.exec(body);
  assert.equal(m?.[1], VALID_UNTIL_PATTERN.source);
});
