// Turns as gateways shape them, read into the message's turns.

import { ProducerError } from "./producer.js";
import type { Turn, Violation } from "./message.js";

/**
 * GatewayTurn is a turn as a gateway keeps it: a role, and the text under
 * `content` (as the OpenAI and Anthropic SDKs name it) or `text`; a string,
 * an array of parts (`[{type: "text", text: "…"}, …]`, joined from its text
 * parts with "\n"), or absent (a tool turn that carries no text). Other
 * members are ignored. Roles user, assistant and tool are sent; system and
 * developer turns are dropped; any other role is refused.
 */
export interface GatewayTurn {
  readonly role: string;
  readonly content?: unknown;
  readonly text?: unknown;
}

/** Roles sent to the extractor. */
const sent: readonly string[] = ["user", "assistant", "tool"];

/** Roles dropped before the message is built: instructions, not what the user said. */
const dropped: readonly string[] = ["system", "developer"];

/** textOf returns the text of a turn's content or text: a string, or the text parts of an array joined with "\n"; "" for anything else. */
export function textOf(value: unknown): string {
  if (typeof value === "string") {
    return value;
  }
  if (!Array.isArray(value)) {
    return "";
  }
  const parts: string[] = [];
  for (const part of value as unknown[]) {
    if (typeof part === "string") {
      parts.push(part);
    } else if (typeof part === "object" && part !== null) {
      const p = part as { type?: unknown; text?: unknown };
      if ((p.type === undefined || p.type === "text") && typeof p.text === "string") {
        parts.push(p.text);
      }
    }
  }
  return parts.join("\n");
}

/**
 * toTurns returns the message's turns for gateway turns: system and
 * developer turns dropped, the text read by [textOf] from `content`, or
 * from `text` when content has none. Throws a ProducerError invalid naming
 * each turn whose role is none of user, assistant, tool, system and
 * developer (pointer names the argument, /turns or /contextTurns).
 */
export function toTurns(pointer: string, turns: readonly GatewayTurn[] | undefined): Turn[] {
  if (turns === undefined) {
    return [];
  }
  if (!Array.isArray(turns)) {
    throw new ProducerError("invalid", `${pointer}: an array of turns`, [{ pointer, rule: "an array of turns" }]);
  }
  const out: Turn[] = [];
  const bad: Violation[] = [];
  turns.forEach((t: GatewayTurn | undefined, i) => {
    const role = t?.role;
    if (typeof role === "string" && dropped.includes(role)) {
      return;
    }
    if (typeof role !== "string" || !sent.includes(role)) {
      bad.push({ pointer: `${pointer}/${i}/role`, rule: "user, assistant or tool (system and developer turns are dropped)" });
      return;
    }
    const fromContent = textOf(t!.content);
    out.push({ role, text: fromContent !== "" ? fromContent : textOf(t!.text) });
  });
  if (bad.length > 0) {
    throw new ProducerError("invalid", bad.map((v) => `${v.pointer}: ${v.rule}`).join("; "), bad);
  }
  return out;
}
