// Package pipeline turns one upstream chat-completions reply into one client
// protocol stream: SSE framer → chunk decoder → channel router → format
// parser → protocol encoder (PARSING.md §5.1). It is the router: native
// reasoning deltas become reasoning events, native tool-call deltas go to the
// tool-call assembler, and content goes to the route's format parser; every
// event then goes to the route's encoder, whose bytes the caller writes.
//
// A Pipeline serves one stream at a time and is not safe for concurrent use;
// Reset readies it for the next, so that pipelines can be pooled.
package pipeline

import (
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/sse"
	"github.com/llmstream/llmstream/transform/thinktags"
	"github.com/llmstream/llmstream/transform/upstream"
)

// Config is what a route fixes for all its streams.
type Config struct {
	// Format is the format the model writes.
	Format format.Name
	// Parser configures the format parser; its Limits bound the whole
	// stream.
	Parser transform.ParserOptions
}

// Pipeline is one stream's decoding and re-encoding state.
type Pipeline struct {
	cfg    Config
	parser transform.Parser
	// format is the format's own parser, behind think when there is one.
	format transform.Parser
	// think reads the <think> tags in the content (think_tags), nil when
	// off.
	think  *thinktags.Parser
	framer sse.Framer
	dec    upstream.ChunkDecoder
	tools  upstream.ToolCalls
	up     decodeState
	enc    transform.Encoder
	meta   transform.Meta

	out        []byte // the caller's buffer while a call appends to it
	body       []byte // a non-streamed JSON completion, held until Close
	jsonBody   bool   // the upstream answered with one JSON completion
	upstreamID string // the upstream's x-request-id

	begun, routed, ended bool
	nativeOpen           bool // a reasoning section opened for native reasoning is open
	parserReasoning      bool // the parser's own reasoning section is open
	sawDone              bool
	finish               string
	replyBytes           int64

	// Tool calls from the assembler and from the parser (aiplan) share one
	// index space in the client stream; these map each source's own
	// indices to it and hold the ids the pipeline generated.
	nativeCalls, parserCalls []call
	calls                    int

	sum Summary

	// val is the request's validation: the checks of the reply, the
	// events held until it passes them, the retry (validation.go).
	val validation
	// loop is the request's agent loop: the calls the gateway runs, the
	// rounds (loop.go).
	loop loopState

	// The current reply's record (reply.go): its first event, and its
	// text when capture is on.
	replyFirst time.Time
	capture    bool
	captured   []byte

	// The callbacks are bound once, so that passing them allocates nothing.
	onSSE                        func(sse.Event)
	emitParser, emitNative, emit transform.Emit
}

type call struct {
	index int
	id    string
	// server says the gateway runs the call (loop.go), tool is then what
	// its events carry.
	server bool
	tool   *transform.Tool
}

// Summary describes a finished stream for logs and metrics. It holds no
// prompt or reply text.
type Summary struct {
	// Format is the format parsed (the detected one under auto).
	Format string
	// Model is the model the upstream reported.
	Model string
	// FinishReason is the upstream's finish reason, "" if none.
	FinishReason string
	// ErrorCode is the code of the error that ended the stream, "" if none.
	ErrorCode string
	// ContentBytes counts the reply text (content) bytes; ReasoningBytes the
	// native reasoning bytes.
	ContentBytes, ReasoningBytes int64
	// ToolCalls counts the tool calls sent to the client.
	ToolCalls int
	// Violations lists the codes of the violations reported, at most
	// MaxViolations of them; ViolationCount counts them all.
	Violations     []string
	ViolationCount int
	// FirstEvent is when the first content event was encoded (time to first
	// token), zero if none was.
	FirstEvent time.Time
	// Retries lists the reason (a validate failure code) of each retry of
	// the reply, in order (CONTRACT.md §10).
	Retries []string
	// Rounds counts the upstream replies of the turn's agent loop (1
	// without tool rounds; retries not counted), ServerCalls the calls the
	// gateway ran (CONTRACT.md §12).
	Rounds, ServerCalls int
}

// maxKeptBody is the largest JSON body buffer Reset keeps for reuse.
const maxKeptBody = 1 << 20

// MaxViolations bounds the violations a stream forwards to its encoder and
// keeps for its summary: a model can write any number of stray tags, and a
// terminal event must stay small. The count beyond it is still reported.
const MaxViolations = 64

