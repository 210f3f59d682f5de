package httpapitest

import (
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// The standard users of the functions' tests are memorytest's: Ana and Bob
// share the tenant acme; OtherAna has Ana's user ID in the tenant globex,
// so that a test sees a function keep to the token's tenant. The sample
// events of events/ act for Ana (or, for an admin, on Bob or Ana in acme).
var (
	// Ana is user u-123 of tenant acme, the user of [UserToken].
	Ana = memorytest.Ana
	// Bob is user u-456 of tenant acme.
	Bob = memorytest.Bob
	// OtherAna is user u-123 of tenant globex: Ana's user ID, another
	// tenant.
	OtherAna = memorytest.OtherAna
)

// UserToken returns a new token of [Ana] with the user scope.
func UserToken() *Token {
	return &Token{Sub: Ana.UserID, Tenant: Ana.TenantID, Scope: setup.DefaultUserScope}
}

// AdminToken returns a new token of the administrator admin-7 of tenant,
// with the admin scope only.
func AdminToken(tenant string) *Token {
	return &Token{Sub: "admin-7", Tenant: tenant, Scope: setup.DefaultAdminScope}
}

// UserFacts are the stored facts of some users: key → value by user.
type UserFacts map[memory.Scope]map[string]string

// SeededFacts returns the facts that [SeedUsers] stores: Ana's language
// and city, Bob's language and OtherAna's language. The maps are new at
// each call.
func SeededFacts() UserFacts {
	return UserFacts{
		Ana:      {"language": "Portuguese", "city": "Lisbon"},
		Bob:      {"language": "German"},
		OtherAna: {"language": "Finnish"},
	}
}
