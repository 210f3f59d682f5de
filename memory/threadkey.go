package memory

import (
	"crypto/sha256"
	"encoding/base64"
)

// ThreadKeyLen is the length, in bytes, of the key [ThreadKey] gives a
// long thread ID: "#" and 12 characters of unpadded URL-safe base64, the
// first 72 bits of the ID's SHA-256.
const ThreadKeyLen = 1 + 12

// ThreadKey returns the key of the thread id in [Record.Threads]: the ID
// itself when it is at most ThreadKeyLen bytes, else "#" followed by the
// first 72 bits of its SHA-256 in URL-safe base64. A watermark is kept per
// key rather than per ID so that the 36-character UUIDs gateways use take
// 13 bytes each in the stored record. "#" is not a character of a valid ID
// ([ValidID]), so a hashed key never equals an ID kept as it is; and
// ThreadKey of a key is the key, so a record read from storage can be keyed
// again. Two long IDs of one user share a key with a probability of about
// 2⁻⁷² per pair (docs/decisions.md, Watermark).
func ThreadKey(id string) string {
	if len(id) <= ThreadKeyLen {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "#" + base64.RawURLEncoding.EncodeToString(sum[:9])
}