// CodeTooManyViolations is the violation that stands for those beyond
// MaxViolations.
const CodeTooManyViolations = "too_many_violations"

// CodeTruncatedToolArgs reports tool-call arguments cut off by
// finish_reason "length" (PARSING.md OA16).
const CodeTruncatedToolArgs = "truncated_tool_args"

// New returns a pipeline for the route's format.
func New(cfg Config) (*Pipeline, error) {
	cfg.Parser = cfg.Parser.WithDefaults()
	f, ok := format.Lookup(cfg.Format)
	if !ok {
		_, err := format.New(cfg.Format, cfg.Parser) // names the known ones
		return nil, err
	}
	p := &Pipeline{cfg: cfg, format: f.New(cfg.Parser)}
	p.parser = p.format
	// One stage reads the <think> tags in front of every format
	// (CONTRACT.md §8): a format that owns <think> (ThinkingML) keeps its
	// own block and gets only prefilled reasoning read for it.
	if cfg.Parser.ThinkTags != transform.ThinkTagsOff {
		p.think = thinktags.New(p.format, cfg.Parser.ThinkTags, f.OwnsThink, cfg.Parser.Limits).AddPrefilled(cfg.Parser.ThinkPrefilled)
		p.parser = p.think
	}
	p.onSSE = p.sseEvent
	p.emitParser = p.fromParser
	p.emitNative = p.fromNative
	p.emit = p.deliver
	p.Reset(nil, transform.Meta{})
	return p, nil
}

// Reset readies p for a new stream written by enc.
func (p *Pipeline) Reset(enc transform.Encoder, meta transform.Meta) {
	p.resetReply()
	if meta.Now == nil {
		meta.Now = time.Now
	}
	p.enc, p.meta = enc, meta
	p.out = nil
	p.begun, p.routed, p.ended = false, false, false
	p.calls = 0
	p.capture = false
	p.sum = Summary{Format: string(p.cfg.Format), Rounds: 1}
	p.resetValidation()
	p.resetLoop()
}

// resetReply readies the decoding and parsing state for a new upstream
// reply: a new stream's, or a retry's on the same client stream
// (NextAttempt), whose encoder state goes on.
func (p *Pipeline) resetReply() {
	p.parser.Reset()
	p.framer.Reset()
	p.framer.MaxLine = p.cfg.Parser.Limits.MaxSSELineBytes
	p.tools.Reset()
	p.tools.MaxCalls = p.cfg.Parser.Limits.MaxToolCalls
	p.resetDecoding()
	// A pooled pipeline keeps its buffers, but not a large JSON body: one
	// big non-streamed reply must not pin megabytes for the pool's life.
	if cap(p.body) > maxKeptBody {
		p.body = nil
	}
	p.body, p.jsonBody, p.upstreamID = p.body[:0], false, ""
	p.nativeOpen, p.parserReasoning, p.sawDone = false, false, false
	p.finish, p.replyBytes = "", 0
	p.nativeCalls, p.parserCalls = p.nativeCalls[:0], p.parserCalls[:0]
	p.resetReplyRecord()
}

// Begin appends the protocol's opening (once).
func (p *Pipeline) Begin(dst []byte) []byte {
	if p.begun {
		return dst
	}
	p.begun = true
	return p.enc.Begin(dst)
}

// Start records that the upstream answered with a 2xx status: contentType
// tells an SSE stream from one JSON completion (application/json or a +json
// type; anything else is read as SSE, since some servers label their event
// streams loosely), and requestID is the upstream's x-request-id.
func (p *Pipeline) Start(dst []byte, contentType, requestID string) []byte {
	dst = p.Begin(dst)
	p.upstreamID = requestID
	mt, _, _ := mime.ParseMediaType(contentType)
	p.jsonBody = mt == "application/json" || strings.HasSuffix(mt, "+json")
	return dst
}

