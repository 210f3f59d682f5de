package samtemplate

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// App is a template resolved for one deployment: what the local stack
// starts.
type App struct {
	// Parameters are the values of every parameter, defaults and
	// overrides applied; lists are comma-separated.
	Parameters map[string]string
	// Functions, APIs, Tables and Queues are the resources by logical ID.
	Functions map[string]*Function
	APIs      map[string]*HTTPAPI
	Tables    map[string]*Table
	Queues    map[string]*Queue
	// SQSEvents are the SQS event sources of the functions.
	SQSEvents []SQSEvent
	// Properties are the properties of every resource whose condition
	// holds, by logical ID, intrinsic functions evaluated and Globals
	// merged: those of the resources the local stack does not run too
	// (roles, alarms, topics), for a test to read.
	Properties map[string]map[string]any
	// Outputs are the values of the outputs whose condition holds,
	// evaluated, by name.
	Outputs map[string]any
}

// Function is a Lambda function.
type Function struct {
	// LogicalID is the template's name of the function.
	LogicalID string
	// Name is its function name.
	Name string
	// CodeDir is the folder of its code (CodeUri), relative to the
	// template's folder.
	CodeDir string
	// Handler and Runtime are the template's (bootstrap, provided.al2023).
	Handler string
	Runtime string
	// Env holds the environment variables, Globals merged.
	Env map[string]string
	// Timeout is the function's timeout (3 s unless set) and MemoryMB its
	// memory (128 MB unless set).
	Timeout  time.Duration
	MemoryMB int
	// ReservedConcurrency is 0 when not set.
	ReservedConcurrency int
}

// HTTPAPI is an API Gateway HTTP API.
type HTTPAPI struct {
	// LogicalID is the template's name of the API.
	LogicalID string
	// Authorizers by name; DefaultAuthorizer applies to routes naming none.
	Authorizers       map[string]*Authorizer
	DefaultAuthorizer string
	// CORS is nil when the API has no CORS configuration.
	CORS *CORS
	// Routes are sorted by route key.
	Routes []Route
}

// Authorizer is a JWT authorizer.
type Authorizer struct {
	// Name is the authorizer's name in the API's Auth.Authorizers.
	Name string
	// Issuer and Audience are its JwtConfiguration's issuer and audience.
	Issuer   string
	Audience []string
	// IdentitySource is where the token is, e.g.
	// $request.header.Authorization.
	IdentitySource string
}

// CORS is the CORS configuration of an HTTP API.
type CORS struct {
	// The fields are those of the CorsConfiguration; MaxAge in seconds.
	AllowOrigins     []string
	AllowHeaders     []string
	AllowMethods     []string
	ExposeHeaders    []string
	AllowCredentials bool
	MaxAge           int
}

// Route is one route of an HTTP API.
type Route struct {
	// Method is upper case, or ANY; "" for the $default route.
	Method string
	// Path is the route path, such as /v1/me/facts/{key}, or $default.
	Path string
	// Function is the logical ID of the function the route invokes.
	Function string
	// Authorizer names the route's authorizer: "" for the API's default,
	// NONE for none.
	Authorizer string
	// Scopes are the route's AuthorizationScopes.
	Scopes []string
}

// Key returns the route key API Gateway reports, e.g. "GET /v1/me/facts",
// or "$default".
func (r Route) Key() string {
	if r.Path == "$default" {
		return r.Path
	}
	return r.Method + " " + r.Path
}

// Table is a DynamoDB table.
type Table struct {
	// LogicalID is the template's name, Name the table's name.
	LogicalID string
	Name      string
	// HashKey and RangeKey are the key attributes ("" for no sort key),
	// their types S, N or B.
	HashKey      string
	HashKeyType  string
	RangeKey     string
	RangeKeyType string
	// BillingMode is PAY_PER_REQUEST or PROVISIONED.
	BillingMode string
	// TTLAttribute is "" when TTL is off.
	TTLAttribute string
}

