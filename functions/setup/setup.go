// Package setup reads the configuration every function shares from the
// environment variables that template.yaml sets, validates it once, before
// lambda.Start, and builds the AWS SDK configuration from the environment
// Lambda sets (see AWSConfig).
package setup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// Names of the environment variables. template.yaml sets them on every
// function; localtest passes the same.
const (
	EnvTableName         = "TABLE_NAME"
	EnvTenantClaim       = "TENANT_CLAIM"
	EnvUserScope         = "USER_SCOPE"
	EnvAdminScope        = "ADMIN_SCOPE"
	EnvMaxFacts          = "MAX_FACTS"
	EnvMaxFactChars      = "MAX_FACT_CHARS"
	EnvExtractEveryTurns = "EXTRACT_EVERY_TURNS"
	EnvExtractionEnabled = "EXTRACTION_ENABLED"
	EnvCheapModelID      = "CHEAP_MODEL_ID"
	EnvTenantDailyCalls  = "TENANT_DAILY_MODEL_CALLS"
	EnvTranscriptChars   = "TRANSCRIPT_CHARS"
	EnvFenceDays         = "ERASURE_FENCE_DAYS"
	EnvModelOutputMode   = "MODEL_OUTPUT_MODE"
	EnvAllowedModelIDs   = "ALLOWED_MODEL_IDS"
	EnvModelAttemptSecs  = "MODEL_ATTEMPT_TIMEOUT_SECONDS"
	// EnvEvidenceCheck is "on" (the default) or "off": whether an
	// extracted SET must quote a user turn (memory.Config.EvidenceCheckOff).
	EnvEvidenceCheck = "EVIDENCE_CHECK"
	// EnvPendingCategories is "all" (the default), "none", or a comma list
	// of memory.Categories: the special categories that wait for the
	// user's yes (memory.Config.PendingCategories).
	EnvPendingCategories = "PENDING_CATEGORIES"
	// EnvPendingDays is how many days a pending fact waits for an answer,
	// 1 to MaxPendingDays (memory.Config.PendingLifetime).
	EnvPendingDays        = "PENDING_DAYS"
	DefaultTenantClaim    = "tenant_id"
	DefaultUserScope      = "memory/user"
	DefaultAdminScope     = "memory/admin"
	DefaultCheapModelID   = "us.amazon.nova-micro-v1:0"
	DefaultFenceDays      = 19
	DefaultModelOutput    = "tool"
	DefaultTenantDailyCap = 0
	// DefaultModelAttemptSecs bounds one attempt of a model call; it must
	// stay well under the extractor's timeout (60 s in template.yaml).
	DefaultModelAttemptSecs = 20
	// MaxModelAttemptSecs is the largest MODEL_ATTEMPT_TIMEOUT_SECONDS.
	MaxModelAttemptSecs = 300
	// DefaultPendingDays and MaxPendingDays bound PENDING_DAYS: the
	// core's default lifetime of a pending fact, and its largest one.
	DefaultPendingDays = int(memory.DefaultPendingLifetime / (24 * time.Hour))
	MaxPendingDays     = int(memory.PendingLifetimeUpperBound / (24 * time.Hour))
)

// DynamoDBAttemptTimeout bounds one attempt of a DynamoDB call (connection,
// request and answer): a hung attempt is abandoned and, within the
// caller's deadline, retried by the SDK's standard retryer. DynamoDB
// answers in milliseconds; two seconds leave room for a cold connection
// and a busy local emulator, and let a retry start within the fact API's
// 3-second bound (httpapi.AnswerBound).
const DynamoDBAttemptTimeout = 2 * time.Second

// Settings is the validated configuration of a function.
type Settings struct {
	// Memory is the core's configuration, validated.
	Memory memory.Config
	// TableName is the DynamoDB table of the records.
	TableName string
	// TenantClaim is the JWT claim that names the tenant.
	TenantClaim string
	// UserScope and AdminScope are the scopes of the /v1/me and
	// /v1/users routes.
	UserScope, AdminScope string
	// TenantDailyModelCalls is the most cheap-model calls a tenant may make
	// in a UTC day; 0 means no limit.
	TenantDailyModelCalls int
	// FenceDays is how long the fence left by an erasure lasts.
	FenceDays int
	// ModelOutputMode is "tool" (forced tool call) or "json" (the fallback
	// for models without forced tool choice: a JSON text answer).
	ModelOutputMode string
	// AllowedModelIDs are the models an extraction message's cheapModelId
	// may name: ALLOWED_MODEL_IDS (comma-separated), which always holds
	// Memory.CheapModelID; by default that model alone, the one the
	// template's IAM policy grants.
	AllowedModelIDs []string
	// ModelAttemptTimeout bounds one attempt of a model call
	// (MODEL_ATTEMPT_TIMEOUT_SECONDS, 1 to MaxModelAttemptSecs).
	ModelAttemptTimeout time.Duration
}

