package transformtest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
)

// Format writes evs in the compact notation of PARSING.md §4, one token per
// event separated by spaces, KindRaw left out:
//
//	R{ R"…" R}            reasoning          S"…"              serp summary
//	TH{ TH}               thinking           P{1 "title"} P1"…" P1}   phase
//	F{ F"…" F}            answer             Q["a","b"]        serp queries
//	TC{0 id name} TA0"…" TC}0 {args}         tool call
//	TC{0 id name*} …                        a call the gateway runs (Server)
//	RUN0 PROG0(1/3 "msg") RES0(status "output")  a server call runs
//	ROUND(2)                                 the next round of the turn
//	C{"q" ["a"] "hint"}   clarify            A[…]              artifacts
//	ROUTED(model,id)  U{…}  FIN(reason)  E(code)
//	V(code@offset)  V(code@offset:detail)    violation, with its Text if any
func Format(evs []transform.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == transform.KindRaw {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Token(ev))
	}
	return b.String()
}

// Token is the notation of one event (see Format).
func Token(ev transform.Event) string {
	q := func(p []byte) string { return strconv.Quote(string(p)) }
	switch ev.Kind {
	case transform.KindRaw:
		return "RAW" + q(ev.Text)
	case transform.KindReasoningStart:
		return "R{"
	case transform.KindReasoningDelta:
		return "R" + q(ev.Text)
	case transform.KindReasoningEnd:
		return "R}"
	case transform.KindSerpSummary:
		return "S" + q(ev.Text)
	case transform.KindThinkingStart:
		return "TH{"
	case transform.KindThinkingEnd:
		return "TH}"
	case transform.KindPhaseStart:
		return fmt.Sprintf("P{%d %s}", ev.Index, q(ev.Text))
	case transform.KindPhaseDelta:
		return fmt.Sprintf("P%d%s", ev.Index, q(ev.Text))
	case transform.KindPhaseEnd:
		return fmt.Sprintf("P%d}", ev.Index)
	case transform.KindAnswerStart:
		return "F{"
	case transform.KindAnswerDelta:
		return "F" + q(ev.Text)
	case transform.KindAnswerEnd:
		return "F}"
	case transform.KindSerpQueries:
		return "Q[" + quoteList(ev.List) + "]"
	case transform.KindToolCallStart:
		if ev.Server {
			return fmt.Sprintf("TC{%d %s %s*}", ev.Index, ev.ID, ev.Name)
		}
		return fmt.Sprintf("TC{%d %s %s}", ev.Index, ev.ID, ev.Name)
	case transform.KindToolRun:
		return fmt.Sprintf("RUN%d", ev.Index)
	case transform.KindToolProgress:
		if ev.Tool == nil {
			return fmt.Sprintf("PROG%d", ev.Index)
		}
		return fmt.Sprintf("PROG%d(%g/%g %q)", ev.Index, ev.Tool.Progress, ev.Tool.Total, ev.Tool.Message)
	case transform.KindToolResult:
		if ev.Tool == nil {
			return fmt.Sprintf("RES%d", ev.Index)
		}
		return fmt.Sprintf("RES%d(%s %q)", ev.Index, ev.Tool.Status, ev.Tool.Output)
	case transform.KindResourceUpdated:
		return fmt.Sprintf("RU(%s %s)", ev.Name, ev.Text)
	case transform.KindAgent:
		return fmt.Sprintf("AG(%s %s %s %q)", ev.ID, ev.Code, ev.Name, ev.Text)
	case transform.KindRoundStart:
		return fmt.Sprintf("ROUND(%d)", ev.Index)
	case transform.KindToolArgsDelta:
		return fmt.Sprintf("TA%d%s", ev.Index, q(ev.Text))
	case transform.KindToolCallEnd:
		return fmt.Sprintf("TC}%d %s", ev.Index, ev.Text)
	case transform.KindClarify:
		if ev.Clarify == nil {
			return "C{nil}"
		}
		return fmt.Sprintf("C{%q [%s] %q}", ev.Clarify.Question, quoteList(ev.Clarify.Options), ev.Clarify.Hint)
	case transform.KindArtifacts:
		return "A" + string(ev.Text)
	case transform.KindRouted:
		return fmt.Sprintf("ROUTED(%s,%s)", ev.Name, ev.ID)
	case transform.KindUsage:
		return "U" + string(ev.Text)
	case transform.KindViolation:
		if len(ev.Text) == 0 {
			return fmt.Sprintf("V(%s@%d)", ev.Code, ev.Offset)
		}
		return fmt.Sprintf("V(%s@%d:%s)", ev.Code, ev.Offset, detail(ev.Text))
	case transform.KindFinish:
		return "FIN(" + ev.Code + ")"
	case transform.KindError:
		return "E(" + ev.Code + ")"
	}
	return ev.Kind.String()
}

// quoteList writes list quoted and comma-separated.
func quoteList(list []string) string {
	qs := make([]string, len(list))
	for i, s := range list {
		qs[i] = strconv.Quote(s)
	}
	return strings.Join(qs, ",")
}

// detail writes a violation's detail as it is, unless it holds a control
// byte or invalid UTF-8, which would break a golden file's one token a
// line: then it is quoted.
func detail(text []byte) string {
	if !utf8.Valid(text) || bytes.ContainsFunc(text, unicode.IsControl) {
		return strconv.Quote(string(text))
	}
	return string(text)
}
