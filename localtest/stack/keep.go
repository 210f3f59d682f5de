package stack

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// TableFile is the file of the state folder that keeps the table's items
// from one run of the stack to the next: [Stack.SaveTable] writes it when
// up stops, and [Start] loads it into the new table. The queues' messages
// are not kept.
const TableFile = "table.json"

// tableFile is what [TableFile] holds: the items in DynamoDB's JSON wire
// format, as Scan returns them and PutItem takes them.
type tableFile struct {
	Table   string            `json:"table"`
	SavedAt time.Time         `json:"savedAt"`
	Items   []json.RawMessage `json:"items"`
}

// SaveTable writes every item of the table to [TableFile] in the state
// folder and returns how many it wrote and the file's path.
func (s *Stack) SaveTable(ctx context.Context) (int, string, error) {
	f := tableFile{Table: s.Info.TableName, SavedAt: time.Now().UTC(), Items: []json.RawMessage{}}
	var start json.RawMessage
	for {
		in := map[string]any{"TableName": s.Info.TableName, "ConsistentRead": true}
		if start != nil {
			in["ExclusiveStartKey"] = start
		}
		var out struct {
			Items            []json.RawMessage
			LastEvaluatedKey json.RawMessage
		}
		if err := s.dynamoDB(ctx, "Scan", in, &out); err != nil {
			return 0, "", err
		}
		f.Items = append(f.Items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 || string(out.LastEvaluatedKey) == "null" {
			break
		}
		start = out.LastEvaluatedKey
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return 0, "", err
	}
	path := filepath.Join(s.Info.StateDir, TableFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return 0, "", err
	}
	return len(f.Items), path, os.Rename(tmp, path)
}

// loadTable puts the items of [TableFile] in dir, when there is one, into
// the table, and returns how many it put.
func (s *Stack) loadTable(ctx context.Context, dir string) (int, error) {
	path := filepath.Join(dir, TableFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var f tableFile
	if err := json.Unmarshal(b, &f); err != nil {
		return 0, fmt.Errorf("stack: %s: %w (remove it to start with an empty table)", path, err)
	}
	for _, item := range f.Items {
		if err := s.dynamoDB(ctx, "PutItem", map[string]any{"TableName": s.Info.TableName, "Item": item}, nil); err != nil {
			return 0, fmt.Errorf("stack: loading %s: %w", path, err)
		}
	}
	return len(f.Items), nil
}

// dynamoDB calls one operation of moto_server's DynamoDB with in as its
// JSON body, signed as the SDK signs it, and decodes the answer into out
// when out is not nil. The items stay in the wire format, which the
// SDK's types do not marshal.
func (s *Stack) dynamoDB(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Info.AWSEndpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "dynamodb", s.Info.Region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stack: DynamoDB %s: %s: %s", op, resp.Status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
