package gold

import (
	"slices"
	"strings"
	"unicode"

	"github.com/usermemory/usermemory/memory"
)

// LikeRealChat reports whether c reads like a real chat: 4 user turns or
// more, 200 characters of user text or more (a few sentences; a
// character of a script written without spaces counts as two), no
// filler, and, when c expects facts, the first user turn that holds an
// accepted value neither the first user turn nor the last.
func LikeRealChat(c Conversation) bool {
	return natural(c) && (len(c.Expect) == 0 || statedInMiddle(c))
}

// userTurns returns the user turns of c.
func userTurns(c Conversation) []string {
	var out []string
	for _, t := range c.Turns {
		if t.Role == memory.RoleUser {
			out = append(out, t.Text)
		}
	}
	return out
}

// width is the length of s in characters, a character of a script
// written without spaces (Han, kana, Hangul) counting as two: about a
// word's worth of text.
func width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			n++
		}
	}
	return n
}

// natural reports whether c has the length of a real chat: 4 user
// turns or more, 200 characters of user text or more (a few sentences),
// none of them filler.
func natural(c Conversation) bool {
	users := userTurns(c)
	total := 0
	for _, u := range users {
		total += width(u)
	}
	return len(users) >= realChatUserTurns && total >= realChatUserChars && !slices.Contains(c.Covers, "long_thread")
}

// The least a conversation that reads like a real chat has: user turns,
// and characters of user text over them.
const (
	realChatUserTurns = 4
	realChatUserChars = 200
)

// statedInMiddle reports whether the first user turn that holds an
// accepted value of an expected fact is neither the first user turn nor
// the last; true when no user turn holds one (a paraphrase).
func statedInMiddle(c Conversation) bool {
	users := userTurns(c)
	for i, u := range users {
		low := strings.ToLower(u)
		for _, e := range c.Expect {
			for _, v := range append(append([]string{}, e.Values...), e.Contains...) {
				if v = strings.ToLower(v); len([]rune(v)) > 2 && strings.Contains(low, v) {
					return i > 0 && i < len(users)-1
				}
			}
		}
	}
	return true
}
