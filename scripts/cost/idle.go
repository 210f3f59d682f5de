package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// idleRead is when the idle stack's prices were read. The paid rates on
// the pricing pages of aws.amazon.com could not be read from here on that
// day: the prices below are those the pages carried at the last reading
// that could be checked (a transcription of the Cognito page dated 2026-09-20; the
// CloudWatch, DynamoDB and KMS rows as docs/cost.md's Prices table marks
// them), to be checked before relying on a figure.
const idleRead = "2026-12-03"

// Prices of the parts an idle stack keeps, US East (N. Virginia).
const (
	logsStoragePerGBMonth = 0.03  // CloudWatch Logs, archived (stored) data
	pitrPerGBMonth        = 0.20  // DynamoDB continuous backups (PITR), per GB of table
	cognitoFreeMAU        = 10000 // Cognito Lite and Essentials: free monthly active users
	cognitoEssentialsMAU  = 0.015 // Cognito Essentials, per MAU above the free tier
)

// userPoolTier returns the feature plan of the template's user pool
// (UserPoolTier, ESSENTIALS when unset as for a new pool), or "" when the
// template makes none (an external issuer).
func userPoolTier(root string) (string, error) {
	src, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		return "", err
	}
	doc, err := samtemplate.Decode(src)
	if err != nil {
		return "", err
	}
	res, _ := doc["Resources"].(map[string]any)
	for _, r := range res {
		m, _ := r.(map[string]any)
		if m["Type"] != "AWS::Cognito::UserPool" {
			continue
		}
		props, _ := m["Properties"].(map[string]any)
		if tier, ok := props["UserPoolTier"].(string); ok {
			return tier, nil
		}
		return "ESSENTIALS", nil
	}
	return "", nil
}

// writeIdle writes what the stack costs a month with no user at all: the
// parts billed whether or not anyone calls it, each with its price and
// source, and those that cost nothing idle.
func writeIdle(w io.Writer, st stack) {
	alarms := float64(st.alarmMetrics) * alarmMetricPerMonth
	fmt.Fprintf(w, "\n## The stack idle\n\n")
	fmt.Fprintf(w, "A deployed stack that nobody calls, with template.yaml's defaults. Prices read %s (see the note in `scripts/cost/idle.go`).\n\n", idleRead)
	fmt.Fprintf(w, "| part | idle | price | USD a month |\n|---|---|---|---:|\n")
	fmt.Fprintf(w, "| CloudWatch alarms | %d alarms watching %d metrics | $%.2f per alarm metric-month, standard resolution ([CloudWatch pricing](https://aws.amazon.com/cloudwatch/pricing/)) | %.2f |\n",
		st.alarms, st.alarmMetrics, alarmMetricPerMonth, alarms)
	fmt.Fprintf(w, "| CloudWatch custom metrics | none published | $%.2f per metric-month, prorated by the hour a metric is published (same page) | 0.00 |\n", metricPerMonth)
	switch st.userPoolTier {
	case "":
		fmt.Fprintf(w, "| Cognito user pool | none: the stack trusts an external issuer | | 0.00 |\n")
	default:
		fmt.Fprintf(w, "| Cognito user pool, %s plan | 0 monthly active users | the first %s MAU free, then $%.3f per MAU on Essentials ([Cognito pricing](https://aws.amazon.com/cognito/pricing/)) | 0.00 |\n",
			st.userPoolTier, grouped(cognitoFreeMAU), cognitoEssentialsMAU)
	}
	fmt.Fprintf(w, "| CloudWatch Logs | nothing ingested, so nothing stored | $%.2f per GB ingested, $%.2f per GB-month stored (CloudWatch pricing) | 0.00 |\n", logsPerGB, logsStoragePerGBMonth)
	fmt.Fprintf(w, "| DynamoDB, on demand | no requests, an empty table | per request; $%.2f per GB-month stored, $%.2f per GB-month of point-in-time recovery ([DynamoDB pricing](https://aws.amazon.com/dynamodb/pricing/on-demand/)) | 0.00 |\n",
		dynamoPerGBMonth, pitrPerGBMonth)
	fmt.Fprintf(w, "| AWS KMS | the table's AWS managed key, the queues' SSE-SQS | no monthly fee for AWS managed keys, per request ([KMS pricing](https://aws.amazon.com/kms/pricing/)) | 0.00 |\n")
	fmt.Fprintf(w, "| API Gateway, Lambda, SQS, SNS | no requests | per request (the SQS event source's empty long polls stay under SQS's free tier of 1 million requests a month) | 0.00 |\n")
	fmt.Fprintf(w, "| **total** | | | **%.2f** |\n", alarms)
}
