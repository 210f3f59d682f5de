package stack

import (
	"context"
	"errors"
	"fmt"
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/internal/localnet"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/localtest/apigw"
	"github.com/usermemory/usermemory/localtest/lambdapool"
	"github.com/usermemory/usermemory/localtest/sqsevents"
	"github.com/usermemory/usermemory/localtest/token"
	"github.com/usermemory/usermemory/web"
)

// starting is what the steps of [Start] hand on to each other.
type starting struct {
	o        Options
	tmpl     *samtemplate.Template
	params   map[string]string
	logDir   string
	progress func(format string, args ...any)
	// The listeners opened first, their URLs in the parameters.
	issuerLn, pageLn, apiLn net.Listener
	issuerURL, pageURL      string
	// What the slow parts made.
	bootstraps map[string]string
	rie        string
	sqs        *sqs.Client
}

// Start builds and starts the stack and returns once it serves. On error
// it stops whatever it had started.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	s := &Stack{pools: map[string]*lambdapool.Pool{}, served: map[net.Listener]bool{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	st := &starting{o: o}
	steps := []func(context.Context, *starting) error{
		s.openLog, s.openListeners, s.startSlowParts, s.createResources,
		s.startFunctions, s.serveHTTP, s.startEventSources,
	}
	for _, step := range steps {
		if err := step(ctx, st); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// openLog opens the stack's log folder and log, and reads the template.
func (s *Stack) openLog(_ context.Context, st *starting) (err error) {
	st.logDir = filepath.Join(st.o.StateDir, "logs")
	if err := os.MkdirAll(st.logDir, 0o755); err != nil {
		return err
	}
	if st.o.Log == nil {
		f, err := s.logFile(st.logDir, "stack.log")
		if err != nil {
			return err
		}
		st.o.Log = f
	}
	s.log = slog.New(slog.NewTextHandler(st.o.Log, nil))
	st.tmpl, err = samtemplate.Load(st.o.Template)
	return err
}

// openListeners opens the listeners whose URLs go into the template's
// parameters and the functions' environment (the token issuer, the page,
// the API), starts the Converse stand-in, and sets the parameters: the
// options', the page's origin added to the API's CORS origins, the
// issuer and the audience of every JWT authorizer.
func (s *Stack) openListeners(_ context.Context, st *starting) (err error) {
	if st.issuerLn, err = localnet.Listen(); err != nil {
		return err
	}
	st.issuerURL = "http://" + st.issuerLn.Addr().String()
	if s.model, err = fakebedrock.Start("127.0.0.1:0"); err != nil {
		return err
	}
	// The memory page is served at its own origin, which the API's CORS
	// configuration must allow, as a frontend's would be in production.
	// Both ports are tried, so that every taken one is told at once.
	pageLn, pageErr := listenPort("page", st.o.PagePort)
	apiLn, apiErr := listenPort("api", st.o.APIPort)
	if err := errors.Join(pageErr, apiErr); err != nil {
		for _, ln := range []net.Listener{pageLn, apiLn} {
			if ln != nil {
				_ = ln.Close()
			}
		}
		return err
	}
	st.pageLn, st.apiLn = pageLn, apiLn
	st.pageURL = "http://" + pageLn.Addr().String()
	s.listeners = append(s.listeners, pageLn, apiLn)
	st.params = maps.Clone(st.o.Parameters)
	if st.params == nil {
		st.params = map[string]string{}
	}
	origins := st.params[CORSParameter]
	if origins == "" {
		origins, _ = st.tmpl.ParameterDefault(CORSParameter)
	}
	if origins != "" {
		origins += ","
	}
	// The same page opened as localhost is another origin.
	st.params[CORSParameter] = origins + st.pageURL + "," + strings.Replace(st.pageURL, "127.0.0.1", "localhost", 1)
	issParams, audParams := st.tmpl.JWTParameters()
	for _, p := range issParams {
		st.params[p] = st.issuerURL
	}
	for _, p := range audParams {
		st.params[p] = st.o.Audience
	}
	return nil
}

// resolve resolves the template with the stack's parameters; queueURL,
// nil before moto runs, names the queues.
func (st *starting) resolve(queueURL func(string) string) (*samtemplate.App, error) {
	app, err := st.tmpl.Resolve(samtemplate.Options{Region: DefaultRegion, AccountID: DefaultAccountID,
		StackName: DefaultStackName, Parameters: st.params, QueueURL: queueURL})
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	return app, nil
}

// startSlowParts starts moto_server, builds the functions a first
// resolution of the template names, and makes the token key, all at once;
// a missing moto_server is told first, with how to install it. The key is
// saved, and the issuer serves.
func (s *Stack) startSlowParts(ctx context.Context, st *starting) error {
	first, err := st.resolve(nil)
	if err != nil {
		return err
	}
	if err := motoserver.Installed(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var motoErr, buildErr, keyErr error
	began := time.Now()
	st.progress = st.o.progress(began)
	wg.Go(func() {
		st.progress("starting moto_server (DynamoDB and SQS)…")
		s.moto, motoErr = motoserver.Start(ctx, filepath.Join(st.logDir, "moto.log"))
		s.log.Info("moto_server started", "ms", time.Since(began).Milliseconds())
		if motoErr == nil {
			st.progress("moto_server ready at %s", s.moto.Endpoint)
		}
	})
	wg.Go(func() {
		st.bootstraps, st.rie, buildErr = build(ctx, st.o.Root, st.tmpl.Dir, st.o.CacheDir, st.o.StateDir, first.Functions, st.progress)
		s.log.Info("functions built", "ms", time.Since(began).Milliseconds())
		if buildErr == nil {
			st.progress("functions built")
		}
	})
	wg.Go(func() { s.issuer, keyErr = token.NewIssuer() })
	wg.Wait()
	if err := errors.Join(motoErr, buildErr, keyErr); err != nil {
		return err
	}
	if err := s.issuer.Save(filepath.Join(st.o.StateDir, KeyFile)); err != nil {
		return err
	}
	s.serve(st.issuerLn, s.issuerHandler(st.issuerURL))
	return nil
}

// queueURL returns the URL moto gives the queue named name.
func (s *Stack) queueURL(name string) string {
	return s.moto.Endpoint + "/" + DefaultAccountID + "/" + name
}

// createResources resolves the template with the queues' URLs, serves
// the fault proxies, creates the table and the queues, fills in Info and
// loads the table items a previous run kept.
func (s *Stack) createResources(ctx context.Context, st *starting) (err error) {
	if s.App, err = st.resolve(s.queueURL); err != nil {
		return err
	}
	cfg := AWSConfig(DefaultRegion)
	ddb := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(s.moto.Endpoint) })
	if err := s.serveFaultProxies(); err != nil {
		return err
	}
	st.sqs = sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.moto.Endpoint) })
	var table string
	var tableErr, queueErr error
	var wg sync.WaitGroup
	st.progress("creating the table and the queues from the template…")
	wg.Go(func() { table, tableErr = createTable(ctx, ddb, s.App) })
	wg.Go(func() { queueErr = createQueues(ctx, st.sqs, s.App, st.o.VisibilityTimeout) })
	wg.Wait()
	if err := errors.Join(tableErr, queueErr); err != nil {
		return err
	}
	s.log.Info("table and queues created")
	s.Info = Info{
		AWSEndpoint: s.moto.Endpoint, DynamoDBURL: s.dynamoURL, SQSURL: s.sqsURL,
		Region: DefaultRegion, TableName: table, BedrockURL: s.model.URL(),
		JWKSURL: st.issuerURL + token.JWKSPath, Issuer: st.issuerURL, Audience: st.o.Audience,
		Functions: map[string]string{}, Parameters: s.App.Parameters, StateDir: st.o.StateDir,
		KeyFile: filepath.Join(st.o.StateDir, KeyFile), LogDir: st.logDir, PID: os.Getpid(),
	}
	if n, err := s.loadTable(ctx, st.o.StateDir); err != nil {
		return err
	} else if n > 0 {
		st.progress("loaded %d items of the table from %s", n, filepath.Join(st.o.StateDir, TableFile))
	}
	return nil
}

