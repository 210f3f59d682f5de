package dynamorepo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/memory"
)

// lostAnswers sends every write twice and answers with the second: what
// the SDK does when the first attempt lands but its answer is lost (a
// timeout, a reset connection) and it retries.
type lostAnswers struct{ *dynamodb.Client }

func (l lostAnswers) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if _, err := l.Client.PutItem(ctx, in, optFns...); err != nil {
		return nil, err
	}
	return l.Client.PutItem(ctx, in, optFns...)
}

func (l lostAnswers) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if _, err := l.Client.UpdateItem(ctx, in, optFns...); err != nil {
		return nil, err
	}
	return l.Client.UpdateItem(ctx, in, optFns...)
}

// TestRetryMeetsItsOwnWrite: a conditional write whose first attempt
// landed and whose retry then fails the condition is reported as written,
// not as a conflict, for each conditional write of the repository.
func TestRetryMeetsItsOwnWrite(t *testing.T) {
	f := newFixture(t)
	r := dynamorepo.New(lostAnswers{f.client}, f.table)

	// Save of a new record (attribute_not_exists) and of a stored one (#ver = :old).
	ver, cur, err := r.Save(ctx, scope, memory.Record{Facts: []memory.Fact{fact("name", "Ana", t0)}})
	if err != nil || ver == "" {
		t.Fatalf("Save of a new record = %q, %+v, %v; want written", ver, cur, err)
	}
	if ver2, _, err := r.Save(ctx, scope, memory.Record{Version: ver, Facts: []memory.Fact{fact("name", "Bea", t0)}}); err != nil || ver2 == "" {
		t.Fatalf("Save of a stored record = %q, %v; want written", ver2, err)
	}
	// SetFact and DeleteFact on a stored record.
	if ok, cur, err := r.SetFact(ctx, scope, fact("role", "nurse", t0), 10); !ok || err != nil {
		t.Fatalf("SetFact = %v, %+v, %v; want written", ok, cur, err)
	}
	if ok, cur, err := r.DeleteFact(ctx, scope, "role", t0, 10); !ok || err != nil {
		t.Fatalf("DeleteFact = %v, %+v, %v; want written", ok, cur, err)
	}
	// SetFact creating the facts of a user with no item.
	other := memory.Scope{TenantID: "acme", UserID: "u-2"}
	if ok, cur, err := r.SetFact(ctx, other, fact("role", "nurse", t0), 10); !ok || err != nil {
		t.Fatalf("SetFact on no item = %v, %+v, %v; want written", ok, cur, err)
	}

	// A real conflict is still one: another writer's version.
	rec, err := f.repo.Get(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.repo.ClearFacts(ctx, scope, t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Save(ctx, scope, rec); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("Save over another writer's version: err = %v, want ErrConflict", err)
	}
}