// Queue is an SQS queue.
type Queue struct {
	// LogicalID is the template's name, Name the queue's name.
	LogicalID string
	Name      string
	// Attributes are the SQS attributes to create it with
	// (VisibilityTimeout, MessageRetentionPeriod, FifoQueue,
	// ContentBasedDeduplication, RedrivePolicy…), values as SQS takes them.
	Attributes map[string]string
	// FIFO is set for a FIFO queue.
	FIFO bool
	// VisibilityTimeout is 30 s unless the template sets it.
	VisibilityTimeout time.Duration
	// DeadLetterQueue is the logical ID of the dead-letter queue, "" for
	// none, and MaxReceiveCount its redrive threshold.
	DeadLetterQueue string
	MaxReceiveCount int
}

// SQSEvent is an SQS event source of a function.
type SQSEvent struct {
	// Function is the logical ID of the function the event invokes.
	Function string
	// Queue is the logical ID of the queue.
	Queue     string
	BatchSize int
	// BatchingWindow is the MaximumBatchingWindowInSeconds.
	BatchingWindow time.Duration
	// ReportBatchItemFailures is set when FunctionResponseTypes holds it.
	ReportBatchItemFailures bool
	// MaxConcurrency is ScalingConfig.MaximumConcurrency, 0 when not set.
	MaxConcurrency int
	// Enabled is false when the template switches the event off.
	Enabled bool
}

// Resolve evaluates the template for the deployment o describes.
func (t *Template) Resolve(o Options) (*App, error) {
	if o.QueueURL == nil {
		o.QueueURL = func(name string) string { return "http://sqs.local/" + o.AccountID + "/" + name }
	}
	t.opts = o
	t.resources = make(map[string]*resource, len(t.base))
	for id, r := range t.base {
		c := *r
		t.resources[id] = &c
	}
	e, params, err := t.newEvaluator(o)
	if err != nil {
		return nil, err
	}
	app := &App{
		Parameters: params,
		Functions:  map[string]*Function{},
		APIs:       map[string]*HTTPAPI{},
		Tables:     map[string]*Table{},
		Queues:     map[string]*Queue{},
		Properties: map[string]map[string]any{},
	}
	// Names first: Refs between resources need them.
	if err := t.nameResources(e); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(t.resources)) {
		r := t.resources[id]
		props, err := e.resolve(r.props)
		if err != nil {
			return nil, fmt.Errorf("sam: %s: %w", id, err)
		}
		p := mapOf(props)
		app.Properties[id] = p
		switch r.typ {
		case TypeFunction:
			err = t.function(app, r, p)
		case TypeHTTPAPI:
			err = api(app, r, p)
		case TypeTable:
			err = table(app, r, p)
		case TypeQueue:
			err = t.queue(app, r, p)
		}
		if err != nil {
			return nil, fmt.Errorf("sam: %s: %w", id, err)
		}
	}
	if app.Outputs, err = outputs(e, mapOf(t.raw["Outputs"])); err != nil {
		return nil, err
	}
	for _, q := range app.Queues {
		if q.DeadLetterQueue != "" {
			if _, ok := app.Queues[q.DeadLetterQueue]; !ok {
				return nil, fmt.Errorf("sam: %s: dead-letter queue %s is not a queue of the template", q.LogicalID, q.DeadLetterQueue)
			}
		}
	}
	for _, a := range app.APIs {
		sort.Slice(a.Routes, func(i, j int) bool { return a.Routes[i].Key() < a.Routes[j].Key() })
	}
	sort.Slice(app.SQSEvents, func(i, j int) bool { return app.SQSEvents[i].Function < app.SQSEvents[j].Function })
	return app, nil
}

