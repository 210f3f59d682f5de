package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/producer"
)

// traffic records the personal data the suite sends and receives: every
// user ID (token subjects, admin paths, queue messages), every fact value
// (request and response bodies) and every turn text. After the suite,
// [scanLogs] looks for each of them in what the functions logged.
var traffic = &recorder{secrets: map[string]string{}}

// recorder is the set of recorded secrets, each with what it is. Safe for
// concurrent use: tests run in parallel.
type recorder struct {
	mu      sync.Mutex
	secrets map[string]string // secret → "user ID", "fact value", "turn text"
	// erasures are the erasures that succeeded, to find their audit lines.
	erasures []erasure
}

// erasure is one DELETE /v1/users/{userId} answered 200: by whom, of whom.
type erasure struct{ tenant, caller, user string }

func (r *recorder) add(kind, s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.secrets[s]; !ok {
		r.secrets[s] = kind
	}
}

// snapshot returns the secrets, sorted, with their kinds.
func (r *recorder) snapshot() ([]string, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := make(map[string]string, len(r.secrets))
	var list []string
	for s, k := range r.secrets {
		list = append(list, s)
		kinds[s] = k
	}
	slices.Sort(list)
	return list, kinds
}

// wrap returns a transport that records what passes through next.
func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		body := r.requestBody(req)
		tenant, caller := r.recordRequest(req, body)
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		if rest, ok := strings.CutPrefix(req.URL.Path, "/v1/users/"); ok && req.Method == http.MethodDelete &&
			!strings.Contains(rest, "/") && resp.StatusCode == http.StatusOK {
			r.mu.Lock()
			r.erasures = append(r.erasures, erasure{tenant: tenant, caller: caller, user: rest})
			r.mu.Unlock()
		}
		b, readErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		if readErr == nil {
			r.recordValues(b)
		}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// requestBody reads req's body and puts it back.
func (r *recorder) requestBody(req *http.Request) []byte {
	if req.Body == nil {
		return nil
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(rc)
			rc.Close()
			return b
		}
	}
	b, _ := io.ReadAll(req.Body)
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

// recordRequest records the token's subject, the admin path's user ID,
// the body's fact value and, for an SQS SendMessage(Batch), the messages'
// user IDs and turn texts. It returns the token's tenant and subject.
func (r *recorder) recordRequest(req *http.Request, body []byte) (tenant, sub string) {
	if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		if parts := strings.Split(tok, "."); len(parts) == 3 {
			var c map[string]any
			if p, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil && json.Unmarshal(p, &c) == nil {
				sub, _ = c["sub"].(string)
				tenant, _ = c[st.Info.TenantClaim].(string)
				r.add("user ID", sub)
			}
		}
	}
	if rest, ok := strings.CutPrefix(req.URL.EscapedPath(), "/v1/users/"); ok {
		seg, _, _ := strings.Cut(rest, "/")
		if u, err := url.PathUnescape(seg); err == nil {
			r.add("user ID", u)
		}
	}
	switch target := req.Header.Get("X-Amz-Target"); {
	case strings.HasSuffix(target, ".SendMessage"):
		var in struct{ MessageBody string }
		if json.Unmarshal(body, &in) == nil {
			r.recordMessage(in.MessageBody)
		}
	case strings.HasSuffix(target, ".SendMessageBatch"):
		var in struct {
			Entries []struct{ MessageBody string }
		}
		if json.Unmarshal(body, &in) == nil {
			for _, e := range in.Entries {
				r.recordMessage(e.MessageBody)
			}
		}
	case target == "":
		r.recordValues(body)
	}
	return tenant, sub
}

// recordMessage records the user ID and the turn texts of an extraction
// message; a body that is not one (a poison message) holds neither.
func (r *recorder) recordMessage(body string) {
	var m producer.Message
	if json.Unmarshal([]byte(body), &m) != nil {
		return
	}
	r.add("user ID", m.UserID)
	for _, t := range append(m.Turns, m.ContextTurns...) {
		r.add("turn text", t.Text)
	}
}

