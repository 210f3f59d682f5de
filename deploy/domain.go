package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// domainPattern is what Cognito accepts as a prefix domain: lower-case
// letters, digits and hyphens, 1 to 63, no hyphen first or last
// (AWS::Cognito::UserPoolDomain, Domain,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cognito-userpooldomain.html,
// read 2026-12-03). A prefix that fails there fails after the table and
// queues exist.
var domainPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?$`)

// domainDescriber is the Cognito call that tells whether a prefix domain
// is in use in the account.
type domainDescriber interface {
	DescribeUserPoolDomain(context.Context, *cip.DescribeUserPoolDomainInput, ...func(*cip.Options)) (*cip.DescribeUserPoolDomainOutput, error)
}

// prefixDomain returns the managed-login prefix domain the resolved
// template gives its user pool, and false when it creates none (an
// external issuer, or a custom domain).
func prefixDomain(templatePath string, app *samtemplate.App) (string, bool) {
	src, err := os.ReadFile(templatePath)
	if err != nil {
		return "", false
	}
	doc, err := samtemplate.Decode(src)
	if err != nil {
		return "", false
	}
	res, _ := doc["Resources"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(res)) {
		r, _ := res[id].(map[string]any)
		props, ok := app.Properties[id] // present when its condition holds
		if r["Type"] != "AWS::Cognito::UserPoolDomain" || !ok || props["CustomDomainConfig"] != nil {
			continue
		}
		d, _ := props["Domain"].(string)
		return d, true
	}
	return "", false
}

// newStackUUID stands for the UUID that ends a new stack's ID, which
// CloudFormation makes when it creates the stack: the preflight resolves
// the template with it, so that a name made from the stack ID has the
// shape and length it will have.
const newStackUUID = "00000000-0000-0000-0000-000000000000"

// reservedInDomain are the words a prefix domain may not contain (the
// template's AuthDomainPrefix, ConstraintDescription; Amazon Cognito
// developer guide, Using the prefix domain,
// https://docs.aws.amazon.com/cognito/latest/developerguide/cognito-user-pools-assign-domain-prefix.html,
// read 2026-12-07).
var reservedInDomain = []string{"aws", "amazon", "cognito"}

// domain checks the user pool's prefix domain as the template makes it
// for this stack: AuthDomainPrefix, or, when that is empty, the prefix
// the template derives (from the stack ID: a new stack's is known only
// once it exists, and is unique). It checks the form and the reserved
// words, and that no other pool of the account holds a prefix chosen by
// hand.
func (p *preflight) domain(ctx context.Context, app *samtemplate.App) (Result, bool) {
	d, ok := prefixDomain(filepath.Join(p.root, "template.yaml"), app)
	if !ok {
		return Result{}, false
	}
	chosen := app.Parameters["AuthDomainPrefix"] != ""
	fix := "leave AuthDomainPrefix empty (the template then derives a prefix from the stack's ID), or set it to 1 to 63 lower-case letters, digits and hyphens, no hyphen first or last"
	shown := strings.ReplaceAll(d, newStackUUID, "<the new stack's UUID>")
	if !domainPattern.MatchString(d) {
		return Result{Block, "domain", fmt.Sprintf("the sign-in domain prefix %q is not one Cognito accepts", shown), fix}, true
	}
	for _, w := range reservedInDomain {
		if strings.Contains(d, w) {
			return Result{Block, "domain", fmt.Sprintf("the sign-in domain prefix %q contains %q, which Cognito reserves", shown, w), fix}, true
		}
	}
	if chosen && p.domains != nil && p.stackID == "" {
		out, err := p.domains.DescribeUserPoolDomain(ctx, &cip.DescribeUserPoolDomainInput{Domain: aws.String(d)})
		if err == nil && out.DomainDescription != nil && aws.ToString(out.DomainDescription.UserPoolId) != "" {
			return Result{Block, "domain", fmt.Sprintf("the sign-in domain prefix %q belongs to the user pool %s already", d, aws.ToString(out.DomainDescription.UserPoolId)),
				"set AuthDomainPrefix to another prefix, or leave it empty (the template then derives one from the stack's ID)"}, true
		}
	}
	msg := fmt.Sprintf("sign-in pages at https://%s.auth.%s.amazoncognito.com", shown, p.region)
	if strings.Contains(d, newStackUUID) {
		msg += " (AuthDomainPrefix is empty: the prefix is made from the stack's ID, unique, when the stack is created)"
	}
	return Result{Pass, "domain", msg, ""}, true
}
