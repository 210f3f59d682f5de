package e2e

// The deploy's check (internal/stackcheck, what go run ./deploy check
// runs after a deploy) against the local stack, whose state plays the
// deployed stack's outputs: the page at its AppURL (the page's API under
// /app/, as PageApi serves it), a token of the stack's issuer, one chat
// turn through the producer to the queue on moto_server and the real
// extractor with the Bedrock stand-in, and the erasure of what the check
// wrote.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/stackcheck"
	"github.com/usermemory/usermemory/localtest/stack/stacktest"
	"github.com/usermemory/usermemory/producer"
)

// issuerTokens signs tokens with the local stack's issuer, as the user
// pool does deployed: the user scope, and the admin scope when asked.
type issuerTokens struct{ signed []string }

func (i *issuerTokens) Token(_ context.Context, tenant, user string, admin bool) (string, error) {
	scopes := []string{st.Info.UserScope}
	if admin {
		scopes = append(scopes, st.Info.AdminScope)
	}
	i.signed = append(i.signed, user)
	return st.Issuer().Sign(stacktest.Claims(st, tenant, user, scopes...))
}

// TestDeployCheckPasses: every step of the check passes, the
// extraction lands a fact, and the cleanup leaves the user without one.
func TestDeployCheckPasses(t *testing.T) {
	ctx := context.Background()
	tokens := &issuerTokens{}
	forgot := ""
	target := stackcheck.Target{
		PageURL: st.Info.AppURL, APIURL: st.Info.APIURL, Tokens: tokens,
		Queue:  producer.New(stacktest.SQSClient(st, nil), st.Info.QueueURL),
		Forget: func(_ context.Context, user string) error { forgot = user; return nil },
		Wait:   time.Minute,
	}
	steps := stackcheck.Run(ctx, target)
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
		if s.Err != nil {
			t.Errorf("%s: %v", s.Name, s.Err)
		} else {
			t.Logf("%s: %s", s.Name, s.Detail)
		}
	}
	if got := strings.Join(names, ","); got != "page,facts,extraction,cleanup" {
		t.Errorf("steps %s, want page, facts, extraction, cleanup", got)
	}
	if len(tokens.signed) == 0 || forgot != tokens.signed[0] {
		t.Errorf("signed %v in, forgot %q: want the check's user forgotten", tokens.signed, forgot)
	}
}

// TestDeployCheckFailsWhereTheStackDoes: a page URL that is not the page, and a
// queue nobody reads, fail their steps, and the cleanup still runs.
func TestDeployCheckFailsWhereTheStackDoes(t *testing.T) {
	ctx := context.Background()
	target := stackcheck.Target{
		PageURL: st.Info.APIURL + "/nowhere/", APIURL: st.Info.APIURL, Tokens: &issuerTokens{},
		Queue: senderFunc(func(context.Context, producer.Message) error { return nil }), // sent nowhere
		Wait:  3 * time.Second,
	}
	got := map[string]bool{}
	for _, s := range stackcheck.Run(ctx, target) {
		got[s.Name] = s.Err == nil
	}
	if want := map[string]bool{"page": false, "facts": true, "extraction": false, "cleanup": true}; len(got) != len(want) ||
		got["page"] || !got["facts"] || got["extraction"] || !got["cleanup"] {
		t.Errorf("steps passed %v, want %v", got, want)
	}
}

type senderFunc func(context.Context, producer.Message) error

func (f senderFunc) Send(ctx context.Context, m producer.Message) error { return f(ctx, m) }
