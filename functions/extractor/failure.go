package main

import (
	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/memory"
)

// Transient reports whether a failed model call may succeed when tried
// again later. It is bedrock.Retryable, the one classification of model
// errors: the model's retryer retries the same failures within the call,
// and a transient failure that outlasts those retries is handed back to
// the queue. Everything else is permanent, and so are answers that were
// not the expected structure.
func Transient(err error) bool { return bedrock.Retryable(err) }

// modelErrors are the model's errors the logs name with what to do.
var modelErrors = []logref.Named{
	{Err: bedrock.ErrToolChoiceUnsupported, Name: "tool_choice_unsupported: set MODEL_OUTPUT_MODE=json"},
	{Err: bedrock.ErrModelNotAllowed, Name: "model_not_allowed: the message's cheapModelId is not in ALLOWED_MODEL_IDS"},
	{Err: memory.ErrMalformedAnswer, Name: "malformed_answer"},
}

// errorClass names the kind of err for the logs without its message
// (logref.Error), the model's errors by what to do about them.
func errorClass(err error) string { return logref.Error(err, modelErrors...) }
