package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/apigw"
)

// TestLocaltestDocFigures holds the figures docs/localtest.md writes by
// hand to the code: the moto version, the ports, the emulator's size
// limits, the template's visibility timeout and the functions' bounds.
// Timings stay in its table with the command that measures them.
func TestLocaltestDocFigures(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	queue := tpl["Resources"].(map[string]any)["ExtractionQueue"].(map[string]any)["Properties"].(map[string]any)
	docblock.CheckFigures(t, filepath.Join("..", "docs", "localtest.md"), docblock.Figures{
		"installs `moto\\[server\\]` ([0-9.]+)":        motoserver.Version,
		"moto ([0-9.]+) does not keep":                 motoserver.Version,
		"listens on `127.0.0.1:([0-9]+)`":              DefaultAPIPort,
		"memory page on `127.0.0.1:([0-9]+)`":          DefaultPagePort,
		"the template's ([0-9]+) s makes":              fmt.Sprint(queue["VisibilityTimeout"]),
		"body > ([0-9]+) MB":                           apigw.MaxBody >> 20,
		"body > [0-9]+ MB \\(([0-9,]+) bytes\\)":       apigw.MaxBody,
		"event < ([0-9,]+) bytes":                      apigw.MaxInvokePayload,
		"event ≥ ([0-9,]+) bytes":                      apigw.MaxInvokePayload,
		"Request must be smaller than ([0-9]+) bytes":  apigw.MaxInvokePayload,
		"\\(6 MiB \\+ ([0-9]+) bytes":                  apigw.MaxInvokePayload - 6<<20,
		"bound each DynamoDB attempt \\(([0-9]+) s\\)": int(setup.DynamoDBAttemptTimeout / time.Second),
		"and each request \\(([0-9]+) s\\)":            int(httpapi.AnswerBound / time.Second),
	})
}
