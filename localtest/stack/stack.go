// Package stack starts the whole of usermemory on one machine, without
// Docker, from template.yaml: moto_server for DynamoDB and SQS with the
// template's table and queues, every function built for this machine and
// run under the Lambda Runtime Interface Emulator in a pool of execution
// environments, the HTTP API emulator with its JWT authorizer, the SQS
// event source of the extractor, the Bedrock Converse stand-in and a local
// token issuer. Everything listens on 127.0.0.1 only, and Close stops every
// process it started.
//
// The command in localtest (go run ./localtest up) and the end-to-end
// tests both start it with [Start].
package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/internal/localnet"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/localtest/fault"
	"github.com/usermemory/usermemory/localtest/lambdapool"
	"github.com/usermemory/usermemory/localtest/sqsevents"
	"github.com/usermemory/usermemory/localtest/token"
)

// Local deployment values.
const (
	DefaultRegion    = "us-east-1"
	DefaultAccountID = "123456789012"
	DefaultStackName = "usermemory-local"
	// DefaultAudience is the audience the local stack's authorizer accepts
	// and its tokens carry, in place of the template's JWT audience.
	DefaultAudience = "usermemory-local"
	// InfoFile is the name of the state file in the state folder.
	InfoFile = "stack.json"
	// KeyFile is the name of the issuer's private key in the state folder.
	KeyFile = "issuer.pem"
)

// DefaultStateDir is where the stack keeps its binaries, logs, key and
// state file unless told otherwise.
func DefaultStateDir() string { return filepath.Join(os.TempDir(), "usermemory-localtest") }

// DefaultCacheDir is where the stack keeps built binaries between runs:
// the user's cache folder, or the temporary folder when there is none.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "usermemory-localtest")
}

// Options configure [Start]. The zero value starts the stack of the
// template.yaml of the module that holds the working folder.
type Options struct {
	// Root is the module's folder (holding go.mod and template.yaml);
	// "" means the nearest folder above the working folder with a go.mod.
	Root string
	// Template is the template's path; "" means Root/template.yaml.
	Template string
	// StateDir holds the logs, the key, the state file and a link to each
	// function's bootstrap; "" means [DefaultStateDir].
	StateDir string
	// CacheDir keeps the built binaries between runs, so that a start
	// with a warm Go build cache relinks nothing; "" means
	// [DefaultCacheDir].
	CacheDir string
	// Parameters override the template's parameter values. The JWT
	// issuer and audience parameters are always the local ones.
	Parameters map[string]string
	// Audience is the local audience; "" means [DefaultAudience].
	Audience string
	// MaxEnvironments is the most execution environments per function;
	// 0 means [lambdapool.DefaultMax] (and at least the SQS event source's maximum concurrency
	// for the function it feeds).
	MaxEnvironments int
	// VisibilityTimeout, when not zero, replaces the template's visibility
	// timeout of the queues, so that tests see redelivery and redrive in
	// seconds rather than minutes. Leave it zero to run the template as is.
	VisibilityTimeout time.Duration
	// PollWait is the long-polling wait of the SQS event source; 0 means
	// [sqsevents.DefaultPollWait].
	PollWait time.Duration
	// Log receives the stack's own lines (requests, batches, builds);
	// nil means the file logs/stack.log in the state folder.
	Log io.Writer
	// Progress, when not nil, receives one line per step of the start
	// (the builds, moto_server, the table and queues, the execution
	// environments), for a person waiting at a terminal.
	Progress io.Writer
	// APIPort and PagePort are the ports of the HTTP API and of the
	// memory page on 127.0.0.1; 0 picks a free port, which is what tests
	// want so that parallel runs never collide. A port that is taken is
	// a *[PortError]; when both are, [Start] returns both (see
	// [TakenPorts]).
	APIPort, PagePort int
}

// PortError is the error of [Start] when a port it was told to listen on
// is taken.
type PortError struct {
	// Part is "api" or "page".
	Part string
	// Port is the port asked for, and Err the error of listening on it.
	Port int
	Err  error
}

// Error says which port of which part is taken.
func (e *PortError) Error() string {
	return fmt.Sprintf("stack: port %d of the %s is taken (is another stack or program listening there?): %v", e.Port, e.PartName(), e.Err)
}

// PartName names the part whose port is taken: "HTTP API" or "memory page".
func (e *PortError) PartName() string { return partNames[e.Part] }

// Unwrap returns the error of listening.
func (e *PortError) Unwrap() error { return e.Err }

// TakenPorts returns every *[PortError] in err, which holds one for each
// taken port when [Start] fails on more than one.
func TakenPorts(err error) []*PortError {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*PortError
		for _, e := range j.Unwrap() {
			out = append(out, TakenPorts(e)...)
		}
		return out
	}
	if pe := (*PortError)(nil); errors.As(err, &pe) {
		return []*PortError{pe}
	}
	return nil
}

