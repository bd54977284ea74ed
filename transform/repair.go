package transform

// The violations an encoder reports when it repairs the order of a reply
// for its protocol (CONTRACT.md §7: every protocol's own rules hold on the
// wire, whatever order the model wrote things in). The same events go to
// every protocol and only the protocol's rules differ, so the repairs are
// the encoder's: jsonseq keeps the order of specs/001 §2, skillpet that of
// specs/002 §3.2. A repair that changes what the model wrote is reported;
// holding text back until it may be sent is not. Answer text is never left
// out.
const (
	// CodeReasoningLeftOut: reasoning the protocol cannot place where it
	// came (after the answer began, or after the protocol's thinking
	// ended) was left out of this protocol only. Reported once per phase
	// or reasoning block; Text says which.
	CodeReasoningLeftOut = "reasoning_left_out"
	// CodePhaseRenumbered: a phase was sent under another id than the
	// model gave it, so that the ids on the wire are 1, 2, 3, …
	// (specs/001 §1.2). Text is "<model id>-><wire id>".
	CodePhaseRenumbered = "phase_renumbered"
	// CodeSynthesizedEvent: a start or an end the model did not write was
	// sent so that the sequence is legal: thinking_start before a phase
	// outside any thinking section, thinking_end for a thinking section
	// the held answer could no longer wait for, a title for a phase
	// without one. Text names it.
	CodeSynthesizedEvent = "synthesized_event"
	// CodeSerpSummaryLeftOut: a serp summary the protocol cannot place (a
	// second one, or one after the reasoning or the answer began) was left
	// out of this protocol only.
	CodeSerpSummaryLeftOut = "serp_summary_left_out"
	// CodeSerpQueriesLeftOut: a second serp queries list was left out of
	// this protocol only; the first one is sent.
	CodeSerpQueriesLeftOut = "serp_queries_left_out"
)

// A Repairer is an Encoder that repairs the order of the events it gets
// for its protocol and reports its repairs (the codes above). Those that
// carry violations in their stream (jsonseq's completed.metadata) report
// them there too; Repairs gives them to the stream's log and metrics.
type Repairer interface {
	Encoder
	// Repairs returns the codes of the repairs made so far, at most
	// MaxRepairs of them, and how many there were in all.
	Repairs() (codes []string, n int)
}

// MaxRepairs bounds the repair codes a Repairer keeps.
const MaxRepairs = 64

// RepairLog collects the repairs of one stream for Repairer.Repairs. The
// zero value is empty.
type RepairLog struct {
	codes []string
	n     int
}

// Note records a repair with code.
func (l *RepairLog) Note(code string) {
	l.n++
	if len(l.codes) < MaxRepairs {
		l.codes = append(l.codes, code)
	}
}

// Repairs returns the codes recorded, at most MaxRepairs, and the count.
func (l *RepairLog) Repairs() ([]string, int) { return l.codes, l.n }
