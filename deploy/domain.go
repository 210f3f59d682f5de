package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// domainPattern is what Cognito accepts as a prefix domain: lower-case
// letters, digits and hyphens, 1 to 63, no hyphen first or last
// (AWS::Cognito::UserPoolDomain, Domain,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cognito-userpooldomain.html,
// read 2026-12-03). CloudFormation cannot lower-case a stack name, so a
// prefix derived from one with capitals fails there, after the table
// and queues exist.
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

// domain checks the user pool's prefix domain: its form, and that no
// other pool of the account holds it.
func (p *preflight) domain(ctx context.Context, app *samtemplate.App) (Result, bool) {
	d, ok := prefixDomain(filepath.Join(p.root, "template.yaml"), app)
	if !ok {
		return Result{}, false
	}
	fix := "set AuthDomainPrefix to lower-case letters, digits and hyphens (1 to 63, no hyphen first or last), or use a lower-case stack name"
	if !domainPattern.MatchString(d) {
		return Result{Block, "domain", fmt.Sprintf("the sign-in domain prefix %q is not one Cognito accepts", d), fix}, true
	}
	if p.domains != nil && !p.stackExists(ctx) {
		out, err := p.domains.DescribeUserPoolDomain(ctx, &cip.DescribeUserPoolDomainInput{Domain: aws.String(d)})
		if err == nil && out.DomainDescription != nil && aws.ToString(out.DomainDescription.UserPoolId) != "" {
			return Result{Block, "domain", fmt.Sprintf("the sign-in domain prefix %q belongs to the user pool %s already", d, aws.ToString(out.DomainDescription.UserPoolId)),
				"set AuthDomainPrefix to another prefix"}, true
		}
	}
	return Result{Pass, "domain", fmt.Sprintf("sign-in pages at https://%s.auth.%s.amazoncognito.com", d, p.region), ""}, true
}