var partNames = map[string]string{"api": "HTTP API", "page": "memory page"}

// listenPort listens on 127.0.0.1:port, or on a free port when port is 0.
func listenPort(part string, port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil && port != 0 {
		return nil, &PortError{Part: part, Port: port, Err: err}
	}
	return ln, err
}

// Info says where everything of a running stack is. The command writes it
// as JSON to the state file.
type Info struct {
	// APIURL is the HTTP API's base URL.
	APIURL string `json:"apiUrl"`
	// PageURL serves the "What I remember about you" page at an origin of
	// its own, where it asks for a token.
	PageURL string `json:"pageUrl"`
	// AppURL serves the page as a deployed stack does, under the API's
	// /app/, where it signs in through the token issuer's stand-in of a
	// managed login.
	AppURL string `json:"appUrl"`
	// AWSEndpoint is moto_server's URL, for DynamoDB and SQS, in Region.
	AWSEndpoint string `json:"awsEndpoint"`
	Region      string `json:"region"`
	// DynamoDBURL is the DynamoDB endpoint the functions use: moto behind
	// a proxy that applies one request at a time, as DynamoDB applies
	// each to an item atomically, and injects faults. A local gateway
	// that writes facts uses it too.
	DynamoDBURL string `json:"dynamodbUrl"`
	// SQSURL is the SQS endpoint of the functions and of gateways (the
	// send and chat commands): moto behind a proxy that injects faults.
	// The SQS event source, which is AWS's side, polls moto directly.
	SQSURL string `json:"sqsUrl"`
	// FaultURL serves the control API of the faults of DynamoDB, SQS and
	// the Bedrock stand-in (package localtest/fault; the command
	// go run ./localtest fault).
	FaultURL string `json:"faultUrl"`
	// TableName is the table; QueueURL the extractor's queue and DLQURL
	// its dead-letter queue.
	TableName string `json:"tableName"`
	QueueURL  string `json:"queueUrl"`
	DLQURL    string `json:"dlqUrl"`
	// IdleQueueURL is the idle read's queue of delayed copies, fed to the
	// extractor too (docs/extractor.md, "Idle read").
	IdleQueueURL string `json:"idleQueueUrl,omitempty"`
	// BedrockURL is the Converse stand-in's URL (its control endpoint is
	// under /_control/); the functions reach it through a fault injector.
	BedrockURL string `json:"bedrockUrl"`
	// LambdaURL serves Lambda's Invoke API for the functions
	// (POST /2015-03-31/functions/{name}/invocations) and GET /stats.
	LambdaURL string `json:"lambdaUrl"`
	// JWKSURL publishes the issuer's key; Issuer and Audience are what the
	// authorizer accepts and the tokens must carry.
	JWKSURL  string `json:"jwksUrl"`
	Issuer   string `json:"issuer"`
	Audience string `json:"audience"`
	// TenantClaim, UserScope and AdminScope are the functions' settings,
	// from the template.
	TenantClaim string `json:"tenantClaim"`
	UserScope   string `json:"userScope"`
	AdminScope  string `json:"adminScope"`
	// Functions maps each function's logical ID to its name; Extractor is
	// the logical ID of the function the queue feeds.
	Functions map[string]string `json:"functions"`
	Extractor string            `json:"extractor"`
	// ExtractorEnv is the extractor's environment from the template (its
	// table and memory settings, not the stack's endpoints), so that a
	// local gateway configures its memory.Store as the functions do.
	ExtractorEnv map[string]string `json:"extractorEnv,omitempty"`
	// Parameters are the template's parameters as this stack resolved
	// them, defaults and -param overrides, so that a test reads the
	// settings a stack runs with as it reads a deployed stack's.
	Parameters map[string]string `json:"parameters,omitempty"`
	// StateDir, KeyFile and LogDir are the state folder, the issuer's key
	// and the logs' folder.
	StateDir string `json:"stateDir"`
	KeyFile  string `json:"keyFile"`
	LogDir   string `json:"logDir"`
	// PID is the process running the stack.
	PID int `json:"pid"`
}

// Stack is a running local stack.
type Stack struct {
	// Info says where everything is.
	Info Info
	// App is the template as resolved for this stack.
	App *samtemplate.App

	issuer  *token.Issuer
	signIn  *token.SignIn
	model   *fakebedrock.Server
	moto    *motoserver.Server
	pools   map[string]*lambdapool.Pool
	pollers []*sqsevents.Poller
	servers []*http.Server
	// listeners are those opened early (API, page); served marks the ones
	// a server took over, which closes them.
	listeners []net.Listener
	served    map[net.Listener]bool
	logFiles  []*os.File
	log       *slog.Logger
	closeMu   sync.Mutex
	closed    bool
	// dynamoURL is the serialising proxy in front of moto's DynamoDB;
	// sqsURL and bedrockURL the proxies in front of moto's SQS and of the
	// Converse stand-in. Each injects the faults of faults.
	dynamoURL, sqsURL, bedrockURL string
	faults                        map[string]*fault.Injector
}