// startFunctions puts each function of the template in a pool with the
// template's environment and limits, reads the claim and scopes the
// functions are set up with, and starts one execution environment each.
func (s *Stack) startFunctions(ctx context.Context, st *starting) error {
	sources := map[string]int{}
	for _, ev := range s.App.SQSEvents {
		sources[ev.Function] = max(sources[ev.Function], ev.MaxConcurrency)
	}
	for _, id := range slices.Sorted(maps.Keys(s.App.Functions)) {
		f := s.App.Functions[id]
		s.Info.Functions[id] = f.Name
		logf, err := s.logFile(st.logDir, id+".log")
		if err != nil {
			return err
		}
		limit := st.o.MaxEnvironments
		if limit == 0 {
			limit = max(lambdapool.DefaultMax, sources[id])
		}
		if f.ReservedConcurrency > 0 {
			limit = min(limit, f.ReservedConcurrency)
		}
		s.pools[id] = lambdapool.New(lambdapool.Spec{
			Name: f.Name, RIE: st.rie, Bootstrap: st.bootstraps[id],
			Env: s.environment(f), Timeout: f.Timeout, MemoryMB: f.MemoryMB,
			Max: limit, Log: logf,
		})
		s.Info.TenantClaim = or(f.Env[setup.EnvTenantClaim], s.Info.TenantClaim)
		s.Info.UserScope = or(f.Env[setup.EnvUserScope], s.Info.UserScope)
		s.Info.AdminScope = or(f.Env[setup.EnvAdminScope], s.Info.AdminScope)
	}
	s.Info.TenantClaim = or(s.Info.TenantClaim, setup.DefaultTenantClaim)
	s.Info.UserScope = or(s.Info.UserScope, setup.DefaultUserScope)
	s.Info.AdminScope = or(s.Info.AdminScope, setup.DefaultAdminScope)
	st.progress("starting one execution environment per function under the Runtime Interface Emulator…")
	warm := make(chan error, len(s.pools))
	for _, p := range s.pools {
		go func() { warm <- p.Warm(ctx, 1) }()
	}
	for range s.pools {
		if err := <-warm; err != nil {
			return err
		}
	}
	return nil
}

