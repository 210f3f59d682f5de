package dynamorepo_test

import (
	"testing"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/repotest"
)

// TestRepositoryContract holds the repository, on moto_server through the
// real SDK client, to the contract the in-memory one passes too.
func TestRepositoryContract(t *testing.T) {
	repotest.TestRepository(t, func(t *testing.T) memory.Repository { return newFixture(t).repo })
}
