package pipeline

import (
	"slices"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/finalresult"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/validate"
)

// Validation is what one request asks of its reply's checks (CONTRACT.md
// §10). Tool calls are checked whenever Tools is set; the rest acts only
// with Act, the route's validate block.
type Validation struct {
	// Tools checks each tool call against the request's tools, whatever
	// produced it (native deltas, aiplan, text tool calls: every
	// KindToolCallEnd); nil checks none. A failure is a violation.
	Tools *validate.Tools
	// Act makes the checks act: the reply's events are held until it is
	// validated, and a failure is retried (Retries times), then ends the
	// stream with validation_failed (hard) or is accepted with its
	// violation (soft).
	Act bool
	// ShowRetries streams each reply as it comes instead, and announces a
	// retry with the protocol's own marker (transform.Restarter), when the
	// encoder has one; other protocols hold the reply as with Act alone.
	ShowRetries bool
	// Retries is the retry budget shared by every rule (specs/004
	// §7.3.2: 1).
	Retries int
	// Terminal applies the terminal-state rules of specs/004 §7.3.1 to a
	// reply that the final_result parser read (the format, or what auto
	// detected) and that ends the turn, with no tool call.
	Terminal bool
	// Evidence is the request's loop, ArtifactTools the tools that make
	// artifacts, Expected the router's expected_mode ("" for none).
	Evidence      validate.Evidence
	ArtifactTools validate.ArtifactTools
	Expected      string
}

// validation is a stream's state of its checks.
type validation struct {
	cfg     *Validation
	attempt int // 1 for the first reply
	// startCalls is the tool call count when the attempt started;
	// startBytes the content bytes.
	startCalls int
	startBytes int64
	failures   []validate.Failure // the tool calls' failures of the attempt
	why        []string           // the parser's violation codes of the attempt
	content    []byte             // the attempt's content, for the retry turn
	native     []request.RetryCall
	nativeIdx  []int // the stream index of each of native
	gate       gate
	turn       request.RetryTurn
	retry      bool   // the attempt failed; the next one is due
	reason     string // … because of this failure code
	releasing  bool   // the gate is releasing: deliver encodes
	own        bool   // a validation violation is being delivered
	live       bool   // replies stream as they come; a retry is announced (ShowRetries)
}

// maxWhy bounds the violation codes kept to explain a reply that is no
// FinalResult.
const maxWhy = 8

// notRun is the tool message of a native call of a refused reply that was
// not at fault itself.
const notRun = "Not run: your reply was not accepted, so none of its tool calls ran. Call it again if it is still needed."

// Validate sets the stream's checks; nil checks nothing. Call it after
// Reset, before the upstream answers.
func (p *Pipeline) Validate(v *Validation) {
	p.val.cfg = v
	_, restarts := p.enc.(transform.Restarter)
	p.val.live = v != nil && v.Act && v.ShowRetries && restarts
}

// resetValidation forgets the stream's checks.
func (p *Pipeline) resetValidation() {
	v := &p.val
	v.cfg, v.live = nil, false
	v.attempt = 0
	v.gate.discard()
	p.startAttempt()
}

// startAttempt readies the checks for the next attempt's reply.
func (p *Pipeline) startAttempt() {
	p.val.attempt++
	p.startAttemptReply()
}

// startAttemptReply readies the checks for the next reply of the same
// attempt: a retry's, or the agent loop's next round, whose reply is
// checked alike with the retry budget that is left.
func (p *Pipeline) startAttemptReply() {
	v := &p.val
	v.startCalls, v.startBytes = p.calls, p.sum.ContentBytes
	v.failures, v.why, v.content = v.failures[:0], v.why[:0], v.content[:0]
	clear(v.native)
	v.native, v.nativeIdx = v.native[:0], v.nativeIdx[:0]
	v.turn, v.retry, v.reason, v.releasing, v.own = request.RetryTurn{}, false, "", false, false
	if cap(v.content) > maxKeptBody {
		v.content = nil
	}
}

// RetryPending reports whether the reply failed its validation with
// retries left: the stream is open, nothing of the reply was shown, and
// the caller is to send the retry request (RetryTurn) upstream and call
// NextAttempt before its answer.
func (p *Pipeline) RetryPending() bool { return p.val.retry }

// RetryTurn returns what the retry request appends to the failed one
// (request.AppendRetry). Its slices are valid until NextAttempt.
func (p *Pipeline) RetryTurn() request.RetryTurn { return p.val.turn }

// Attempt returns the number of the current reply: 1, then 2 after the
// first retry, ….
func (p *Pipeline) Attempt() int { return p.val.attempt }

