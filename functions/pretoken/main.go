// Command pretoken is the pre token generation trigger of the stack's
// Cognito user pool (template.yaml, condition CreateIdentity): it puts the
// tenant claim and the memory scopes into access tokens, through package
// claims, the code the local stack signs its tokens with. A person's
// tenant is the user attribute custom:tenant_id and members of the group
// memory-admin get the admin scope; a gateway's client-credentials token
// carries the tenant its request names in aws_client_metadata.
//
// Environment: TENANT_CLAIM, USER_SCOPE and ADMIN_SCOPE of package setup,
// read and validated with the rest of setup's settings.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/usermemory/usermemory/functions/setup"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := fromEnv(os.Getenv, logger)
	if err != nil {
		logger.Error("pretoken: cannot start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

// fromEnv builds the handler once per execution environment from the
// settings read through getenv.
func fromEnv(getenv func(string) string, logger *slog.Logger) (*Handler, error) {
	s, err := setup.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	return NewHandler(s.TenantClaim, s.UserScope, s.AdminScope, logger), nil
}