// factAPIs returns the HTTP APIs of app with a JWT authorizer: the fact
// API. An API without one is the memory page's (PageApi).
func factAPIs(app *samtemplate.App) []*samtemplate.HTTPAPI {
	var out []*samtemplate.HTTPAPI
	for _, id := range slices.Sorted(maps.Keys(app.APIs)) {
		if len(app.APIs[id].Authorizers) > 0 {
			out = append(out, app.APIs[id])
		}
	}
	return out
}

// servedAPIs returns the APIs the emulator runs: the fact API, and the
// API without an authorizer (the memory page's, PageApi), nil when the
// template has none. Deployed, the page has an origin of its own; here
// its API is reached at the fact API's origin under web.Path (pageMux),
// and the page port serves the page at another origin, where its calls
// to the API cross origins as they do deployed.
func servedAPIs(app *samtemplate.App) (*samtemplate.HTTPAPI, *samtemplate.HTTPAPI, error) {
	apis := factAPIs(app)
	if len(apis) != 1 {
		return nil, nil, fmt.Errorf("stack: the template has %d HTTP APIs with a JWT authorizer; the local stack runs exactly one", len(apis))
	}
	var page *samtemplate.HTTPAPI
	for _, id := range slices.Sorted(maps.Keys(app.APIs)) {
		if len(app.APIs[id].Authorizers) > 0 {
			continue
		}
		if page != nil {
			return nil, nil, fmt.Errorf("stack: the template has HTTP APIs %s and %s without an authorizer; the local stack runs one, the page's", page.LogicalID, id)
		}
		a := *app.APIs[id]
		a.Routes = slices.Clone(a.Routes)
		for i := range a.Routes {
			a.Routes[i].Authorizer = "NONE"
		}
		page = &a
	}
	return apis[0], page, nil
}