// RetryReason returns the failure code that asks for the retry due (see
// validate.Reason), "" when none is.
func (p *Pipeline) RetryReason() string {
	if !p.val.retry {
		return ""
	}
	return p.val.reason
}

// NextAttempt readies p for the retry's reply on the same client stream:
// decoding and parsing start over, the encoder's state goes on. The retry
// is recorded in the Summary.
func (p *Pipeline) NextAttempt() {
	if p.val.retry {
		p.sum.Retries = append(p.sum.Retries, p.val.reason)
	}
	p.resetReply()
	p.calls = p.sum.ToolCalls // the refused reply's calls were never shown
	p.startAttempt()
	p.startRound()
}

// over reports whether the current reply needs no more input: the stream
// ended, or the reply failed and a retry is due, or it ended with calls
// the gateway runs (loop.go).
func (p *Pipeline) over() bool { return p.ended || p.val.retry || p.loop.pending }

// keepContent keeps the reply's content for the retry turn, when a retry
// may follow.
func (p *Pipeline) keepContent(b []byte) {
	if v := &p.val; v.cfg != nil && v.cfg.Act && v.attempt <= v.cfg.Retries {
		v.content = append(v.content, b...)
	}
}

// screen runs the checks on an event on its way to the encoder, and holds
// it while the reply is not validated. It reports whether it kept ev.
// Reasoning, violations and the stream's routing flow: they are progress,
// not a result (specs/004 §7.3: the message waits, progress shows), and
// every protocol accepts reasoning sections one after another.
func (p *Pipeline) screen(ev *transform.Event) bool {
	v := &p.val
	if v.cfg == nil || v.releasing {
		return false
	}
	switch ev.Kind {
	case transform.KindToolCallEnd:
		p.checkCall(*ev)
	case transform.KindViolation:
		if !v.own && len(v.why) < maxWhy && !slices.Contains(v.why, ev.Code) {
			v.why = append(v.why, ev.Code)
		}
		return false
	case transform.KindError:
		// Lose nothing: what was decoded goes out before the error, as
		// without validation.
		p.releaseHeld()
		return false
	case transform.KindRouted, transform.KindReasoningStart, transform.KindReasoningDelta,
		transform.KindReasoningEnd, transform.KindFinish,
		// The agent loop's steps come after a reply was released: the
		// next reply is checked on its own (CONTRACT.md §12).
		transform.KindToolRun, transform.KindToolProgress, transform.KindToolResult, transform.KindRoundStart,
		// A resource update and a sub-agent's stream are not the reply's:
		// they come while tools run (CONTRACT.md §13).
		transform.KindResourceUpdated, transform.KindAgent:
		return false
	}
	if !v.cfg.Act || v.live {
		return false
	}
	v.gate.hold(*ev)
	return true
}

// checkCall checks a complete tool call, and keeps a native one for the
// retry turn.
func (p *Pipeline) checkCall(ev transform.Event) {
	v := &p.val
	if v.cfg.Act && p.isNative(ev.Index) {
		v.native = append(v.native, request.RetryCall{ID: ev.ID, Name: ev.Name, Arguments: append([]byte(nil), ev.Text...)})
		v.nativeIdx = append(v.nativeIdx, ev.Index)
	}
	if v.cfg.Tools == nil {
		return
	}
	f, failed := v.cfg.Tools.Check(ev.Index, ev.Name, ev.Text)
	if !failed {
		return
	}
	p.violation(f.Code, f.Detail)
	if p.refuseCall(ev.Index, f.Correction) {
		// A call the gateway runs is not run: the model gets the
		// correction as its result, and the loop goes on (CONTRACT.md
		// §12: errors are results the model can read).
		return
	}
	if v.cfg.Act && f.Retried() {
		v.failures = append(v.failures, f)
	}
}

// isNative reports whether the call of stream index i came from the
// upstream's tool_calls deltas.
func (p *Pipeline) isNative(i int) bool {
	for _, c := range p.nativeCalls {
		if c.index == i {
			return true
		}
	}
	return false
}

// violation delivers a violation of the checks, at the reply's offset.
func (p *Pipeline) violation(code, detail string) {
	p.val.own = true
	p.deliver(transform.Event{Kind: transform.KindViolation, Code: code, Offset: p.sum.ContentBytes - p.val.startBytes, Text: []byte(detail)})
	p.val.own = false
}

// releaseHeld delivers what the gate holds.
func (p *Pipeline) releaseHeld() {
	v := &p.val
	if v.gate.empty() {
		return
	}
	v.releasing = true
	v.gate.release(p.deliver)
	v.releasing = false
}