// recordValues records the fact values of a JSON body: a PUT's
// {"value"}, a 200's {"fact"} or {"facts"}.
func (r *recorder) recordValues(body []byte) {
	var b struct {
		Value *string `json:"value"`
		Fact  *struct {
			Value string `json:"value"`
		} `json:"fact"`
		Facts []struct {
			Value string `json:"value"`
		} `json:"facts"`
	}
	if json.Unmarshal(body, &b) != nil {
		return
	}
	if b.Value != nil {
		r.add("fact value", *b.Value)
	}
	if b.Fact != nil {
		r.add("fact value", b.Fact.Value)
	}
	for _, f := range b.Facts {
		r.add("fact value", f.Value)
	}
}

// hit is one secret found in a log file.
type hit struct {
	file   string
	line   int
	kind   string
	secret string
}

// needles returns the forms of secret that a log line would hold:
// secret itself and its JSON-escaped form. A secret under 5 bytes ("x",
// "u-1") would match inside unrelated words and numbers: only its quoted
// JSON form counts.
func needles(secret string) []string {
	b, _ := json.Marshal(secret)
	quoted := string(b)
	if len(secret) < 5 {
		return []string{quoted}
	}
	out := []string{secret}
	if esc := quoted[1 : len(quoted)-1]; esc != secret {
		out = append(out, esc)
	}
	return out
}

