// What the extractor reads of the turns: the rule of memory.TranscriptTurns
// (and of the Go producer's ForExtractor), character for character.

import type { Turn } from "./message.js";

/** The extractor's default transcript budget (memory.DefaultTranscriptChars). */
export const DEFAULT_TRANSCRIPT_CHARS = 12000;

/** The extractor's default context budget (memory.DefaultContextChars). */
export const DEFAULT_CONTEXT_CHARS = 1500;

/** The fewest characters a turn cut at its start keeps, plus one. */
const MIN_CUT_TAIL = 64;

/** The blank line between two blocks of a transcript. */
const GAP = 2;

// Go's unicode.IsSpace: JavaScript's trim() differs (it trims U+FEFF,
// not U+0085).
const goSpace = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const trimPattern = new RegExp(`^[${goSpace}]+|[${goSpace}]+$`, "g");

/** trimSpace is Go's strings.TrimSpace. */
export function trimSpace(s: string): string {
  return s.replace(trimPattern, "");
}

/** runeCount returns the number of code points of s (Go's utf8.RuneCountInString). */
export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
      }
    }
    n++;
  }
  return n;
}

/** firstRunes returns the first n code points of s. */
export function firstRunes(s: string, n: number): string {
  return Array.from(s).slice(0, Math.max(n, 0)).join("");
}

/** lastRunes returns the last n code points of s. */
export function lastRunes(s: string, n: number): string {
  const cps = Array.from(s);
  return n >= cps.length ? s : cps.slice(cps.length - Math.max(n, 0)).join("");
}

/** transcriptPrefix returns the label of a turn of role in a transcript, or "" for a role it leaves out. */
function transcriptPrefix(role: string): string {
  switch (role) {
    case "user":
      return "User: ";
    case "assistant":
      return "Assistant: ";
  }
  return "";
}

/**
 * transcriptTurns returns, in a new array, the turns a transcript of at
 * most maxChars characters keeps, as memory.TranscriptTurns, the one rule
 * of what the extractor reads: the newest of turns whose transcript blocks
 * fit within maxChars characters, oldest first, texts trimmed, tool turns
 * and empty turns left out; the turn that crosses the budget keeps the end
 * of its text, marked with "…", when more than 64 characters are left for
 * it. The context turns of a message are transcriptTurns within
 * DEFAULT_CONTEXT_CHARS.
 */
export function transcriptTurns(turns: readonly Turn[], maxChars: number): Turn[] {
  const kept: Turn[] = [];
  let used = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const t = turns[i]!;
    const who = transcriptPrefix(t.role);
    const text = trimSpace(t.text);
    if (who === "" || text === "") {
      continue;
    }
    const gap = kept.length > 0 ? GAP : 0;
    const n = runeCount(who) + runeCount(text) + gap;
    if (used + n > maxChars) {
      const room = maxChars - used - runeCount(who) - gap;
      if (room > MIN_CUT_TAIL) {
        kept.push({ role: t.role, text: "…" + lastRunes(text, room - 1) });
      }
      break;
    }
    used += n;
    kept.push({ role: t.role, text });
  }
  return kept.reverse();
}

/**
 * forExtractor returns the part of turns that an extractor with a
 * transcript budget of maxChars characters reads, as the Go producer's
 * ForExtractor: transcriptTurns, or, when no turn would be transcribed,
 * the newest turn, so that a message never goes without one.
 */
export function forExtractor(turns: readonly Turn[], maxChars: number): Turn[] {
  const kept = transcriptTurns(turns, maxChars);
  if (kept.length === 0 && turns.length > 0) {
    const last = turns[turns.length - 1]!;
    return [{ role: last.role, text: last.text }];
  }
  return kept;
}
