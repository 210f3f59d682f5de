package dynamorepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestMarkBytesInTheDocs holds the size of a stored watermark that
// docs/decisions.md and docs/cost.md state to what mark writes, at a time
// of this century: 15 bytes for a turn count under 10, 16 for one of 10 to
// 99.
func TestMarkBytesInTheDocs(t *testing.T) {
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).UnixMilli()
	size := func(n int64) int {
		av, err := mark{TurnCount: n, At: at}.MarshalDynamoDBAttributeValue()
		if err != nil {
			t.Fatal(err)
		}
		return len(av.(*types.AttributeValueMemberS).Value)
	}
	one, two := size(9), size(99)
	if size(1) != one || size(10) != two {
		t.Fatalf("a mark's size varies within a number of digits: %d, %d, %d, %d", size(1), one, size(10), two)
	}
	for doc, want := range map[string]string{
		"decisions.md": fmt.Sprintf("(%d bytes for a turn count of 10 to 99, %d under 10)", two, one),
		"cost.md":      fmt.Sprintf("(%d bytes for a turn count of 10 to 99)", two),
	} {
		b, err := os.ReadFile(filepath.Join("..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
			t.Errorf("docs/%s does not say %q", doc, want)
		}
	}
}
