package dynamorepo_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/dynamorepo"
)

func TestCreateTable(t *testing.T) {
	f := newFixture(t)
	d, err := f.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(f.table)})
	if err != nil {
		t.Fatal(err)
	}
	ks := d.Table.KeySchema
	if len(ks) != 1 || aws.ToString(ks[0].AttributeName) != dynamorepo.KeyAttribute || ks[0].KeyType != types.KeyTypeHash {
		t.Errorf("key schema = %+v, want one HASH key %q", ks, dynamorepo.KeyAttribute)
	}
	ad := d.Table.AttributeDefinitions
	if len(ad) != 1 || string(ad[0].AttributeType) != dynamorepo.KeyAttributeType {
		t.Errorf("attribute definitions = %+v, want %q of type %s", ad, dynamorepo.KeyAttribute, dynamorepo.KeyAttributeType)
	}
	if d.Table.BillingModeSummary == nil || string(d.Table.BillingModeSummary.BillingMode) != dynamorepo.BillingMode {
		t.Errorf("billing = %+v, want %s", d.Table.BillingModeSummary, dynamorepo.BillingMode)
	}
	ttl, err := f.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(f.table)})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != dynamorepo.TTLAttribute || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Errorf("TTL = %+v, want enabled on %q", d, dynamorepo.TTLAttribute)
	}
	if err := dynamorepo.CreateTable(ctx, f.client, f.table); err == nil {
		t.Error("CreateTable of an existing table: got no error")
	}
}