// outputs evaluates the Value of each output of decls whose Condition
// holds.
func outputs(e *evaluator, decls map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(decls)) {
		o := mapOf(decls[name])
		if c, ok := o["Condition"].(string); ok {
			on, err := e.condition(c)
			if err != nil {
				return nil, fmt.Errorf("sam: output %s: %w", name, err)
			}
			if !on {
				continue
			}
		}
		v, err := e.resolve(o["Value"])
		if err != nil {
			return nil, fmt.Errorf("sam: output %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// nameResources drops the resources whose condition is false and names
// the others: the physical name of a queue, a table or a function, the
// logical ID of the rest.
func (t *Template) nameResources(e *evaluator) error {
	for _, id := range slices.Sorted(maps.Keys(t.resources)) {
		r := t.resources[id]
		if r.condition != "" {
			on, err := e.condition(r.condition)
			if err != nil {
				return fmt.Errorf("sam: %s: %w", id, err)
			}
			if !on {
				delete(t.resources, id)
				continue
			}
		}
		r.name = id
	}
	for _, id := range slices.Sorted(maps.Keys(t.resources)) {
		r := t.resources[id]
		if r.typ == TypeQueue || r.typ == TypeTable || r.typ == TypeFunction {
			n, err := t.physicalName(e, r)
			if err != nil {
				return fmt.Errorf("sam: %w", err)
			}
			r.name = n
		}
	}
	return nil
}

// newEvaluator returns an evaluator of the parameter values of o, defaults
// applied, and those values, lists comma-separated.
func (t *Template) newEvaluator(o Options) (*evaluator, map[string]string, error) {
	e := &evaluator{t: t, params: map[string]any{}, conditions: map[string]bool{}, evaluating: map[string]bool{}}
	values := map[string]string{}
	for name, p := range mapOf(t.raw["Parameters"]) {
		v, declared := t.ParameterDefault(name)
		if ov, ok := o.Parameters[name]; ok {
			v = ov
		} else if declared && mapOf(p)["Default"] == nil {
			return nil, nil, fmt.Errorf("sam: parameter %s has no default and no value", name)
		}
		values[name] = v
		typ := fmt.Sprint(mapOf(p)["Type"])
		if typ == "CommaDelimitedList" || strings.HasPrefix(typ, "List<") {
			var l []string
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					l = append(l, s)
				}
			}
			e.params[name] = l
		} else {
			e.params[name] = v
		}
	}
	for name := range o.Parameters {
		if _, ok := values[name]; !ok {
			return nil, nil, fmt.Errorf("sam: override of parameter %s, which the template does not declare", name)
		}
	}
	return e, values, nil
}

func (t *Template) function(app *App, r *resource, p map[string]any) error {
	f := &Function{
		LogicalID: r.id,
		Name:      r.name,
		Handler:   stringOf(p["Handler"]),
		Runtime:   stringOf(p["Runtime"]),
		Env:       map[string]string{},
		Timeout:   3 * time.Second,
		MemoryMB:  128,
	}
	code := stringOf(p["CodeUri"])
	if code == "" {
		return fmt.Errorf("no CodeUri (a local folder)")
	}
	f.CodeDir = filepath.Clean(code)
	for k, v := range mapOf(mapOf(p["Environment"])["Variables"]) {
		f.Env[k] = stringOf(v)
	}
	var err error
	if p["Timeout"] != nil {
		if f.Timeout, err = seconds(p["Timeout"], "Timeout"); err != nil {
			return err
		}
	}
	if p["MemorySize"] != nil {
		if f.MemoryMB, err = intOf(p["MemorySize"], "MemorySize"); err != nil {
			return err
		}
	}
	if f.ReservedConcurrency, err = intOf(p["ReservedConcurrentExecutions"], "ReservedConcurrentExecutions"); err != nil {
		return err
	}
	app.Functions[r.id] = f
	for _, evName := range slices.Sorted(maps.Keys(mapOf(p["Events"]))) {
		ev := mapOf(mapOf(p["Events"])[evName])
		ep := mapOf(ev["Properties"])
		switch ev["Type"] {
		case "HttpApi":
			t.httpAPIRoute(app, r.id, ep)
		case "SQS":
			src, err := t.sqsEvent(r.id, evName, ep)
			if err != nil {
				return err
			}
			app.SQSEvents = append(app.SQSEvents, src)
		}
	}
	return nil
}

// httpAPIRoute adds to its API the route of an HttpApi event of function
// fn with properties ep.
func (t *Template) httpAPIRoute(app *App, fn string, ep map[string]any) {
	apiID := ImplicitHTTPAPI
	if ep["ApiId"] != nil {
		// The Ref of an HTTP API resolves to its lower-case ID.
		apiID = t.apiByRef(stringOf(ep["ApiId"]))
	}
	a := apiOf(app, apiID)
	// "If no Path and Method are specified, SAM will create a default API
	// path that routes any request that doesn't map to a different
	// endpoint to this Lambda function" (AWS SAM developer guide, HttpApi,
	// https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/sam-property-function-httpapi.html,
	// read 2026-12-07): the $default route.
	route := Route{
		Method:   strings.ToUpper(or(stringOf(ep["Method"]), "ANY")),
		Path:     or(stringOf(ep["Path"]), "/"),
		Function: fn,
	}
	if ep["Method"] == nil && ep["Path"] == nil {
		route.Path = "$default"
	}
	if route.Method == "X-AMAZON-APIGATEWAY-ANY-METHOD" {
		route.Method = "ANY"
	}
	if route.Path == "$default" {
		route.Method, route.Path = "", "$default"
	}
	auth := mapOf(ep["Auth"])
	route.Authorizer = stringOf(auth["Authorizer"])
	route.Scopes = listOf(auth["AuthorizationScopes"])
	a.Routes = append(a.Routes, route)
}

// sqsEvent returns the event source of an SQS event named evName of
// function fn with properties ep, with Lambda's defaults.
func (t *Template) sqsEvent(fn, evName string, ep map[string]any) (SQSEvent, error) {
	src := SQSEvent{Function: fn, BatchSize: 10, Enabled: true}
	src.Queue = t.queueByARN(stringOf(ep["Queue"]))
	if src.Queue == "" {
		return src, fmt.Errorf("event %s: queue %s is not a queue of the template", evName, stringOf(ep["Queue"]))
	}
	var err error
	if ep["BatchSize"] != nil {
		if src.BatchSize, err = intOf(ep["BatchSize"], "BatchSize"); err != nil {
			return src, err
		}
	}
	if src.BatchingWindow, err = seconds(ep["MaximumBatchingWindowInSeconds"], "MaximumBatchingWindowInSeconds"); err != nil {
		return src, err
	}
	for _, rt := range listOf(ep["FunctionResponseTypes"]) {
		if rt == "ReportBatchItemFailures" {
			src.ReportBatchItemFailures = true
		}
	}
	if src.MaxConcurrency, err = intOf(mapOf(ep["ScalingConfig"])["MaximumConcurrency"], "MaximumConcurrency"); err != nil {
		return src, err
	}
	if ep["Enabled"] != nil {
		src.Enabled = truthy(ep["Enabled"])
	}
	return src, nil
}

func (t *Template) apiByRef(ref string) string {
	for id, r := range t.resources {
		if r.typ == TypeHTTPAPI && strings.ToLower(id) == ref {
			return id
		}
	}
	return ref
}

func (t *Template) queueByARN(arn string) string {
	for id, r := range t.resources {
		if r.typ == TypeQueue && (t.attOf(r, "Arn") == arn || r.name == arn) {
			return id
		}
	}
	return ""
}

func apiOf(app *App, id string) *HTTPAPI {
	a, ok := app.APIs[id]
	if !ok {
		a = &HTTPAPI{LogicalID: id, Authorizers: map[string]*Authorizer{}}
		app.APIs[id] = a
	}
	return a
}

func api(app *App, r *resource, p map[string]any) error {
	a := apiOf(app, r.id)
	auth := mapOf(p["Auth"])
	a.DefaultAuthorizer = stringOf(auth["DefaultAuthorizer"])
	for name, v := range mapOf(auth["Authorizers"]) {
		am := mapOf(v)
		jc := mapOf(am["JwtConfiguration"])
		if jc == nil {
			return fmt.Errorf("authorizer %s: only JWT authorizers run locally", name)
		}
		a.Authorizers[name] = &Authorizer{
			Name:           name,
			Issuer:         stringOf(jc["issuer"]),
			Audience:       listOf(jc["audience"]),
			IdentitySource: or(stringOf(am["IdentitySource"]), "$request.header.Authorization"),
		}
	}
	if c := mapOf(p["CorsConfiguration"]); c != nil {
		cors := &CORS{
			AllowOrigins:     listOf(c["AllowOrigins"]),
			AllowHeaders:     listOf(c["AllowHeaders"]),
			AllowMethods:     listOf(c["AllowMethods"]),
			ExposeHeaders:    listOf(c["ExposeHeaders"]),
			AllowCredentials: truthy(c["AllowCredentials"]),
		}
		var err error
		if cors.MaxAge, err = intOf(c["MaxAge"], "MaxAge"); err != nil {
			return err
		}
		a.CORS = cors
	} else if c, ok := p["CorsConfiguration"].(bool); ok && c {
		a.CORS = &CORS{AllowOrigins: []string{"*"}, AllowHeaders: []string{"*"}, AllowMethods: []string{"*"}}
	}
	return nil
}

func table(app *App, r *resource, p map[string]any) error {
	t := &Table{LogicalID: r.id, Name: r.name, BillingMode: or(stringOf(p["BillingMode"]), "PROVISIONED")}
	types := map[string]string{}
	for _, d := range listAny(p["AttributeDefinitions"]) {
		dm := mapOf(d)
		types[stringOf(dm["AttributeName"])] = stringOf(dm["AttributeType"])
	}
	for _, k := range listAny(p["KeySchema"]) {
		km := mapOf(k)
		name := stringOf(km["AttributeName"])
		switch stringOf(km["KeyType"]) {
		case "HASH":
			t.HashKey, t.HashKeyType = name, types[name]
		case "RANGE":
			t.RangeKey, t.RangeKeyType = name, types[name]
		}
	}
	if t.HashKey == "" {
		return fmt.Errorf("no HASH key in KeySchema")
	}
	if ttl := mapOf(p["TimeToLiveSpecification"]); truthy(ttl["Enabled"]) {
		t.TTLAttribute = stringOf(ttl["AttributeName"])
	}
	app.Tables[r.id] = t
	return nil
}

// queueAttributes maps AWS::SQS::Queue properties to SQS attribute names.
var queueAttributes = map[string]string{
	"VisibilityTimeout":             "VisibilityTimeout",
	"MessageRetentionPeriod":        "MessageRetentionPeriod",
	"DelaySeconds":                  "DelaySeconds",
	"MaximumMessageSize":            "MaximumMessageSize",
	"ReceiveMessageWaitTimeSeconds": "ReceiveMessageWaitTimeSeconds",
	"FifoQueue":                     "FifoQueue",
	"ContentBasedDeduplication":     "ContentBasedDeduplication",
	"DeduplicationScope":            "DeduplicationScope",
	"FifoThroughputLimit":           "FifoThroughputLimit",
	"SqsManagedSseEnabled":          "SqsManagedSseEnabled",
}

func (t *Template) queue(app *App, r *resource, p map[string]any) error {
	q := &Queue{LogicalID: r.id, Name: r.name, Attributes: map[string]string{}, VisibilityTimeout: 30 * time.Second}
	for prop, attr := range queueAttributes {
		if v, ok := p[prop]; ok {
			q.Attributes[attr] = stringOf(v)
		}
	}
	q.FIFO = truthy(p["FifoQueue"])
	if v, ok := p["VisibilityTimeout"]; ok {
		var err error
		if q.VisibilityTimeout, err = seconds(v, "VisibilityTimeout"); err != nil {
			return err
		}
	}
	if rp := mapOf(p["RedrivePolicy"]); rp != nil {
		arn := stringOf(rp["deadLetterTargetArn"])
		if q.DeadLetterQueue = t.queueByARN(arn); q.DeadLetterQueue == "" {
			return fmt.Errorf("dead-letter target %s is not a queue of the template", arn)
		}
		n, err := intOf(rp["maxReceiveCount"], "maxReceiveCount")
		if err != nil {
			return err
		}
		q.MaxReceiveCount = n
		q.Attributes["RedrivePolicy"] = fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, arn, n)
	}
	app.Queues[r.id] = q
	return nil
}

func listOf(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		s, _ := strings_(v)
		return s
	case []string:
		return v
	case string:
		return []string{v}
	}
	return []string{fmt.Sprint(v)}
}

func listAny(v any) []any {
	l, _ := v.([]any)
	return l
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
