package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"github.com/usermemory/usermemory/memory"
)

// The names the stack's user pool and its pre token generation trigger
// share with these commands (the template's identity resources).
const (
	// tenantAttribute holds a user's tenant; the trigger copies it into
	// the access token's tenant claim.
	tenantAttribute = "custom:tenant_id"
	// adminGroup's members get the admin scope from the trigger.
	adminGroup = "memory-admin"
)

// userPool is the part of Cognito's user pool API the commands call.
type userPool interface {
	AdminCreateUser(context.Context, *cip.AdminCreateUserInput, ...func(*cip.Options)) (*cip.AdminCreateUserOutput, error)
	AdminGetUser(context.Context, *cip.AdminGetUserInput, ...func(*cip.Options)) (*cip.AdminGetUserOutput, error)
	AdminAddUserToGroup(context.Context, *cip.AdminAddUserToGroupInput, ...func(*cip.Options)) (*cip.AdminAddUserToGroupOutput, error)
	AdminRemoveUserFromGroup(context.Context, *cip.AdminRemoveUserFromGroupInput, ...func(*cip.Options)) (*cip.AdminRemoveUserFromGroupOutput, error)
	AdminSetUserPassword(context.Context, *cip.AdminSetUserPasswordInput, ...func(*cip.Options)) (*cip.AdminSetUserPasswordOutput, error)
	AdminInitiateAuth(context.Context, *cip.AdminInitiateAuthInput, ...func(*cip.Options)) (*cip.AdminInitiateAuthOutput, error)
	AdminDeleteUser(context.Context, *cip.AdminDeleteUserInput, ...func(*cip.Options)) (*cip.AdminDeleteUserOutput, error)
}

// checkTenant refuses a tenant ID the API would refuse.
func checkTenant(tenant string) error {
	if !memory.ValidID(tenant) {
		return fmt.Errorf("--tenant %q: an ID is 1 to %d ASCII letters, digits and - _ . : @ | + =", tenant, memory.MaxIDLen)
	}
	return nil
}

// createUser creates the user email of tenant in the pool; Cognito
// e-mails a temporary password. admin adds the user to adminGroup.
func createUser(ctx context.Context, pool userPool, poolID, tenant, email string, admin bool) error {
	if err := checkTenant(tenant); err != nil {
		return err
	}
	if at := strings.Index(email, "@"); at < 1 || at == len(email)-1 {
		return fmt.Errorf("--email %q is not an e-mail address", email)
	}
	_, err := pool.AdminCreateUser(ctx, &cip.AdminCreateUserInput{
		UserPoolId: aws.String(poolID), Username: aws.String(email),
		UserAttributes: []ciptypes.AttributeType{
			{Name: aws.String("email"), Value: aws.String(email)},
			{Name: aws.String("email_verified"), Value: aws.String("true")},
			{Name: aws.String(tenantAttribute), Value: aws.String(tenant)},
		},
		DesiredDeliveryMediums: []ciptypes.DeliveryMediumType{ciptypes.DeliveryMediumTypeEmail},
	})
	var exists *ciptypes.UsernameExistsException
	if errors.As(err, &exists) {
		return fmt.Errorf("%s is a user of the pool already: `aws cognito-idp admin-get-user --user-pool-id %s --username %s` shows it", email, poolID, email)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", email, err)
	}
	return setAdmin(ctx, pool, poolID, email, admin)
}

// setAdmin adds the user to adminGroup, or takes it out.
func setAdmin(ctx context.Context, pool userPool, poolID, user string, admin bool) error {
	if admin {
		_, err := pool.AdminAddUserToGroup(ctx, &cip.AdminAddUserToGroupInput{UserPoolId: aws.String(poolID), Username: aws.String(user), GroupName: aws.String(adminGroup)})
		if err != nil {
			return fmt.Errorf("add %s to the group %s: %w", user, adminGroup, err)
		}
		return nil
	}
	_, err := pool.AdminRemoveUserFromGroup(ctx, &cip.AdminRemoveUserFromGroupInput{UserPoolId: aws.String(poolID), Username: aws.String(user), GroupName: aws.String(adminGroup)})
	var nf *ciptypes.ResourceNotFoundException
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("take %s out of the group %s: %w", user, adminGroup, err)
	}
	return nil
}

// attributes returns a user's attributes by name, or nil and no error
// when the user does not exist.
func attributes(ctx context.Context, pool userPool, poolID, user string) (map[string]string, error) {
	out, err := pool.AdminGetUser(ctx, &cip.AdminGetUserInput{UserPoolId: aws.String(poolID), Username: aws.String(user)})
	var nf *ciptypes.UserNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the user %s: %w", user, err)
	}
	attrs := map[string]string{}
	for _, a := range out.UserAttributes {
		attrs[aws.ToString(a.Name)] = aws.ToString(a.Value)
	}
	return attrs, nil
}

// scriptToken returns an access token of the test user user of tenant,
// made the first time: it sets a new random permanent password, puts the
// user in adminGroup or out of it, and signs in with
// ADMIN_USER_PASSWORD_AUTH on the app client clientID, which must allow
// that flow. The password is never shown or kept.
func scriptToken(ctx context.Context, pool userPool, poolID, clientID, tenant, user string, admin bool) (string, error) {
	if err := checkTenant(tenant); err != nil {
		return "", err
	}
	attrs, err := attributes(ctx, pool, poolID, user)
	if err != nil {
		return "", err
	}
	switch {
	case attrs == nil:
		_, err = pool.AdminCreateUser(ctx, &cip.AdminCreateUserInput{
			UserPoolId: aws.String(poolID), Username: aws.String(user), MessageAction: ciptypes.MessageActionTypeSuppress,
			UserAttributes: []ciptypes.AttributeType{{Name: aws.String(tenantAttribute), Value: aws.String(tenant)}},
		})
		if err != nil {
			return "", fmt.Errorf("create the test user %s: %w", user, err)
		}
	case attrs[tenantAttribute] != tenant:
		return "", fmt.Errorf("the user %s belongs to the tenant %q, not %q", user, attrs[tenantAttribute], tenant)
	}
	password, err := randomPassword()
	if err != nil {
		return "", err
	}
	if _, err := pool.AdminSetUserPassword(ctx, &cip.AdminSetUserPasswordInput{UserPoolId: aws.String(poolID), Username: aws.String(user),
		Password: aws.String(password), Permanent: true}); err != nil {
		return "", fmt.Errorf("set the test user's password: %w", err)
	}
	if err := setAdmin(ctx, pool, poolID, user, admin); err != nil {
		return "", err
	}
	out, err := pool.AdminInitiateAuth(ctx, &cip.AdminInitiateAuthInput{
		UserPoolId: aws.String(poolID), ClientId: aws.String(clientID), AuthFlow: ciptypes.AuthFlowTypeAdminUserPasswordAuth,
		AuthParameters: map[string]string{"USERNAME": user, "PASSWORD": password},
	})
	if err != nil {
		return "", fmt.Errorf("sign in as %s on the app client %s (it must allow ALLOW_ADMIN_USER_PASSWORD_AUTH): %w", user, clientID, err)
	}
	if out.AuthenticationResult == nil || aws.ToString(out.AuthenticationResult.AccessToken) == "" {
		return "", fmt.Errorf("sign in as %s: Cognito asked for %q instead of answering a token", user, out.ChallengeName)
	}
	return aws.ToString(out.AuthenticationResult.AccessToken), nil
}

// randomPassword returns 32 random characters with the four classes a
// default Cognito password policy asks for.
func randomPassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b) + "Aa1!", nil
}
