package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/internal/httpapitest"
)

// TestDocumentHasTheGatewaysAnswers holds api/openapi.yaml (valid OpenAPI,
// or LoadSpec fails) to what API Gateway itself answers on every route,
// as it answers it: application/json {"message": …}, not problem+json.
// The bodies are those of the HTTP API's JWT authorizer (see
// docs/api.md).
func TestDocumentHasTheGatewaysAnswers(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	if l := spec.Doc().Info.License; l == nil || l.Name == "" {
		t.Error("api/openapi.yaml has no info.license")
	}
	gateway := []struct {
		status int
		body   string
	}{
		{http.StatusUnauthorized, `{"message":"Unauthorized"}`},
		{http.StatusForbidden, `{"message":"Forbidden"}`},
		{http.StatusInternalServerError, `{"message":"Internal Server Error"}`},
	}
	for _, route := range spec.Routes() {
		for _, g := range gateway {
			resp := events.APIGatewayV2HTTPResponse{StatusCode: g.status, Body: g.body,
				Headers: map[string]string{"content-type": "application/json"}}
			if err := spec.ValidateResponse(route, resp); err != nil {
				t.Errorf("%s: API Gateway's %d %s: %v", route, g.status, g.body, err)
			}
		}
		// A message of the gateway's shape that it never sends is refused.
		wrong := events.APIGatewayV2HTTPResponse{StatusCode: http.StatusForbidden, Body: `{"message":"Lisbon"}`,
			Headers: map[string]string{"content-type": "application/json"}}
		if spec.ValidateResponse(route, wrong) == nil {
			t.Errorf("%s: the document accepts 403 %s", route, wrong.Body)
		}
	}
	if spec.Doc().Components.Responses["NotFound"] == nil {
		t.Error(`the document does not describe API Gateway's 404 {"message":"Not Found"}`)
	}
}