// Feed consumes the next bytes of the upstream body and appends what they
// complete in the client protocol.
func (p *Pipeline) Feed(dst, b []byte) []byte {
	p.out = dst
	defer p.release()
	if p.over() {
		return p.out
	}
	// Bytes up to the limit are decoded and delivered before the stream
	// ends, so that nothing already received is lost.
	over := p.replyBytes + int64(len(b)) - p.cfg.Parser.Limits.MaxReplyBytes
	if over > 0 {
		b = b[:int64(len(b))-over]
	}
	p.replyBytes += int64(len(b))
	if p.jsonBody {
		p.body = append(p.body, b...)
	} else if err := p.framer.Feed(b, p.onSSE); err != nil {
		p.fail(transform.CodeSSELineTooLong, "upstream: "+err.Error())
	}
	if over > 0 {
		p.fail(transform.CodeReplyTooLarge, "the upstream reply exceeds max_reply ("+
			strconv.FormatInt(p.cfg.Parser.Limits.MaxReplyBytes, 10)+" bytes)")
	}
	return p.out
}

// release hands the output buffer back and forgets it.
func (p *Pipeline) release() { p.out = nil }

// Close ends the upstream body: a stream that finished (finish_reason or
// [DONE]) ends with the protocol's completion, one that was cut off with an
// upstream_error.
func (p *Pipeline) Close(dst []byte) []byte {
	p.out = dst
	defer p.release()
	if p.over() {
		return p.out
	}
	if p.jsonBody {
		c, err := upstream.DecodeCompletion(p.body)
		if err != nil {
			p.fail(transform.CodeUpstreamError, "upstream: malformed completion: "+err.Error())
			return p.out
		}
		p.route(c)
		if p.ended {
			return p.out
		}
		p.sawDone = true // a complete JSON body is a finished reply
	} else if err := p.framer.Close(p.onSSE); err != nil && !p.sawDone && p.finish == "" {
		p.fail(transform.CodeUpstreamError, "upstream: the stream was cut off mid-line")
		return p.out
	}
	if p.ended {
		return p.out
	}
	if !p.sawDone && p.finish == "" {
		p.fail(transform.CodeUpstreamError, "upstream: the stream ended before the reply finished")
		return p.out
	}
	p.complete()
	return p.out
}

// complete ends a finished reply: held text is released, open sections are
// closed, and the protocol's completion is written. It runs at [DONE], so
// the client is not kept waiting for an upstream that holds its connection
// open afterwards, or at the end of a body that finished without one.
func (p *Pipeline) complete() {
	// Native reasoning closes first: the parser's last events (held text,
	// the answer's end) must not land inside its section.
	p.closeNative()
	if n, ok := p.parser.(transform.NativeCallsNoter); ok && len(p.nativeCalls) > 0 {
		n.NoteNativeCalls()
	}
	p.parser.Close(p.emitParser)
	if p.ended { // the parser's Close found a fatal condition
		return
	}
	p.tools.Finish(p.emitNative)
	if p.ended {
		return
	}
	if len(p.loop.calls) > 0 {
		// The reply called tools the gateway runs: the turn goes on
		// (loop.go). Its text and calls are shown as they are: only the
		// final round is validated (CONTRACT.md §12).
		p.releaseHeld()
		p.loop.pending = true
		return
	}
	p.conclude()
}

// conclude finishes a reply that the loop does not continue: its usage,
// its validation, and KindFinish.
func (p *Pipeline) conclude() {
	p.emitUsage()
	reason := p.finish
	if reason == "" || reason == "tool_calls" && p.loop.clientCalls == 0 {
		// A reply whose only calls the gateway ran asks the client for
		// nothing.
		reason = "stop"
	}
	// Tool calls the upstream did not announce (the model wrote them as
	// text: aiplan, text_tools; or a provider that ends native calls with
	// stop) finish as tool_calls in every protocol, since clients run
	// tools only on that reason (CONTRACT.md §8).
	if reason == "stop" && (p.loop.clientCalls > 0 || p.parked() > 0) {
		reason = "tool_calls"
	}
	if p.settle() { // the reply failed its validation: retried, or an error
		return
	}
	p.ended = true
	p.sum.FinishReason = p.finish
	p.emit(transform.Event{Kind: transform.KindFinish, Code: reason})
}

// Fail ends the stream with an error event: code names the failure (see
// transform/codes.go) and message explains it to the client. What was
// decoded before is flushed first, so that nothing already read is lost.
func (p *Pipeline) Fail(dst []byte, code, message string) []byte {
	p.out = dst
	defer p.release()
	p.fail(code, message)
	return p.out
}

