package fault

import "net/http"

// Service is a service's name and the errors it answers on the wire when
// it throttles and when it fails.
type Service struct {
	Name               string
	Throttle, Internal Response
}

// Response is an error answer as the service writes it.
type Response struct {
	Status int
	Header map[string]string
	Body   string
}

func (r Response) write(w http.ResponseWriter) {
	for k, v := range r.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write([]byte(r.Body))
}

// The services of the local stack, with their errors as the AWS API
// references give them (read 2026-12-01; see docs/localtest.md).
var (
	// DynamoDB speaks the awsJson1_0 protocol: the error's type is the
	// body's __type. It throttles with HTTP 400
	// ProvisionedThroughputExceededException (a table or a partition over
	// its throughput, on-demand tables included) and fails with HTTP 500
	// InternalServerError.
	DynamoDB = Service{
		Name: "dynamodb",
		Throttle: jsonError(400, "application/x-amz-json-1.0", "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
			"Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly."),
		Internal: jsonError(500, "application/x-amz-json-1.0", "com.amazonaws.dynamodb.v20120810#InternalServerError",
			"Internal server error"),
	}
	// SQS speaks awsJson1_0 too (and says the Query protocol's error code
	// in x-amzn-query-error). It throttles with HTTP 400 RequestThrottled
	// and fails with HTTP 500 InternalFailure, the common error.
	SQS = Service{
		Name: "sqs",
		Throttle: withHeader(jsonError(400, "application/x-amz-json-1.0", "com.amazonaws.sqs#RequestThrottled",
			"The request was denied due to request throttling."), "x-amzn-query-error", "RequestThrottled;Sender"),
		Internal: jsonError(500, "application/x-amz-json-1.0", "com.amazon.coral.service#InternalFailure",
			"The request processing has failed because of an unknown error, exception or failure."),
	}
	// Bedrock runtime speaks restJson1: the error's type is the
	// X-Amzn-Errortype header. It throttles with HTTP 429
	// ThrottlingException and fails with HTTP 500 InternalServerException.
	Bedrock = Service{
		Name: "bedrock",
		Throttle: withHeader(jsonError(429, "application/json", "", "Too many requests, please wait before trying again."),
			"X-Amzn-Errortype", "ThrottlingException"),
		Internal: withHeader(jsonError(500, "application/json", "", "The server encountered an internal error."),
			"X-Amzn-Errortype", "InternalServerException"),
	}
)

func jsonError(status int, contentType, typ, msg string) Response {
	body := `{"message":"` + msg + `"}`
	if typ != "" {
		body = `{"__type":"` + typ + `","message":"` + msg + `"}`
	}
	return Response{Status: status, Header: map[string]string{"Content-Type": contentType}, Body: body}
}

func withHeader(r Response, k, v string) Response {
	r.Header[k] = v
	return r
}