// FromEnv reads the settings through getenv (os.Getenv in main) and
// validates them. The error names the variable at fault.
func FromEnv(getenv func(string) string) (Settings, error) {
	s := Settings{
		TableName:       getenv(EnvTableName),
		TenantClaim:     or(getenv(EnvTenantClaim), DefaultTenantClaim),
		UserScope:       or(getenv(EnvUserScope), DefaultUserScope),
		AdminScope:      or(getenv(EnvAdminScope), DefaultAdminScope),
		ModelOutputMode: or(getenv(EnvModelOutputMode), DefaultModelOutput),
	}
	attemptSecs := 0
	if s.TableName == "" {
		return Settings{}, fmt.Errorf("setup: %s is required", EnvTableName)
	}
	if s.ModelOutputMode != "tool" && s.ModelOutputMode != "json" {
		return Settings{}, fmt.Errorf("setup: %s must be tool or json, not %q", EnvModelOutputMode, s.ModelOutputMode)
	}
	ints := []struct {
		name string
		dst  *int
		def  int
	}{
		{EnvMaxFacts, &s.Memory.MaxFacts, 0},
		{EnvMaxFactChars, &s.Memory.MaxFactChars, 0},
		{EnvExtractEveryTurns, &s.Memory.ExtractEveryTurns, 0},
		{EnvTranscriptChars, &s.Memory.TranscriptChars, 0},
		{EnvTenantDailyCalls, &s.TenantDailyModelCalls, DefaultTenantDailyCap},
		{EnvFenceDays, &s.FenceDays, DefaultFenceDays},
		{EnvModelAttemptSecs, &attemptSecs, DefaultModelAttemptSecs},
	}
	for _, v := range ints {
		raw := strings.TrimSpace(getenv(v.name))
		if raw == "" {
			*v.dst = v.def
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			return Settings{}, fmt.Errorf("setup: %s must be a whole number ≥ 0, not %q", v.name, raw)
		}
		*v.dst = n
	}
	if attemptSecs < 1 || attemptSecs > MaxModelAttemptSecs {
		return Settings{}, fmt.Errorf("setup: %s must be between 1 and %d, not %d", EnvModelAttemptSecs, MaxModelAttemptSecs, attemptSecs)
	}
	s.ModelAttemptTimeout = time.Duration(attemptSecs) * time.Second
	if s.FenceDays < 1 || s.FenceDays > 366 {
		return Settings{}, fmt.Errorf("setup: %s must be between 1 and 366, not %d", EnvFenceDays, s.FenceDays)
	}
	switch raw := strings.ToLower(strings.TrimSpace(getenv(EnvExtractionEnabled))); raw {
	case "", "true", "1", "yes":
	case "false", "0", "no":
		s.Memory.ExtractionDisabled = true
	default:
		return Settings{}, fmt.Errorf("setup: %s must be true or false, not %q", EnvExtractionEnabled, raw)
	}
	if err := readEvidenceAndPending(getenv, &s.Memory); err != nil {
		return Settings{}, err
	}
	s.Memory.CheapModelID = or(getenv(EnvCheapModelID), DefaultCheapModelID)
	s.AllowedModelIDs = []string{s.Memory.CheapModelID}
	for id := range strings.SplitSeq(getenv(EnvAllowedModelIDs), ",") {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(s.AllowedModelIDs, id) {
			s.AllowedModelIDs = append(s.AllowedModelIDs, id)
		}
	}
	if err := s.Memory.Validate(); err != nil {
		return Settings{}, fmt.Errorf("setup: %w", err)
	}
	s.Memory = s.Memory.WithDefaults()
	return s, nil
}

// readEvidenceAndPending reads EVIDENCE_CHECK, PENDING_CATEGORIES and PENDING_DAYS into
// cfg. The error names the variable at fault.
func readEvidenceAndPending(getenv func(string) string, cfg *memory.Config) error {
	days := DefaultPendingDays
	if raw := strings.TrimSpace(getenv(EnvPendingDays)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > MaxPendingDays {
			return fmt.Errorf("setup: %s must be a whole number of days from 1 to %d, not %q", EnvPendingDays, MaxPendingDays, raw)
		}
		days = n
	}
	cfg.PendingLifetime = time.Duration(days) * 24 * time.Hour
	switch raw := strings.ToLower(strings.TrimSpace(getenv(EnvEvidenceCheck))); raw {
	case "", "on":
	case "off":
		cfg.EvidenceCheckOff = true
	default:
		return fmt.Errorf("setup: %s must be on or off, not %q", EnvEvidenceCheck, raw)
	}
	cats, err := PendingCategories(getenv(EnvPendingCategories))
	if err != nil {
		return err
	}
	cfg.PendingCategories = cats
	return nil
}

// PendingCategories parses a PENDING_CATEGORIES value: "" or "all" is
// nil (the core's default, every category), "none" an empty list (no
// fact waits), otherwise a comma list of memory.Categories, each named
// once. An unknown category is an error that lists the known ones.
func PendingCategories(raw string) ([]string, error) {
	switch v := strings.ToLower(strings.TrimSpace(raw)); v {
	case "", "all":
		return nil, nil
	case "none":
		return []string{}, nil
	}
	var out []string
	for c := range strings.SplitSeq(raw, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		switch {
		case c == "":
			continue
		case !memory.ValidCategory(c):
			return nil, fmt.Errorf("setup: %s names %q, which is not one of all, none, %s",
				EnvPendingCategories, c, strings.Join(memory.Categories, ", "))
		case !slices.Contains(out, c):
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("setup: %s must be all, none or a comma list of %s, not %q",
			EnvPendingCategories, strings.Join(memory.Categories, ", "), raw)
	}
	return out, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