// CORSParameter is the template parameter that lists the origins CORS
// allows; the stack adds the memory page's origin to it.
const CORSParameter = "CorsAllowOrigins"

func (o *Options) defaults() error {
	if o.Root == "" {
		root, err := localnet.ModuleRoot()
		if err != nil {
			return err
		}
		o.Root = root
	}
	if o.Template == "" {
		o.Template = filepath.Join(o.Root, "template.yaml")
	}
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir()
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return err
	}
	if o.Audience == "" {
		o.Audience = DefaultAudience
	}
	var err error
	if o.StateDir, err = filepath.Abs(o.StateDir); err != nil {
		return err
	}
	return os.MkdirAll(o.StateDir, 0o755)
}

// progress returns the function that writes one line of progress, with
// the time since began, to o.Progress.
func (o *Options) progress(began time.Time) func(format string, args ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		if o.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(o.Progress, "  %5.1fs  %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
}

func (s *Stack) serve(ln net.Listener, h http.Handler) {
	s.served[ln] = true
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	go srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed after Close.
}

func (s *Stack) logFile(dir, name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	s.logFiles = append(s.logFiles, f)
	return f, nil
}

// environment returns a function's environment as Lambda gives it: the
// template's variables, the region and credentials, and the endpoints of
// the local services. Nothing comes from the environment of the caller
// but PATH.
func (s *Stack) environment(f *samtemplate.Function) []string {
	env := map[string]string{
		"PATH":                             os.Getenv("PATH"),
		"TZ":                               "UTC",
		"LANG":                             "en_US.UTF-8",
		"AWS_REGION":                       DefaultRegion,
		"AWS_DEFAULT_REGION":               DefaultRegion,
		"AWS_ACCESS_KEY_ID":                accessKeyID,
		"AWS_SECRET_ACCESS_KEY":            secretAccessKey,
		"AWS_CONFIG_FILE":                  os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE":      os.DevNull,
		"AWS_EC2_METADATA_DISABLED":        "true",
		"AWS_ENDPOINT_URL_DYNAMODB":        s.dynamoURL,
		"AWS_ENDPOINT_URL_SQS":             s.sqsURL,
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": s.bedrockURL,
		"AWS_EXECUTION_ENV":                "AWS_Lambda_" + f.Runtime,
		"AWS_LAMBDA_RUNTIME_API_LOCAL":     "aws-lambda-rie",
		"_HANDLER":                         f.Handler,
	}
	for k, v := range f.Env {
		env[k] = v
	}
	s.pageSignIn(env)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// Close stops every part of the stack and every process it started. It
// may be called more than once.
func (s *Stack) Close() {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for _, p := range s.pollers {
		p.Close()
	}
	for _, srv := range s.servers {
		_ = srv.Close()
	}
	// Listeners opened before a failed start and never served.
	for _, ln := range s.listeners {
		if !s.served[ln] {
			_ = ln.Close()
		}
	}
	var wg sync.WaitGroup
	for _, p := range s.pools {
		wg.Go(p.Close)
	}
	wg.Wait()
	if s.model != nil {
		_ = s.model.Close()
	}
	if s.moto != nil {
		s.moto.Stop()
	}
	for _, f := range s.logFiles {
		_ = f.Close()
	}
}

// Converse returns the Bedrock Converse stand-in, for scripted answers
// and faults.
func (s *Stack) Converse() *fakebedrock.Server { return s.model }

// Fault returns the fault injector of service: fault.DynamoDB.Name,
// fault.SQS.Name or fault.Bedrock.Name; nil for another name.
func (s *Stack) Fault(service string) *fault.Injector { return s.faults[service] }

// serveFaultProxies serves a fault injector in front of DynamoDB (behind
// it, the proxy that serialises requests), SQS and the Converse stand-in,
// and sets the URLs the functions use.
func (s *Stack) serveFaultProxies() error {
	errorLog := slog.NewLogLogger(s.log.With("part", "proxy").Handler(), slog.LevelWarn)
	serial, err := serialDynamoDB(s.moto.Endpoint, errorLog)
	if err != nil {
		return err
	}
	sqsProxy, err := reverseProxy(s.moto.Endpoint, errorLog)
	if err != nil {
		return err
	}
	modelProxy, err := reverseProxy(s.model.URL(), errorLog)
	if err != nil {
		return err
	}
	s.faults = map[string]*fault.Injector{}
	for _, p := range []struct {
		svc  fault.Service
		next http.Handler
		url  *string
	}{{fault.DynamoDB, serial, &s.dynamoURL}, {fault.SQS, sqsProxy, &s.sqsURL}, {fault.Bedrock, modelProxy, &s.bedrockURL}} {
		ln, err := localnet.Listen()
		if err != nil {
			return err
		}
		in := fault.New(p.svc, p.next)
		s.faults[p.svc.Name] = in
		*p.url = "http://" + ln.Addr().String()
		s.serve(ln, in)
	}
	return nil
}

// Issuer returns the local token issuer.
func (s *Stack) Issuer() *token.Issuer { return s.issuer }

// Invoke runs the function with logical ID (or function name) fn once
// with payload, as Lambda's Invoke API does.
func (s *Stack) Invoke(ctx context.Context, fn string, payload []byte) (lambdapool.Result, error) {
	return s.invokeFunc(ctx, fn, payload)
}

func (s *Stack) invokeFunc(ctx context.Context, fn string, payload []byte) (lambdapool.Result, error) {
	p := s.pool(fn)
	if p == nil {
		return lambdapool.Result{}, fmt.Errorf("stack: no function %s; the functions are %s (by logical ID, or by name)",
			fn, strings.Join(slices.Sorted(maps.Keys(s.Info.Functions)), ", "))
	}
	return p.Invoke(ctx, payload, "")
}

func (s *Stack) pool(fn string) *lambdapool.Pool {
	if p, ok := s.pools[fn]; ok {
		return p
	}
	for id, name := range s.Info.Functions {
		if name == fn {
			return s.pools[id]
		}
	}
	return nil
}

// Invocations returns the invocations of every function so far, by
// logical ID.
func (s *Stack) Invocations() map[string]int64 {
	out := make(map[string]int64, len(s.pools))
	for id, p := range s.pools {
		out[id] = p.Invocations()
	}
	return out
}

// EventSourceStats returns, over the SQS event sources, the batches handed
// to the function, the messages deleted after success, and the messages
// left for redelivery (reported as batch item failures, or in a batch
// whose invocation failed).
func (s *Stack) EventSourceStats() (batches, deleted, failed int64) {
	for _, p := range s.pollers {
		b, d, f := p.Stats()
		batches, deleted, failed = batches+b, deleted+d, failed+f
	}
	return batches, deleted, failed
}

// TotalInvocations returns the sum of [Stack.Invocations].
func (s *Stack) TotalInvocations() int64 {
	var n int64
	for _, p := range s.pools {
		n += p.Invocations()
	}
	return n
}

// WriteInfo writes the stack's Info as JSON to the state file and returns
// its path.
func (s *Stack) WriteInfo() (string, error) {
	b, err := json.MarshalIndent(s.Info, "", "  ")
	if err != nil {
		return "", err
	}
	// Written aside and renamed, so that a reader waiting for the file
	// (a test starting a stack) never reads it half written.
	path := filepath.Join(s.Info.StateDir, InfoFile)
	if err := os.WriteFile(path+".tmp", append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(path+".tmp", path)
}

// ReadInfo reads the state file of the stack running with state folder
// dir ("" for the default) and checks that its process still runs.
func ReadInfo(dir string) (Info, error) {
	if dir == "" {
		dir = DefaultStateDir()
	}
	b, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if errors.Is(err, os.ErrNotExist) {
		return Info{}, fmt.Errorf("stack: no running stack (no %s in %s): start one with `go run ./localtest up`", InfoFile, dir)
	}
	if err != nil {
		return Info{}, err
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return Info{}, fmt.Errorf("stack: %s: %w", InfoFile, err)
	}
	if info.PID > 0 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", info.PID)); err != nil {
			return Info{}, fmt.Errorf("stack: the stack of %s (process %d) no longer runs: start one with `go run ./localtest up`", dir, info.PID)
		}
	}
	return info, nil
}

// RemoveInfo removes the state file; the command calls it on exit.
func (s *Stack) RemoveInfo() {
	_ = os.Remove(filepath.Join(s.Info.StateDir, InfoFile))
}

func (s *Stack) lambdaAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", func(w http.ResponseWriter, r *http.Request) {
		payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 6<<20))
		if err != nil {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"Type": "User", "Message": "RequestTooLargeException"})
			return
		}
		if len(payload) == 0 {
			payload = []byte("{}")
		}
		res, err := s.invokeFunc(r.Context(), r.PathValue("name"), payload)
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"Type": "User", "Message": err.Error()})
			return
		}
		if res.Err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(res.Payload)
	})
	faults := fault.Control(slices.Collect(maps.Values(s.faults))...)
	mux.Handle("/faults", faults)
	mux.Handle("/faults/", faults)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"invocations": s.Invocations()})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
