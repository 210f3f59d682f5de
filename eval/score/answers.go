package score

// AnswerSize relates the output tokens of a run's answered calls to the
// operations each answer carried, by a least-squares line
// tokens = PerAnswer + PerOperation × operations. A live run measures so,
// for its model, what the bedrock package sizes a call's maxTokens by:
// the tokens of the largest valid answer are PerAnswer + PerOperation ×
// MaxOperations (for operations of the run's typical length).
type AnswerSize struct {
	// Calls and Operations count the answered calls and their operations.
	Calls      int `json:"calls"`
	Operations int `json:"operations"`
	// MaxTokens is the most output tokens of one answer, and
	// MaxTokensOperations the operations it carried.
	MaxTokens           int `json:"maxTokens"`
	MaxTokensOperations int `json:"maxTokensOperations"`
	// PerAnswer and PerOperation are the line's intercept and slope, in
	// tokens; Fitted is false when the calls do not carry at least two
	// different numbers of operations, and the line is then unknown.
	PerAnswer    float64 `json:"perAnswer"`
	PerOperation float64 `json:"perOperation"`
	Fitted       bool    `json:"fitted"`
}

// Tokens returns the output tokens the line gives an answer of ops
// operations, and whether the line is known.
func (a AnswerSize) Tokens(ops int) (float64, bool) {
	return a.PerAnswer + a.PerOperation*float64(ops), a.Fitted
}

// answerFit gathers the sums of the least-squares line of an AnswerSize.
type answerFit struct {
	size             AnswerSize
	sx, sy, sxx, sxy float64
	minOps, maxOps   int
}

// add counts one answered call of ops operations and tokens output tokens.
func (f *answerFit) add(ops, tokens int) {
	a := &f.size
	if a.Calls == 0 || ops < f.minOps {
		f.minOps = ops
	}
	if a.Calls == 0 || ops > f.maxOps {
		f.maxOps = ops
	}
	a.Calls++
	a.Operations += ops
	if tokens > a.MaxTokens {
		a.MaxTokens, a.MaxTokensOperations = tokens, ops
	}
	x, y := float64(ops), float64(tokens)
	f.sx += x
	f.sy += y
	f.sxx += x * x
	f.sxy += x * y
}

// result returns the AnswerSize, with its line when the calls carry at
// least two different numbers of operations.
func (f *answerFit) result() AnswerSize {
	a := f.size
	n := float64(a.Calls)
	d := n*f.sxx - f.sx*f.sx
	if a.Calls < 2 || f.minOps == f.maxOps || d == 0 {
		return a
	}
	a.PerOperation = (n*f.sxy - f.sx*f.sy) / d
	a.PerAnswer = (f.sy - a.PerOperation*f.sx) / n
	a.Fitted = true
	return a
}
