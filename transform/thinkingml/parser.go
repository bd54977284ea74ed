package thinkingml

import (
	"bytes"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// state is the parser's position in the grammar of specs/000 §1
// (PARSING.md §5.3: Start → [Think] → [Serp] → Thinking{Phase{Title,
// Body}*} → Final{Markdown, SerpComment?} → Done).
type state uint8

const (
	stLead      state = iota // before the first non-space byte: maybe <<ParsingError>>
	stTop                    // between blocks
	stThink                  // in <think>
	stSerp                   // in <serp>, text held
	stThinking               // in <thinking>, outside any phase
	stPhaseHead              // after <phase>, before its title or text
	stTitle                  // in <title>, text held
	stPhase                  // in a phase's text
	stFinal                  // in <final>
	stComment                // in <final>, holding a possible serp_queries comment
	stDead                   // after a fatal error or Close: input is ignored
	numStates
)

// Parser parses a ThinkingML reply (specs/000) incrementally. It implements
// transform.Parser; see the package documentation for the events and the
// policies. The zero value is not usable: call New.
type Parser struct {
	opts     transform.ParserOptions
	rtitle   []byte // opts.ReasoningTitle
	maxTag   int
	maxBlock int
	emit     transform.Emit

	st  state
	off int64 // offset of the next Feed's first byte

	// chunk is the bytes being scanned and base the offset of chunk[0];
	// chunk is nil between calls, since Feed does not retain its input.
	chunk []byte
	base  int64

	// pend holds a tag candidate, which starts at pendOff (PARSING.md
	// §5.3); m is its lexical state.
	pend    []byte
	pendOff int64
	m       matcher
	scratch []byte

	carry parsekit.RuneCarry

	// space holds whitespace in <final> until it is known whether a
	// serp_queries comment follows (TM27).
	space []byte
	// block holds a <serp>, a <title> or a possible serp_queries comment
	// (Limits.MaxBlockBytes), starting at blockOff.
	block    []byte
	blockOff int64
	cm       commentScan

	raw  rawChannel
	lead leadScan

	doc document
	cur cursor

	// skipped, when set (tests only), receives every input span consumed
	// without being emitted as text: tags, structural whitespace and the
	// serp_queries comment.
	skipped func(span []byte)
}

// cursor is the state of the open sections beyond the grammar state.
type cursor struct {
	// stray: an answer opened by text outside every block is open.
	stray bool
	// finalDone: a </final> was seen, so later text is trailing_text.
	finalDone bool
	// answered: answer text was emitted, so whitespace at top level may
	// stand between answer texts (topText).
	answered bool
	// phase is the id of the open (or, in stPhaseHead and stTitle, the
	// announced) phase; implicit says it was opened by text outside any
	// phase.
	phase    int
	implicit bool
	// serpFound: the current <final> had its serp_queries comment;
	// afterSerp: nothing but whitespace has followed it yet.
	serpFound, afterSerp, afterReported bool
}

// New returns a Parser for ThinkingML replies.
func New(opts transform.ParserOptions) *Parser {
	opts = opts.WithDefaults()
	p := &Parser{opts: opts, rtitle: []byte(opts.ReasoningTitle), maxTag: opts.Limits.MaxTagBytes, maxBlock: opts.Limits.MaxBlockBytes}
	pendCap := max(p.maxTag+utf8.UTFMax-1, maxName+4, len(marker)) + 1
	p.pend = make([]byte, 0, pendCap)
	p.scratch = make([]byte, 0, pendCap)
	p.space = make([]byte, 0, maxSpace)
	p.block = make([]byte, 0, 256)
	p.raw.hold = make([]byte, 0, 2*maxSpace+len(marker)+pendCap+8)
	p.lead.replay = make([]byte, 0, cap(p.raw.hold))
	p.doc.ids = make([]int, 0, 16)
	return p
}

// Reset readies p for a new reply with the same options, keeping its
// buffers.
func (p *Parser) Reset() {
	*p = Parser{
		opts: p.opts, rtitle: p.rtitle, maxTag: p.maxTag, maxBlock: p.maxBlock,
		pend: p.pend[:0], scratch: p.scratch[:0], space: p.space[:0], block: p.block[:0],
		raw:     rawChannel{hold: p.raw.hold[:0]},
		lead:    leadScan{replay: p.lead.replay[:0]},
		doc:     document{ids: p.doc.ids[:0]},
		skipped: p.skipped,
	}
}

// Feed consumes the next bytes of the reply. b is not retained; the Text
// of every event emitted is borrowed and valid only until emit returns.
func (p *Parser) Feed(b []byte, emit transform.Emit) {
	p.emit = emit
	switch p.st {
	case stDead:
		return
	case stLead:
		i, resolved := p.lead.scan(b)
		if !resolved {
			p.raw.hold = append(p.raw.hold, b...)
			p.off += int64(len(b))
			return
		}
		p.resolveLead(b[:i])
		p.scan(b[i:], p.off+int64(i))
	default:
		p.scan(b, p.off)
	}
	p.off += int64(len(b))
	p.emit = nil // do not keep the caller's callback alive
}

// scan runs the single pass over b, whose first byte is at offset base.
func (p *Parser) scan(b []byte, base int64) {
	p.chunk, p.base = b, base
	i := 0
	if p.carry.Pending() {
		out, rest := p.carry.Resume(b)
		i = len(b) - len(rest)
		if out != nil {
			p.text(out, base+int64(i)-int64(len(out)))
		}
	}
	for i < len(b) && p.st != stDead {
		switch {
		case len(p.pend) > 0:
			i = p.stepPending(b, i)
		case p.st == stComment:
			i = p.scanComment(b, i)
		default:
			j := bytes.IndexByte(b[i:], '<')
			if j < 0 {
				// Text to the end of the chunk: never end it mid-rune
				// (PARSING.md §5.2).
				seg := p.carry.Hold(b[i:])
				p.text(seg, base+int64(i))
				i = len(b)
				continue
			}
			if j > 0 {
				p.text(b[i:i+j], base+int64(i))
				if p.st == stDead {
					continue
				}
			}
			i += j
			p.pend = append(p.pend[:0], '<')
			p.pendOff = base + int64(i)
			p.m = matcher{}
			i++
		}
	}
	p.raw.endScan(p)
	p.chunk = nil
}
