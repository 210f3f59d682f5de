package fakebedrock

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Names of the memory tools a chat gateway offers (memory.UserTools); the
// stand-in answers as a chat model when a request offers them without
// forcing one.
const (
	rememberTool = "remember_user_fact"
	forgetTool   = "forget_user_fact"
)

// chatRequest is the part of a chat request the stand-in reads.
type chatRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Text       *string `json:"text"`
			ToolResult *struct {
				Status  string `json:"status"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"toolResult"`
		} `json:"content"`
	} `json:"messages"`
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec *struct {
				Name string `json:"name"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice *struct {
			Tool *struct{} `json:"tool"`
		} `json:"toolChoice"`
	} `json:"toolConfig"`
}

var (
	rememberPattern = regexp.MustCompile(`(?i)\bremember (?:that )?my ([a-z][a-z ]{0,40}?) is ([^.!?\n]+)`)
	forgetPattern   = regexp.MustCompile(`(?i)\bforget (?:that )?my ([a-z][a-z ]{0,40}?)(?:[.!?\n]|$)`)
	factLine        = regexp.MustCompile(`^- ("(?:[^"\\]|\\.)*"): ("(?:[^"\\]|\\.)*")$`)
)

// chatAnswer returns the stand-in's answer to a chat request: a request
// that offers the memory tools of a chat gateway and forces no tool. It
// answers deterministically, as a chat model that follows its system
// prompt would:
//   - "remember that my X is Y" calls remember_user_fact with the key x
//     (snake_case) and the value Y; "forget my X" calls forget_user_fact;
//   - after a tool result, it says what the tool did;
//   - otherwise it names what the <user_memory> block of the system prompt
//     says about the user, so that a person sees the memory at work.
//
// It returns false for any other request.
func (s *Server) chatAnswer(body []byte) (map[string]any, bool) {
	var req chatRequest
	if json.Unmarshal(body, &req) != nil || req.ToolConfig == nil || len(req.Messages) == 0 {
		return nil, false
	}
	if tc := req.ToolConfig.ToolChoice; tc != nil && tc.Tool != nil {
		return nil, false
	}
	offered := false
	for _, t := range req.ToolConfig.Tools {
		if t.ToolSpec != nil && t.ToolSpec.Name == rememberTool {
			offered = true
		}
	}
	if !offered {
		return nil, false
	}
	last := req.Messages[len(req.Messages)-1]
	var text []string
	var results []string
	for _, c := range last.Content {
		switch {
		case c.Text != nil:
			text = append(text, *c.Text)
		case c.ToolResult != nil:
			for _, r := range c.ToolResult.Content {
				results = append(results, r.Text)
			}
		}
	}
	var content []map[string]any
	stop := "end_turn"
	said := strings.Join(text, "\n")
	switch {
	case len(results) > 0:
		content = append(content, map[string]any{"text": "(stand-in) The tool said: " + strings.Join(results, " ")})
	case rememberPattern.MatchString(said):
		m := rememberPattern.FindStringSubmatch(said)
		content = append(content,
			map[string]any{"text": "(stand-in) I'll remember that, if you allow it."},
			s.toolUse(rememberTool, map[string]string{"key": snake(m[1]), "value": strings.TrimSpace(m[2])}))
		stop = "tool_use"
	case forgetPattern.MatchString(said):
		m := forgetPattern.FindStringSubmatch(said)
		content = append(content, s.toolUse(forgetTool, map[string]string{"key": snake(m[1])}))
		stop = "tool_use"
	default:
		content = append(content, map[string]any{"text": "(stand-in) " + knownFacts(req)})
	}
	out, _ := json.Marshal(content) // Maps of strings always marshal.
	usage := Usage{InputTokens: tokens(len(body)), OutputTokens: tokens(len(out))}
	usage.TotalTokens = usage.InputTokens + usage.OutputTokens
	return map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      usage,
		"metrics":    map[string]any{"latencyMs": 0},
	}, true
}

func (s *Server) toolUse(name string, input map[string]string) map[string]any {
	s.mu.Lock()
	s.nextID++
	id := "tooluse_standin" + strconv.Itoa(s.nextID)
	s.mu.Unlock()
	return map[string]any{"toolUse": map[string]any{"toolUseId": id, "name": name, "input": input}}
}

// knownFacts says what the system prompt's memory block holds.
func knownFacts(req chatRequest) string {
	var facts []string
	for _, sys := range req.System {
		for line := range strings.SplitSeq(sys.Text, "\n") {
			m := factLine.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			var k, v string
			if json.Unmarshal([]byte(m[1]), &k) == nil && json.Unmarshal([]byte(m[2]), &v) == nil {
				facts = append(facts, fmt.Sprintf("%s is %s", strings.ReplaceAll(k, "_", " "), v))
			}
		}
	}
	if len(facts) == 0 {
		return "Noted. I know nothing about you yet."
	}
	return "Noted. What I know about you: " + strings.Join(facts, "; ") + "."
}

// snake turns "home city" into "home_city".
func snake(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "_")
}
