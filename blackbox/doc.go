// Package blackbox holds the black-box test suite of usermemory: tests that
// drive a running service only from outside, as its users do, through the
// HTTP API with real tokens and through the extraction queue with real
// messages sent by the producer package, as a gateway sends them.
//
// The same tests run against two targets:
//
//   - the local stack: with USERMEMORY_BLACKBOX=local the suite starts
//     `go run ./localtest up -state DIR` itself (`make test` sets it), or
//     with USERMEMORY_LOCAL_STATE=DIR it uses a stack already running with
//     that state folder; tokens come from `go run ./localtest token`.
//   - a deployed stack: USERMEMORY_STACK_NAME names the CloudFormation stack
//     whose outputs ApiUrl and QueueUrl it reads (with the credentials and
//     region of AWS_PROFILE, or of the environment), or USERMEMORY_API_URL
//     and USERMEMORY_QUEUE_URL give them; USERMEMORY_TOKEN_CMD is a shell
//     command that prints an access token, with the placeholders {tenant},
//     {user}, {scope} (the scopes, space separated) and {admin} (true or
//     false), and optionally {audience} and {ttl} for the refusal tests of
//     a wrong audience and an expired token.
//
// Without any of these the tests skip with a message saying how to run
// them, except under CI=true, where a missing target is a failure. The
// suite never relies on what only the local emulators offer: where it needs
// a model answer it states facts that a real cheap model extracts reliably,
// and it polls for them with a deadline (USERMEMORY_MODEL_DEADLINE).
//
// The tests of the template's bounds (TestEdge…) name the settings they
// need and run on every target that has them, reading its parameters;
// with USERMEMORY_BLACKBOX=local the suite also starts local stacks at
// those bounds, and on a deployed stack without a setting they skip
// naming it (docs/testing.md, "The edges").
//
// The section "Check a deployed stack" of docs/deploy.md shows the commands.
package blackbox