// settle validates the finished reply, before its KindFinish: a reply
// that passes is released and finishes; one that fails is retried while
// the budget lasts (specs/004 §7.3.2), and then ends the stream with
// validation_failed when a hard rule broke, or is released with its
// violations when only soft ones did. It reports whether the reply must
// not finish.
func (p *Pipeline) settle() bool {
	v := &p.val
	if v.cfg == nil || !v.cfg.Act {
		return false
	}
	fs := v.failures
	if v.cfg.Terminal && p.calls == v.startCalls {
		if r, ok := p.finalResult(); ok {
			terminal := validate.Terminal(r, v.cfg.Evidence, v.cfg.ArtifactTools, v.cfg.Expected)
			for _, f := range terminal {
				// The parser already reported what the reply shows (rule
				// 0's anomalies, rule 2); the evidence rules are news.
				if f.Code != validate.CodeNotFinalResult && f.Code != validate.CodeClarifyWithoutQuestion {
					p.violation(f.Code, f.Detail)
				}
			}
			fs = append(fs, terminal...)
		}
	}
	severity, failed := validate.Worst(fs)
	switch {
	case !failed:
		p.releaseHeld()
		return false
	case v.attempt <= v.cfg.Retries:
		v.reason = validate.Reason(fs)
		p.violation(validate.CodeRetried, "attempt "+strconv.Itoa(v.attempt)+" of "+strconv.Itoa(v.cfg.Retries+1)+
			" failed ("+validate.Codes(fs)+"); retried")
		v.gate.discard()
		v.turn = p.retryTurn(fs)
		v.retry = true
		if r, ok := p.enc.(transform.Restarter); ok && v.live {
			p.out = r.AppendRestart(p.out, v.attempt+1, v.reason)
		}
		return true
	case severity == validate.Soft:
		p.releaseHeld() // accepted, with its violations (specs/004 §7.3.2)
		return false
	}
	v.gate.discard()
	p.ended = true
	p.sum.ErrorCode = validate.CodeValidationFailed
	p.deliver(transform.Event{Kind: transform.KindError, Code: validate.CodeValidationFailed, Text: []byte(failedMessage(fs, v.cfg.Retries))})
	return true
}

// failedMessage is the message of validation_failed: the hard failures.
func failedMessage(fs []validate.Failure, retries int) string {
	var b strings.Builder
	b.WriteString("the reply failed validation")
	switch retries {
	case 0:
	case 1:
		b.WriteString(" after 1 retry")
	default:
		b.WriteString(" after " + strconv.Itoa(retries) + " retries")
	}
	sep := ": "
	for _, f := range fs {
		if f.Severity == validate.Hard {
			b.WriteString(sep + f.Code + ": " + f.Detail)
			sep = "; "
		}
	}
	return b.String()
}

// chooser is a format parser that hands the reply to the parser of the
// format it chose (auto): what the reply said is asked of that one.
type chooser interface{ Chosen() transform.Parser }

// outcomer is a format parser that reads a FinalResult object
// (final_result): the terminal-state rules of specs/004 §7.3.1 check what
// it read.
type outcomer interface{ Outcome() finalresult.Outcome }

// finalResult returns what the reply's FinalResult said, when the
// final_result parser read the reply.
func (p *Pipeline) finalResult() (validate.Result, bool) {
	parser := p.format // the format's own parser, behind the think_tags stage
	if c, ok := parser.(chooser); ok {
		parser = c.Chosen()
	}
	fr, ok := parser.(outcomer)
	if !ok {
		return validate.Result{}, false
	}
	o := fr.Outcome()
	return validate.Result{
		Complete:        o.Ended && o.Status != "" && o.Message,
		Status:          o.Status,
		ClarifyQuestion: o.ClarifyQuestion,
		Why:             strings.Join(p.val.why, " "),
	}, true
}

// retryTurn is the failed reply and its correction: the content as the
// model wrote it, each native call answered by a tool message (its own
// failure's correction, or notRun), and a user message with the other
// corrections.
func (p *Pipeline) retryTurn(fs []validate.Failure) request.RetryTurn {
	v := &p.val
	t := request.RetryTurn{Content: v.content}
	for i, c := range v.native {
		c.Result = notRun
		if r, ran := p.ranResult(c.ID); ran {
			// A call the gateway ran is answered by its result: the
			// retry runs no tool twice (specs/004 §7.3.2).
			c.Result = r
		}
		for _, f := range fs {
			if f.Call == v.nativeIdx[i] && f.Retried() {
				c.Result = f.Correction
				break
			}
		}
		t.Calls = append(t.Calls, c)
	}
	t.Correction = validate.Correction(fs, func(call int) bool { return slices.Contains(v.nativeIdx, call) }, v.live)
	return t
}
