// Package logref says what the functions' logs may say of a user and of an
// error: [User] computes the reference by which every log line, audit line
// and metric names a user, instead of the user's ID; [Error] names the
// kind of an error, never its message.
//
// The fact functions and the extractor both call [User], so that one user
// has one reference in every log group, and an operator who knows a
// tenant and a user ID can find that user's lines by computing it:
//
//	printf '%s' 'acme/u-123' | sha256sum | cut -c1-16
//
// The reference is not keyed: anyone who can read the logs and guesses a
// user ID can confirm the guess, as an operator can. What it keeps out of
// the logs is the ID itself, so that a log line copied into a ticket, an
// export or a dashboard names nobody. The tenant is part of the hashed
// text, so the same user ID in two tenants has two references.
package logref

import (
	"crypto/sha256"
	"encoding/hex"
)

// User returns the reference of the user userID of tenant tenantID: the
// first 16 hex digits (64 bits) of the SHA-256 of "tenantID/userID".
func User(tenantID, userID string) string {
	sum := sha256.Sum256([]byte(tenantID + "/" + userID))
	return hex.EncodeToString(sum[:8])
}
