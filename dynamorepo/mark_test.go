package dynamorepo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/memory"
)

// TestDigestMarks measures the stored watermark of an uncounted
// extraction: the digest and the time, within the room
// memory.Config.MaxRecordBytes keeps for a watermark (the 20 characters
// of a turn count), and read back as written; a digest and a count on one
// key resolve by time, whatever the order.
func TestDigestMarks(t *testing.T) {
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).UnixMilli()
	d := memory.TurnsDigest([]memory.Turn{{Role: "user", Text: "I'm Ana"}})
	av, err := mark{Digest: d, At: at}.MarshalDynamoDBAttributeValue()
	if err != nil {
		t.Fatal(err)
	}
	s := av.(*types.AttributeValueMemberS).Value
	if len(s) != memory.TurnsDigestLen+1+13 {
		t.Errorf("a digest mark is %q, %d bytes", s, len(s))
	}
	var back mark
	if err := back.UnmarshalDynamoDBAttributeValue(av); err != nil || back != (mark{Digest: d, At: at}) {
		t.Errorf("read back %+v, %v", back, err)
	}
	older, newer := mark{TurnCount: 40, At: at}, mark{Digest: d, At: at + 1}
	for _, pair := range [][2]mark{{older, newer}, {newer, older}} {
		got := map[string]mark{}
		addMark(got, "k", pair[0])
		addMark(got, "k", pair[1])
		if got["k"] != newer {
			t.Errorf("of %+v and %+v, %+v wins; want the later", pair[0], pair[1], got["k"])
		}
	}
	tie := mark{Digest: d, At: at}
	var winners []mark
	for _, pair := range [][2]mark{{older, tie}, {tie, older}} {
		got := map[string]mark{}
		addMark(got, "k", pair[0])
		addMark(got, "k", pair[1])
		winners = append(winners, got["k"])
	}
	if winners[0] != winners[1] {
		t.Errorf("a tie resolves by order: %+v", winners)
	}
}
