package dynamorepo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/memory"
)

// TestFirstFactRacesTheCreation makes another writer create the facts
// map of a new user between the first fact's refused UpdateItem and its
// creation: the creation is refused in turn, the first UpdateItem is
// tried again and applies (reqFirstFactRaced), and both facts are kept.
func TestFirstFactRacesTheCreation(t *testing.T) {
	f := &fixture{table: newTable(t), count: newCounter()}
	other := dynamorepo.New(newClient(endpoint(t), nil), f.table)
	raced := false
	// Like counter.middleware, at the top of the deserialize step, where
	// the decoded error of each attempt is seen.
	race := func(stack *middleware.Stack) error {
		return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("createFirst",
			func(c context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(c, in)
				var ccf *types.ConditionalCheckFailedException
				if !raced && middleware.GetOperationName(c) == "UpdateItem" && errors.As(err, &ccf) {
					raced = true
					if applied, _, err := other.SetFact(ctx, scope, fact("home_city", "Lisbon", t0), 3); err != nil || !applied {
						t.Errorf("the other writer's SetFact = %v, %v; want applied", applied, err)
					}
				}
				return out, md, err
			}), middleware.Before)
	}
	f.client = newClient(endpoint(t), f.count, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, race) })
	f.repo = dynamorepo.New(f.client, f.table)
	s := newStore(t, f, memory.Config{})

	f.step(t, "Put of a first fact raced by another", reqFirstFactRaced, func() error {
		_, err := s.Put(ctx, scope, memory.FactInput{Key: "name", Value: "Ana"})
		return err
	})
	if !raced {
		t.Fatal("no UpdateItem was refused: the other writer never ran")
	}
	got, err := s.GetFacts(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"home_city=Lisbon", "name=Ana"}, keysOf(got)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
}
