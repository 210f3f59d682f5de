package memorytest_test

import (
	"testing"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/memory/repotest"
)

// TestRepositoryContract holds the in-memory repository to the contract
// the DynamoDB one passes too.
func TestRepositoryContract(t *testing.T) {
	repotest.TestRepository(t, func(*testing.T) memory.Repository { return memorytest.NewRepo() })
}
