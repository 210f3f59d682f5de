package dynamorepo

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/memory"
)

// DecodeRecord exposes decodeRecord to the external tests.
var DecodeRecord = decodeRecord

// EncodeRecord returns the item Save would write for rec under s.
func EncodeRecord(s memory.Scope, rec memory.Record) (map[string]types.AttributeValue, error) {
	return encodeRecord(userKey(s), rec, newVersion())
}