// pageMux sends the requests of /app and under /app/ (web.Path) to page,
// the page's API, and every other to api: the fact API's routes, and its
// {"message":"Not Found"}, stay as deployed.
func pageMux(api, page http.Handler) http.Handler {
	root := strings.TrimSuffix(web.Path, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if page != nil && (r.URL.Path == root || strings.HasPrefix(r.URL.Path, web.Path)) {
			page.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// newGateway returns the emulator of api, its authorizers' keys from the
// stack's issuer.
func (s *Stack) newGateway(api *samtemplate.HTTPAPI, issuerURL string) (*apigw.Gateway, error) {
	keys := map[string]*apigw.JWKS{}
	for name, a := range api.Authorizers {
		if a.Issuer != issuerURL {
			return nil, fmt.Errorf("stack: authorizer %s: issuer %q is not a parameter the local stack can point at its issuer", name, a.Issuer)
		}
		keys[name] = apigw.NewJWKS(s.Info.JWKSURL)
	}
	return apigw.New(apigw.Config{
		API: api, Keys: keys, Invoke: s.invokeFunc, AccountID: DefaultAccountID,
		APIID: strings.ToLower(api.LogicalID), Log: s.log.With("part", "apigw", "api", api.LogicalID),
	})
}

// serveHTTP serves the template's HTTP APIs behind the API Gateway
// emulator (servedAPIs), the memory page at its own origin, and Lambda's
// Invoke API (with the fault controls) for the invoke command.
func (s *Stack) serveHTTP(_ context.Context, st *starting) error {
	api, page, err := servedAPIs(s.App)
	if err != nil {
		return err
	}
	gw, err := s.newGateway(api, st.issuerURL)
	if err != nil {
		return err
	}
	var pageGW http.Handler
	if page != nil {
		if pageGW, err = s.newGateway(page, st.issuerURL); err != nil {
			return err
		}
	}
	s.Info.APIURL = "http://" + st.apiLn.Addr().String()
	s.serve(st.apiLn, pageMux(gw, pageGW))
	s.Info.PageURL = st.pageURL
	s.configureSignIn()
	s.serve(st.pageLn, web.NewHandler(web.Config{APIURL: s.Info.APIURL, TokenCommand: tokenCommand(st.o.StateDir)}))
	ln, err := localnet.Listen()
	if err != nil {
		return err
	}
	s.Info.LambdaURL = "http://" + ln.Addr().String()
	s.Info.FaultURL = s.Info.LambdaURL + "/faults"
	s.serve(ln, s.lambdaAPI())
	return nil
}

// startEventSources polls each enabled SQS event source of the template
// into its function, as Lambda's event source mapping does.
func (s *Stack) startEventSources(ctx context.Context, st *starting) error {
	for _, ev := range s.App.SQSEvents {
		if !ev.Enabled {
			continue
		}
		q := s.App.Queues[ev.Queue]
		if q.FIFO {
			// The extraction queue, which gateways send to.
			s.Info.QueueURL = s.queueURL(q.Name)
			s.Info.Extractor = ev.Function
			s.Info.ExtractorEnv = maps.Clone(s.App.Functions[ev.Function].Env)
			if q.DeadLetterQueue != "" {
				s.Info.DLQURL = s.queueURL(s.App.Queues[q.DeadLetterQueue].Name)
			}
		} else {
			// The idle read's queue of delayed copies; moto_server honours
			// their DelaySeconds (docs/localtest.md).
			s.Info.IdleQueueURL = s.queueURL(q.Name)
		}
		fn := ev.Function
		s.pollers = append(s.pollers, sqsevents.Start(context.WithoutCancel(ctx), sqsevents.Config{
			API: st.sqs, QueueURL: s.queueURL(q.Name),
			QueueARN:                fmt.Sprintf("arn:aws:sqs:%s:%s:%s", DefaultRegion, DefaultAccountID, q.Name),
			Region:                  DefaultRegion,
			BatchSize:               ev.BatchSize,
			BatchingWindow:          ev.BatchingWindow,
			ReportBatchItemFailures: ev.ReportBatchItemFailures,
			MaxConcurrency:          ev.MaxConcurrency,
			PollWait:                st.o.PollWait,
			Invoke: func(ctx context.Context, payload []byte) (lambdapool.Result, error) {
				return s.invokeFunc(ctx, fn, payload)
			},
			Log: s.log.With("part", "sqsevents", "function", fn),
		}))
	}
	return nil
}
