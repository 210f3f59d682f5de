package memory

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// TurnsDigestLen is the length, in bytes, of a [TurnsDigest]: "#" and 12
// characters of unpadded URL-safe base64, the first 72 bits of a SHA-256.
const TurnsDigestLen = 1 + 12

// TurnsDigest returns the watermark of an uncounted extraction (one whose
// request carries no turn counts, [ExtractRequest.Uncounted]): "#" and the
// first 72 bits, in unpadded URL-safe base64, of the SHA-256 of, for each
// turn in order, the role, a zero byte, the decimal length in bytes of the
// text's UTF-8, a zero byte, the text and a zero byte. Context turns are
// never part of it. It is "" for no turn: there is nothing to read.
//
// "#" is not a character of a decimal count, so a digest never equals a
// turn count. Producers compute it over the turns exactly as they send
// them (after trimming), and the extractor over the turns it receives: the
// same turns give the same digest on both sides, and the FIFO
// deduplication ID of an uncounted message is derived from it.
func TurnsDigest(turns []Turn) string {
	if len(turns) == 0 {
		return ""
	}
	h := sha256.New()
	var n []byte
	for _, t := range turns {
		h.Write([]byte(t.Role))
		h.Write([]byte{0})
		n = strconv.AppendInt(n[:0], int64(len(t.Text)), 10)
		h.Write(n)
		h.Write([]byte{0})
		h.Write([]byte(t.Text))
		h.Write([]byte{0})
	}
	return "#" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// IsTurnsDigest reports whether s has the form of a [TurnsDigest]: "#" and
// 12 characters of unpadded URL-safe base64.
func IsTurnsDigest(s string) bool {
	if len(s) != TurnsDigestLen || s[0] != '#' {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s[1:])
	return err == nil && len(b) == 9
}
