package stack

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// The dummy credentials of every client of the local stack, the
// functions' included: moto_server takes any, and the SDK must sign with
// some.
const (
	accessKeyID     = "test"
	secretAccessKey = "test"
)

// AWSConfig returns the SDK config of a client of the local stack in
// region: the stack's dummy static credentials and nothing read from the
// caller's environment. Each client sets its endpoint (BaseEndpoint).
func AWSConfig(region string) aws.Config {
	return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, "")}
}

// AWSConfig returns the SDK config of a client of the stack i describes,
// in its Region (see [AWSConfig]).
func (i Info) AWSConfig() aws.Config { return AWSConfig(i.Region) }