// Heartbeat appends a keep-alive while the stream is open.
func (p *Pipeline) Heartbeat(dst []byte, now time.Time) []byte {
	if !p.begun || p.ended {
		return dst
	}
	return p.enc.AppendHeartbeat(dst, now)
}

// Ended reports whether the terminal event was written: the caller stops
// reading the upstream.
func (p *Pipeline) Ended() bool { return p.ended }

// Failed reports whether the stream ended with an error: the caller also
// cancels the upstream request, which may still be generating.
func (p *Pipeline) Failed() bool { return p.sum.ErrorCode != "" }

// Summary describes the stream so far.
func (p *Pipeline) Summary() Summary {
	s := p.sum
	if d, ok := p.format.(detector); ok && d.Detected() != "" {
		s.Format = string(d.Detected())
	}
	if r, ok := p.enc.(transform.Repairer); ok {
		// The encoder's repairs of the order for its protocol (CONTRACT.md
		// §7) are violations of the stream too, for its log and metrics.
		codes, n := r.Repairs()
		s.ViolationCount += n
		room := max(0, min(MaxViolations-len(s.Violations), len(codes)))
		s.Violations = append(s.Violations[:len(s.Violations):len(s.Violations)], codes[:room]...)
	}
	return s
}

// fail ends the stream with an error after flushing what the parser holds.
func (p *Pipeline) fail(code, message string) {
	if p.ended {
		return
	}
	if !p.begun {
		p.out = p.Begin(p.out)
	}
	// Close the parser so that held-back text is delivered and its sections
	// are closed; a fatal condition it finds now is moot.
	p.ended = true       // from here on the parser's KindError is dropped
	if !p.loop.pending { // a reply whose calls run was closed already
		p.closeNative()
		p.parser.Close(p.emitParser)
	}
	p.sum.ErrorCode = code
	p.deliver(transform.Event{Kind: transform.KindError, Code: code, Text: []byte(message)})
}

// sseEvent handles one event of the upstream's SSE stream.
func (p *Pipeline) sseEvent(ev sse.Event) {
	if p.ended || p.sawDone {
		return
	}
	if string(ev.Data) == "[DONE]" {
		p.sawDone = true
		p.complete()
		return
	}
	c, err := p.dec.Decode(ev.Data)
	if err != nil {
		p.fail(transform.CodeUpstreamError, "upstream: malformed chunk: "+err.Error())
		return
	}
	p.route(c)
}

// deliver encodes one event.
func (p *Pipeline) deliver(ev transform.Event) {
	// The nil check stays here, inlined: without validation the event is
	// not copied into another call (it is 136 bytes, and this is the hot
	// path of every delta).
	if p.val.cfg != nil && p.screen(&ev) { // held until the reply is validated
		return
	}
	switch ev.Kind {
	case transform.KindViolation:
		p.sum.ViolationCount++
		switch {
		case p.sum.ViolationCount < MaxViolations:
			p.sum.Violations = append(p.sum.Violations, ev.Code)
		case p.sum.ViolationCount == MaxViolations:
			p.sum.Violations = append(p.sum.Violations, CodeTooManyViolations)
			ev = transform.Event{Kind: transform.KindViolation, Code: CodeTooManyViolations, Offset: ev.Offset,
				Text: []byte("further violations are counted in the log only")}
		default:
			return
		}
	case transform.KindToolCallStart:
		p.sum.ToolCalls++
		p.markFirst()
	case transform.KindAnswerDelta:
		p.markFirst()
		p.keepLoopText(&ev)
	case transform.KindRaw, transform.KindReasoningDelta, transform.KindPhaseDelta:
		p.markFirst()
	case transform.KindToolRun:
		p.sum.ServerCalls++
	}
	p.out = p.enc.AppendEvent(p.out, ev)
}

// markFirst records the reply's first content event, and the stream's:
// one test per delta, as before replies had records of their own.
func (p *Pipeline) markFirst() {
	if p.replyFirst.IsZero() {
		p.replyFirst = p.meta.Now()
		if p.sum.FirstEvent.IsZero() {
			p.sum.FirstEvent = p.replyFirst
		}
	}
}

// Status is the HTTP status of a response that is one JSON body (an openai
// client that asked for no stream): the encoder's, after an error; 200
// otherwise.
func (p *Pipeline) Status() int {
	if s, ok := p.enc.(interface{ Status() int }); ok {
		return s.Status()
	}
	return 200
}