// scanDir looks for every secret in every line of the *.log files of dir
// but skip (the file names of parts that are not the service's own). It
// returns the hits and the number of lines read.
func scanDir(dir string, skip []string, secrets []string, kinds map[string]string) ([]hit, int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, 0, err
	}
	var hits []hit
	lines := 0
	for _, name := range files {
		if slices.Contains(skip, filepath.Base(name)) {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		n := 0
		for sc.Scan() {
			n++
			line := sc.Text()
			for _, s := range secrets {
				if slices.ContainsFunc(needles(s), func(needle string) bool { return containsWord(line, needle) }) {
					hits = append(hits, hit{file: filepath.Base(name), line: n, kind: kinds[s], secret: s})
				}
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		lines += n
	}
	return hits, lines, nil
}

// containsWord reports whether line holds needle as a word: where needle
// starts or ends with a letter or a digit, the character next to it in
// line is not one, so that the value "second" is found in
// `"value":"second"` and "I am second." but not in "Milliseconds".
func containsWord(line, needle string) bool {
	first, _ := utf8.DecodeRuneInString(needle)
	last, _ := utf8.DecodeLastRuneInString(needle)
	for i := 0; ; {
		j := strings.Index(line[i:], needle)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(needle)
		before, _ := utf8.DecodeLastRuneInString(line[:start])
		after, _ := utf8.DecodeRuneInString(line[end:])
		if (start == 0 || !isWordRune(first) || !isWordRune(before)) &&
			(end == len(line) || !isWordRune(last) || !isWordRune(after)) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// notOurs are the log files of the emulated AWS services: what moto_server
// writes is AWS's side, not the service's.
var notOurs = []string{"moto.log"}

// scanLogs runs after the whole suite (see TestMain): it waits until the
// extractor has handled every message, then looks for every user ID, fact
// value and turn text the suite used in every line that the functions
// (their logs and their metric lines, which share stdout) and the local
// stack's own parts wrote. It also checks that the erasures the suite made
// left their audit lines. It returns nil when nothing is found.
func scanLogs(ctx context.Context) error {
	secrets, kinds := traffic.snapshot()
	if len(secrets) == 0 {
		fmt.Fprintln(os.Stderr, "e2e: log scan: the tests that ran sent no personal data; nothing to look for")
		return nil
	}
	// The queue drained, the extractor has written every line it will
	// write.
	if err := stack.WaitDrained(ctx, sqsAPI, st.Info.QueueURL, time.Minute); err != nil {
		return fmt.Errorf("log scan: %w", err)
	}
	dir := st.Info.LogDir
	hits, lines, err := scanDir(dir, notOurs, secrets, kinds)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "e2e: log scan: %d lines of %s searched for %d user IDs, fact values and turn texts: %d hits\n",
		lines, dir, len(secrets), len(hits))
	if lines == 0 {
		return errors.New("log scan: the functions wrote no log line: nothing was scanned")
	}
	var msgs []string
	for i, h := range hits {
		if i == 20 {
			msgs = append(msgs, fmt.Sprintf("… and %d more", len(hits)-i))
			break
		}
		msgs = append(msgs, fmt.Sprintf("%s:%d holds the %s %q", h.file, h.line, h.kind, h.secret))
	}
	if len(hits) > 0 {
		return fmt.Errorf("log scan: personal data in the logs:\n\t%s", strings.Join(msgs, "\n\t"))
	}
	return checkAudits(dir)
}

// checkAudits finds, for every erasure the suite made, the audit line
// that answers "who erased this user?": msg audit, action erase, outcome
// ok, the tenant, and the caller's and the user's references.
func checkAudits(dir string) error {
	traffic.mu.Lock()
	want := slices.Clone(traffic.erasures)
	traffic.mu.Unlock()
	if len(want) == 0 {
		return nil
	}
	var audits []map[string]any
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			var m map[string]any
			if json.Unmarshal(line, &m) == nil && m["msg"] == "audit" {
				audits = append(audits, m)
			}
		}
	}
	for _, e := range want {
		found := slices.ContainsFunc(audits, func(m map[string]any) bool {
			return m["action"] == "erase" && m["outcome"] == "ok" && m["tenantId"] == e.tenant &&
				m["targetRef"] == logref.User(e.tenant, e.user) && m["callerRef"] == logref.User(e.tenant, e.caller) &&
				m["time"] != nil
		})
		if !found {
			return fmt.Errorf("log scan: no audit line of the erasure of a user of %s (targetRef %s) by callerRef %s among %d audit lines",
				e.tenant, logref.User(e.tenant, e.user), logref.User(e.tenant, e.caller), len(audits))
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: log scan: the audit lines of the suite's %d erasures are there\n", len(want))
	return nil
}

// TestLogScanFindsALeak holds the scanner to a log that leaks: every kind
// of secret, raw and JSON-escaped, is found, in a function's log and in a
// metric line; moto's log is not read; a clean line is not a hit.
func TestLogScanFindsALeak(t *testing.T) {
	dir := t.TempDir()
	logs := map[string]string{
		"PutFactFunction.log": `{"time":"t","level":"INFO","msg":"request","tenantId":"acme","userRef":"b0e35159bdc1e924"}` + "\n" +
			`{"time":"t","level":"INFO","msg":"request","userId":"leak-ab12cd34"}` + "\n" +
			`{"time":"t","level":"INFO","msg":"echo","text":"Hello, I am Ana."}` + "\n",
		"ExtractorFunction.log": `{"_aws":{"Metrics":[{"Name":"Duration","Unit":"Milliseconds"}]},"tenant":"acme","outcome":"changed","note":"Olá \"Ana\""}` + "\n" +
			`{"msg":"extraction record","value":"x"}` + "\n",
		"moto.log": "leak-ab12cd34\n",
	}
	for name, text := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &recorder{secrets: map[string]string{}}
	r.add("user ID", "leak-ab12cd34")
	r.add("turn text", `Olá "Ana"`)
	r.add("fact value", "x")
	r.add("fact value", "acm")      // Short: only "acm" as a JSON string counts, not inside "acme".
	r.add("fact value", "second")   // Inside "Milliseconds" only: not a word, not a hit.
	r.add("fact value", "I am Ana") // Found in the sentence of a turn, between word boundaries.
	secrets, kinds := r.snapshot()
	hits, lines, err := scanDir(dir, notOurs, secrets, kinds)
	if err != nil {
		t.Fatal(err)
	}
	if lines != 5 {
		t.Errorf("scanned %d lines, want 5 (moto.log left out)", lines)
	}
	got := map[string]bool{}
	for _, h := range hits {
		got[h.file+" "+h.secret] = true
	}
	want := map[string]bool{
		"PutFactFunction.log leak-ab12cd34": true,
		"PutFactFunction.log I am Ana":      true,
		`ExtractorFunction.log Olá "Ana"`:   true,
		"ExtractorFunction.log x":           true,
	}
	if !maps.Equal(got, want) {
		t.Errorf("hits = %v, want %v", got, want)
	}
}
