package httpapitest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// SeedUsers stores the facts of [SeededFacts] in repo (see [Seed]).
func SeedUsers(t testing.TB, repo memory.Repository) {
	t.Helper()
	// In a fixed order, so that versions and call counts are the same at
	// every run.
	Seed(t, repo, Ana, "language", "Portuguese", "city", "Lisbon")
	Seed(t, repo, Bob, "language", "German")
	Seed(t, repo, OtherAna, "language", "Finnish")
}

// CheckStored fails t unless each user of want has exactly its facts
// stored in repo. Users that want does not name are not looked at.
func CheckStored(t testing.TB, repo memory.Repository, want UserFacts) {
	t.Helper()
	for s, facts := range want {
		if diff := cmp.Diff(facts, Facts(t, repo, s)); diff != "" {
			t.Errorf("facts of %v (-want +got):\n%s", s, diff)
		}
	}
}

// ListedFacts returns the facts that a response body of type
// [httpapi.FactsBody] lists, as key → value. A body of another shape fails
// t.
func ListedFacts(t testing.TB, body string) map[string]string {
	t.Helper()
	var got httpapi.FactsBody
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	out := map[string]string{}
	for _, f := range got.Facts {
		out[f.Key] = f.Value
	}
	return out
}

// Case is one request to a function and what the function must answer
// and leave stored.
type Case struct {
	// Name names the case's subtest; when empty, Event does.
	Name string

	// Event is a file of events/ to send. When empty, the event is built
	// by [NewEvent] from Route, Token, Params and Body.
	Event string
	// Route is the route key of the built event ("GET /v1/me/facts").
	Route string
	// Token is the verified token of the built event; nil sends none.
	Token *Token
	// Params are the path parameters of the built event, decoded.
	Params map[string]string
	// Body is the body of the built event; empty sends none.
	Body string

	// Status is the status the function must answer. Every answer but a
	// 404 (a route the function does not serve, which the document does
	// not list) is held to api/openapi.yaml with the request (see
	// [Spec.Check]).
	Status int
	// Code, when not 0, is the code of the problem the function must
	// answer.
	Code int64
	// Answer, when not empty, is the exact body the function must answer.
	Answer string
	// Listed, when not nil, is the facts the answer lists, as an
	// [httpapi.FactsBody].
	Listed map[string]string
	// Stored is the facts each user it names must have stored afterwards
	// (see [CheckStored]).
	Stored UserFacts
}

func (c Case) name() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Event
}

// request returns the case's event and its JSON payload.
func (c Case) request(t testing.TB) (events.APIGatewayV2HTTPRequest, []byte) {
	t.Helper()
	if c.Event == "" {
		ev := NewEvent(c.Route, c.Token, c.Params, c.Body)
		return ev, Marshal(t, ev)
	}
	payload := ReadEvent(t, c.Event)
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatalf("events/%s: %v", c.Event, err)
	}
	return ev, payload
}

// Fixture is a fact API function under test, with the standard users
// [Ana], [Bob] and [OtherAna] seeded by [SeedUsers] in every repository it
// makes unless Empty says otherwise, and the table of cases that
// [Fixture.Run] holds it to.
type Fixture struct {
	// NewHandler builds the function's handler, as its main passes it to
	// wire.ServeFactAPI.
	NewHandler httpapi.NewHandlerFunc
	// Empty leaves the repositories of [Fixture.Repo] and
	// [Fixture.MotoRepo] empty instead of seeding the standard users.
	Empty bool
	// Seed, when not nil, stores more in every repository the fixture
	// makes, after the standard users (for instance with [SeedExtracted]).
	Seed func(t testing.TB, repo memory.Repository)

	// Function is the function's logical ID in template.yaml
	// ("GetFactsFunction").
	Function string
	// Events is the prefix of the function's sample events in events/
	// ("getfacts-"): each of them must be the Event of a case of Cases.
	Events string
	// Cases are sent each to a new handler over a new [Fixture.Repo] (see
	// [Fixture.RunCases]).
	Cases []Case
	// OnDynamoDB are sent in order to one handler over a
	// [Fixture.MotoRepo] (see [Fixture.RunSequence]).
	OnDynamoDB []Case
}

