package conversation

import (
	"bytes"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/llmstream/llmstream/transform"
)

// Capture is a transform.Encoder that delegates to a skillpet encoder and
// builds, from what that encoder writes, the Reply its user sees: the text
// of token events, resource events, the questions of ask_user events, and
// the end (done or error). The tool calls come from the events themselves,
// which carry the call ids and the arguments as the model wrote them (the
// upstream request must repeat those, not the normalised questions).
//
// Reading the encoder's output rather than the events keeps the stored
// reply equal to what was shown, whatever the encoder suppresses or
// reorders. At the terminal event Capture calls onEnd before returning
// that event's bytes, so that a stored turn is stored before its client
// sees done; Close ends a stream that had no terminal event (the client
// left).
type Capture struct {
	inner transform.Encoder
	reply Reply
	// asks holds the ids of ask_user calls whose form was not written yet,
	// oldest first: the form of each follows its call.
	asks []string
	// msgID makes up ids for forms no tool call asked.
	msgID string
	// call is the call id of the event being written.
	call  string
	onEnd func(*Reply)
	ended bool
}

// A Capture passes on the restart marker of its inner encoder.
var _ transform.Restarter = (*Capture)(nil)

// NewCapture returns a Capture of inner for the stream of message msgID;
// onEnd receives the reply once, when the stream ends.
func NewCapture(inner transform.Encoder, msgID string, onEnd func(*Reply)) *Capture {
	return &Capture{inner: inner, msgID: msgID, onEnd: onEnd}
}

// Begin delegates.
func (c *Capture) Begin(dst []byte) []byte { return c.inner.Begin(dst) }

// AppendHeartbeat delegates: a keep-alive shows nothing.
func (c *Capture) AppendHeartbeat(dst []byte, now time.Time) []byte {
	return c.inner.AppendHeartbeat(dst, now)
}

// AppendEvent delegates and reads what the encoder wrote.
func (c *Capture) AppendEvent(dst []byte, ev transform.Event) []byte {
	if !c.ended {
		switch ev.Kind {
		case transform.KindToolCallEnd:
			c.reply.AddCall(ToolCall{ID: ev.ID, Name: ev.Name, Arguments: string(ev.Text)})
			if ev.Name == AskUserTool && !ev.Server {
				c.asks = append(c.asks, ev.ID)
			}
		case transform.KindToolResult:
			// A call the gateway ran: its result is stored as the call's
			// tool record (CONTRACT.md §12). A call waiting for the user
			// (§13) stores what it asks: a choice as "[等待用户选择] " and
			// the question (specs/002 §4.5), a form as the ask_user form
			// the encoder writes next, under the call's id.
			switch {
			case ev.Tool == nil:
			case ev.Tool.Status == transform.ToolAwaiting && ev.Tool.Await != nil && ev.Tool.Await.Kind == transform.AwaitForm:
				c.asks = append([]string{ev.ID}, c.asks...)
			case ev.Tool.Status == transform.ToolAwaiting && ev.Tool.Await != nil:
				c.reply.AddResult(ev.ID, AwaitingPrefix+ev.Tool.Await.Message)
			default:
				c.reply.addResult(ev.ID, ev.Tool.Output, ev.Tool.Choice)
			}
		case transform.KindRoundStart:
			c.reply.nextRound()
		}
	}
	mark := len(dst)
	dst = c.inner.AppendEvent(dst, ev)
	if !c.ended {
		c.call = ev.ID
		c.observe(dst[mark:], ev.Kind)
	}
	return dst
}

// AppendRestart writes the inner encoder's restart marker (skillpet's
// round_start, with the validate block's show_retries) and starts the
// stored reply over. The conversation remembers the reply that passed
// validation: the next turn's upstream request must build on it, and the
// refused one was already answered inside the proxy (the retry request
// carried it with its correction). The client saw both; after a reload,
// init shows the accepted one.
func (c *Capture) AppendRestart(dst []byte, attempt int, reason string) []byte {
	if r, ok := c.inner.(transform.Restarter); ok {
		dst = r.AppendRestart(dst, attempt, reason)
	}
	if !c.ended {
		// The rounds before the refused reply stand: their tools ran.
		c.reply = Reply{earlier: c.reply.earlier}
		c.asks = c.asks[:0]
	}
	return dst
}

// Close ends a stream that wrote no terminal event: what was shown is
// stored as interrupted. It does nothing after the terminal event.
func (c *Capture) Close() {
	if !c.ended {
		c.end(StatusInterrupted)
	}
}

// Reply returns the reply so far.
func (c *Capture) Reply() *Reply { return &c.reply }

func (c *Capture) end(s Status) {
	c.ended = true
	c.reply.Status = s
	if c.onEnd != nil {
		c.onEnd(&c.reply)
	}
}

// observe reads the SSE events in out, which the skillpet encoder wrote
// whole ("event: <name>\ndata: <one line of JSON>\n\n"; keep-alives are
// comment lines).
func (c *Capture) observe(out []byte, kind transform.Kind) {
	for len(out) > 0 {
		block := out
		if i := bytes.Index(out, []byte("\n\n")); i >= 0 {
			block, out = out[:i], out[i+2:]
		} else {
			out = nil
		}
		name, data := splitEvent(block)
		switch string(name) {
		case "token":
			if raw, ok := tokenContent(data); ok {
				c.reply.addJSONText(raw)
			} else {
				c.reply.AddText(gjson.GetBytes(data, "content").String())
			}
		case "resource":
			c.reply.AddResource(data)
		case "image_generation":
			// Stored after the call's result, as specs/002 §3.7 has it:
			// a tool record "[image_generation] " and the block.
			if kind == transform.KindToolResult {
				c.reply.addResult(c.call, ImagePrefix+string(data), nil)
			}
		case "ask_user":
			c.reply.AddForm(Form{ToolCallID: c.formCallID(kind), Questions: []byte(gjson.GetBytes(data, "questions").Raw)})
		case "done":
			c.end(StatusComplete)
			return
		case "error":
			c.end(StatusFailed)
			return
		}
	}
}

// formCallID returns the id of the call whose form is being written: the
// oldest ask_user call without one, unless the form is a clarify (a
// final_result's question, which no tool call asked).
func (c *Capture) formCallID(kind transform.Kind) string {
	if kind != transform.KindClarify && len(c.asks) > 0 {
		id := c.asks[0]
		c.asks = c.asks[1:]
		return id
	}
	return "form_" + c.msgID + "_" + strconv.Itoa(len(c.reply.forms))
}

// tokenContent returns the body of the content string of a token event's
// data as the skillpet encoder writes it, {"content":"…"}, without
// decoding: appending it decoded allocates nothing per token.
func tokenContent(data []byte) ([]byte, bool) {
	const head, tail = `{"content":"`, `"}`
	if len(data) < len(head)+len(tail) || !bytes.HasPrefix(data, []byte(head)) || !bytes.HasSuffix(data, []byte(tail)) {
		return nil, false
	}
	return data[len(head) : len(data)-len(tail)], true
}

// splitEvent returns the event name and data of one SSE event block.
func splitEvent(block []byte) (name, data []byte) {
	for len(block) > 0 {
		line := block
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			name = line[len("event: "):]
		case bytes.HasPrefix(line, []byte("data: ")):
			data = line[len("data: "):]
		}
	}
	return name, data
}

var _ transform.Encoder = (*Capture)(nil)
