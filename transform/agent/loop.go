package agent

import "strconv"

// Step is what follows a reply whose calls to the gateway's tools ran.
type Step uint8

// The steps of the loop (CONTRACT.md §12).
const (
	// StepEnd ends the turn: the reply finishes as any other (its client
	// calls, if any, are the client's to run).
	StepEnd Step = iota
	// StepNextRound sends the results to the model and calls the upstream
	// again.
	StepNextRound
	// StepLastRound does so with tools disabled (tool_choice "none"):
	// the rounds ran out, and the model is to answer with what it has.
	StepLastRound
)

// String names the step for logs and tests.
func (s Step) String() string {
	switch s {
	case StepNextRound:
		return "next_round"
	case StepLastRound:
		return "last_round"
	}
	return "end"
}

// DefaultMaxRounds is the rounds with tool calls a turn may take before
// its last round is asked with tools disabled.
const DefaultMaxRounds = 8

// Reply is what the loop knows of a reply that ended.
type Reply struct {
	// Round is the reply's round: 1 for the turn's first.
	Round int
	// ServerCalls counts its calls to tools the gateway runs; ClientCalls
	// its calls to the client's own tools (ask_user among them).
	ServerCalls, ClientCalls int
	// ToolsOff says the round was asked with tools disabled.
	ToolsOff bool
	// Parked counts its calls that wait for the user (CONTRACT.md §13).
	Parked int
}

// Next decides what follows r once its server calls ran (CONTRACT.md
// §12). A reply with no server call, or one that also calls the client's
// tools (a mixed turn: the client runs those, and the turn is the
// client's again), or one with a call waiting for the user (the user's
// answer resumes it, in a later request), or the last round, ends the
// turn. Otherwise the
// results go back to the model: with tools while the round is below
// maxRounds, and without them once maxRounds rounds made tool calls, so
// that the model answers. maxRounds below 1 means DefaultMaxRounds.
func Next(r Reply, maxRounds int) Step {
	if maxRounds < 1 {
		maxRounds = DefaultMaxRounds
	}
	switch {
	case r.ServerCalls == 0 || r.ClientCalls > 0 || r.ToolsOff || r.Parked > 0:
		return StepEnd
	case r.Round >= maxRounds:
		return StepLastRound
	}
	return StepNextRound
}

// CodeMaxRounds is the violation of a turn whose rounds ran out: its last
// round was asked with tools disabled.
const CodeMaxRounds = "max_rounds"

// MaxRoundsDetail is the violation's detail.
func MaxRoundsDetail(maxRounds int) string {
	if maxRounds < 1 {
		maxRounds = DefaultMaxRounds
	}
	return strconv.Itoa(maxRounds) + " rounds made tool calls (max_rounds); the last round was asked with tools disabled"
}

// The results a call gets that the gateway did not run.
const (
	// NotRun answers a call that never got a result: the turn ended
	// before it did.
	NotRun = "Not run: the call did not complete."
	// NotRunLastRound answers a call made in the round that was asked
	// with tools disabled.
	NotRunLastRound = "Not run: the tool-call limit of this turn was reached. Answer with what you have."
)
