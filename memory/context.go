package memory

import (
	"slices"
	"unicode/utf8"
)

// Headings of the two sections of an extraction transcript that has
// context turns. Without context turns the transcript has neither, and is
// [Transcript] of the new turns alone.
const (
	ContextHeading = "[Already read: context only. Do not extract facts from these turns on their own; " +
		"use them only to understand what the new turns answer or refer to.]"
	NewTurnsHeading = "[New turns: extract facts from these.]"
)

// minCutTail is the fewest characters a turn cut at its start keeps; a
// turn that would keep fewer is dropped whole.
const minCutTail = 64

// TranscriptTurns returns, in a new slice, the turns a transcript of at
// most maxChars characters keeps: the newest of turns whose transcript
// blocks ("User: …", "Assistant: …", joined by a blank line) fit within
// maxChars characters, oldest first. It is the one rule of what a model
// reads of a thread: [Transcript] writes its result, the context section
// of [ExtractionTranscript] uses it with the context budget, and a
// producer sends only what it keeps. Tool turns and turns of only white
// space are left out; texts are trimmed and invalid UTF-8 is replaced by
// U+FFFD. The turn that crosses the budget keeps the end of its text,
// marked with "…", when more than 64 characters are left for it (the
// question that ends an assistant's answer, the newest words of a long
// message); the turns before it are dropped. It is idempotent:
// TranscriptTurns of its result, with the same maxChars, is the result.
// maxChars < 1 keeps nothing.
func TranscriptTurns(turns []Turn, maxChars int) []Turn {
	const gap = 2 // "\n\n" between two blocks.
	var kept []Turn
	used := 0
	for i := len(turns) - 1; i >= 0; i-- {
		who, text, ok := transcribed(turns[i])
		if !ok {
			continue
		}
		n := utf8.RuneCountInString(who) + utf8.RuneCountInString(text)
		if len(kept) > 0 {
			n += gap
		}
		if used+n > maxChars {
			room := maxChars - used - utf8.RuneCountInString(who)
			if len(kept) > 0 {
				room -= gap
			}
			if room > minCutTail {
				kept = append(kept, Turn{Role: turns[i].Role, Text: "…" + lastRunes(text, room-1)})
			}
			break
		}
		used += n
		kept = append(kept, Turn{Role: turns[i].Role, Text: text})
	}
	slices.Reverse(kept)
	return kept
}

// ExtractionTranscript returns the user message of an extraction:
// [Transcript] of turns within transcriptChars, preceded, when
// [TranscriptTurns] of context within contextChars keeps any turn, by the
// context section: [ContextHeading], those turns as transcript blocks, and
// [NewTurnsHeading]. The context has a budget of its own, so that it never
// pushes a new turn out.
func ExtractionTranscript(context, turns []Turn, contextChars, transcriptChars int) string {
	recent := Transcript(turns, transcriptChars)
	kept := TranscriptTurns(context, contextChars)
	if len(kept) == 0 {
		return recent
	}
	const gap = "\n\n"
	return ContextHeading + gap + blocks(kept) + gap + NewTurnsHeading + gap + recent
}