// Run holds the function to its table: the routes its handler serves to
// template.yaml and api/openapi.yaml (see [CheckRoutes]), the sample events to the cases
// that send them, then the cases, then the cases on DynamoDB, which are
// skipped without a moto_server.
func (f Fixture) Run(t *testing.T) {
	t.Helper()
	t.Run("routes", func(t *testing.T) {
		h, err := f.NewHandler(NewStore(t, memorytest.NewRepo()), httpapi.RequestConfig{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		CheckRoutes(t, f.Function, h.Routes())
	})
	t.Run("events", func(t *testing.T) {
		if f.Events == "" {
			t.Fatal("the fixture names no prefix of sample events")
		}
		sent := map[string]bool{}
		for _, c := range f.Cases {
			sent[c.Event] = true
		}
		names := Events(t, f.Events)
		if len(names) == 0 {
			t.Errorf("no events/%s*.json", f.Events)
		}
		for _, name := range names {
			if !sent[name] {
				t.Errorf("no case sends events/%s", name)
			}
		}
	})
	f.RunCases(t, f.Cases)
	if len(f.OnDynamoDB) > 0 {
		t.Run("DynamoDB", func(t *testing.T) { f.RunSequence(t, f.MotoRepo(t), f.OnDynamoDB...) })
	}
}

// Handler returns the function's handler over a store on repo (see
// [NewStore]) with the default authorization settings and no log.
func (f Fixture) Handler(t testing.TB, repo memory.Repository) HandlerFunc {
	t.Helper()
	h, err := f.NewHandler(NewStore(t, repo), httpapi.RequestConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h.Handle
}

// Repo returns a new in-memory repository, seeded (see [Fixture.Empty]
// and [Fixture.Seed]).
func (f Fixture) Repo(t testing.TB) *memorytest.Repo {
	t.Helper()
	repo := memorytest.NewRepo()
	f.seed(t, repo)
	return repo
}

// MotoRepo returns a repository on a new table of the moto_server of the
// environment (see [MotoRepo]), seeded as [Fixture.Repo] is.
func (f Fixture) MotoRepo(t testing.TB) *dynamorepo.Repo {
	t.Helper()
	repo := MotoRepo(t)
	f.seed(t, repo)
	return repo
}

// seed stores the standard users unless f.Empty, then runs f.Seed.
func (f Fixture) seed(t testing.TB, repo memory.Repository) {
	t.Helper()
	if !f.Empty {
		SeedUsers(t, repo)
	}
	if f.Seed != nil {
		f.Seed(t, repo)
	}
}

// RunCases runs each case in a subtest of its own, with a new handler
// over a new [Fixture.Repo], and checks what the case says. Besides, a
// case refused with a 4xx status must not have called the repository at
// all: a refused request reads and writes nothing (but see
// [refusedUnread]).
func (f Fixture) RunCases(t *testing.T, cases []Case) {
	t.Helper()
	spec := LoadSpec(t)
	for _, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			repo := f.Repo(t)
			before := calls(repo)
			send(t, spec, f.Handler(t, repo), repo, c, func() {
				if n := calls(repo) - before; refusedUnread(c) && n != 0 {
					t.Errorf("a request refused with %d called the repository %d times", c.Status, n)
				}
			})
		})
	}
}

// RunSequence sends the cases in order, each in a subtest, to one handler
// over repo, as a client would one after the other, and checks what each
// case says. A failed case stops the sequence.
func (f Fixture) RunSequence(t *testing.T, repo memory.Repository, cases ...Case) {
	t.Helper()
	spec := LoadSpec(t)
	h := f.Handler(t, repo)
	for _, c := range cases {
		if !t.Run(c.name(), func(t *testing.T) { send(t, spec, h, repo, c, nil) }) {
			t.FailNow()
		}
	}
}

// Send invokes h with c's request and checks what c says of the answer
// and of what repo stores afterwards.
func Send(t testing.TB, h HandlerFunc, repo memory.Repository, c Case) {
	t.Helper()
	send(t, LoadSpec(t), h, repo, c, nil)
}

// send is Send with the document loaded; afterCall, when not nil, runs
// right after the call, before the checks read the repository.
func send(t testing.TB, spec *Spec, h HandlerFunc, repo memory.Repository, c Case, afterCall func()) {
	t.Helper()
	ev, payload := c.request(t)
	resp := Invoke(t, h, payload)
	if afterCall != nil {
		afterCall()
	}
	if c.Status != http.StatusNotFound {
		spec.Check(t, ev, resp)
	}
	if resp.StatusCode != c.Status {
		t.Fatalf("got %d %s, want %d", resp.StatusCode, resp.Body, c.Status)
	}
	if c.Code != 0 && ProblemCode(resp) != c.Code {
		t.Errorf("got code %d (%s), want %d", ProblemCode(resp), resp.Body, c.Code)
	}
	if c.Answer != "" && resp.Body != c.Answer {
		t.Errorf("got body %s, want %s", resp.Body, c.Answer)
	}
	if c.Listed != nil {
		if diff := cmp.Diff(c.Listed, ListedFacts(t, resp.Body)); diff != "" {
			t.Errorf("listed facts (-want +got):\n%s", diff)
		}
	}
	CheckStored(t, repo, c.Stored)
}

// refusedUnread reports whether c's answer is a refusal that reads
// nothing: every 4xx but a 404 CodePendingNotFound or CodeImportNotFound,
// a 429 CodeImportLimit and a 409 CodeEarlierValueUnknown, which are
// answered after reading the record.
func refusedUnread(c Case) bool {
	afterRead := (c.Status == http.StatusNotFound && (c.Code == memory.CodePendingNotFound || c.Code == memory.CodeImportNotFound)) ||
		(c.Status == http.StatusTooManyRequests && c.Code == memory.CodeImportLimit) ||
		(c.Status == http.StatusConflict && c.Code == memory.CodeEarlierValueUnknown)
	return c.Status >= 400 && c.Status < 500 && !afterRead
}

// repositoryMethods are the names of the methods of memory.Repository.
var repositoryMethods = func() []string {
	typ := reflect.TypeFor[memory.Repository]()
	out := make([]string, typ.NumMethod())
	for i := range out {
		out[i] = typ.Method(i).Name
	}
	return out
}()

// calls returns how many calls repo has had, all methods together.
func calls(repo *memorytest.Repo) int {
	n := 0
	for _, m := range repositoryMethods {
		n += repo.Calls(m)
	}
	return n
}
