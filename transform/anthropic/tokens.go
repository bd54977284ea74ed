package anthropic

import (
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform/parsekit"
)

// EstimateTokens estimates the input tokens of an OpenAI chat-completions
// body without a tokenizer: the upstream's model, whatever it is, has a
// tokenizer of its own, and no counting endpoint is standard among
// OpenAI-compatible servers. It reads the body once, in one pass that
// allocates nothing but for images and PDFs:
//
//   - text (every string, keys included, escapes decoded) is counted by
//     the shapes that BPE tokenizers cut: a run of ASCII letters is a token
//     per started 6 letters (a space before it is part of it), digits a
//     token per 3, a run of punctuation a token per 2, an indentation or
//     line-break run one token, a 2-byte UTF-8 character (accented Latin,
//     Cyrillic, Greek, Arabic, …) half a token, a 3-byte one (CJK, …) one,
//     a 4-byte one (emoji) two;
//   - every JSON object costs 3 tokens, for the role markers and
//     separators that chat templates wrap each message and part in;
//   - an image costs what Anthropic charges, width × height / 750 after
//     scaling its long edge to 1568 px, at most 1600: the size is read from
//     a base64 PNG, JPEG or GIF header; any other image (a URL, WebP)
//     counts 1600;
//   - a base64 PDF costs 2000 tokens a page, the middle of Anthropic's
//     "1,500–3,000 tokens per page", its pages counted by their /Type
//     /Page objects.
//
// It is an estimate: measured against the o200k and cl100k tokenizers on
// English prose, Go code, Chinese prose and tool schemas it is within
// about ±20% (docs/anthropic.md, "Claude Code").
func EstimateTokens(body []byte) int {
	var s tokenScanner
	s.scan(body)
	return int(s.total+0.999) + s.media
}

// tokenScanner walks a JSON document for EstimateTokens.
type tokenScanner struct {
	total float64 // text and structure tokens
	media int     // image and PDF tokens
	text  textCounter
	// keys holds the last two object keys read, to recognise the url of
	// an image_url part.
	key, prevKey [16]byte
	keyLen       int
	prevLen      int
}

// Costs of the structure and of the media EstimateTokens prices.
const (
	objectTokens   = 3
	imageMaxTokens = 1600
	imageMaxEdge   = 1568
	pdfPageTokens  = 2000
)

func (s *tokenScanner) scan(b []byte) {
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '"':
			end, next := stringEnd(b, i)
			s.str(b[i+1:end], afterSpace(b, next) == ':')
			i = next
		case '{':
			s.total += objectTokens
			i++
		default:
			i++
		}
	}
	s.total += s.text.take()
}

// str counts the inside of one JSON string; key says it is an object key.
func (s *tokenScanner) str(raw []byte, key bool) {
	if key {
		s.prevKey, s.prevLen = s.key, s.keyLen
		s.keyLen = copy(s.key[:], raw)
		if len(raw) > len(s.key) {
			s.keyLen = 0
		}
	} else if cost, ok := mediaTokens(raw, s.isImageURL()); ok {
		s.total += s.text.take()
		s.media += cost
		return
	}
	s.text.string(raw)
	s.total += s.text.take()
}

// isImageURL reports whether the value being read is an image_url part's
// url ({"image_url":{"url":…}}).
func (s *tokenScanner) isImageURL() bool {
	return string(s.key[:s.keyLen]) == "url" && string(s.prevKey[:s.prevLen]) == "image_url"
}

// stringEnd returns the offset of the closing quote of the string whose
// opening quote is at i, and the offset just past it; both are len(b) for
// an unterminated string.
func stringEnd(b []byte, i int) (int, int) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i, i + 1
		}
	}
	return len(b), len(b)
}

// afterSpace returns the first byte at or after i that is not JSON
// whitespace, or 0.
func afterSpace(b []byte, i int) byte {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return b[i]
		}
	}
	return 0
}

// The kinds of run textCounter prices.
const (
	runNone = iota
	runLetters
	runDigits
	runSpaces
	runBreaks
	runPunct
)

// textCounter prices text as a BPE tokenizer would cut it (EstimateTokens).
type textCounter struct {
	kind, n int
	total   float64
}

// string feeds the inside of a JSON string, decoding its escapes.
func (t *textCounter) string(raw []byte) {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw):
			i += 2
			switch raw[i-1] {
			case 'n', 'r', 't':
				t.ascii('\n')
			case 'u':
				r, n := decodeU(raw[i:])
				i += n
				t.char(r)
			case 'b', 'f':
			default:
				t.ascii(raw[i-1])
			}
		case c < utf8.RuneSelf:
			t.ascii(c)
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			t.char(r)
			i += n
		}
	}
}

// decodeU decodes the hex digits after \u (and a low surrogate's \uXXXX
// after a high one), returning the rune and the bytes read.
func decodeU(b []byte) (rune, int) {
	r, ok := parsekit.Hex4(b)
	if !ok {
		return utf8.RuneError, 0
	}
	if r >= 0xd800 && r < 0xdc00 && len(b) >= 10 && b[4] == '\\' && b[5] == 'u' {
		if lo, ok := parsekit.Hex4(b[6:]); ok && lo >= 0xdc00 && lo < 0xe000 {
			return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 10
		}
	}
	return r, 4
}

// ascii adds one ASCII character.
func (t *textCounter) ascii(c byte) {
	kind := runPunct
	switch {
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
		kind = runLetters
	case c >= '0' && c <= '9':
		kind = runDigits
	case c == ' ':
		kind = runSpaces
	case c == '\n' || c == '\r' || c == '\t':
		kind = runBreaks
	}
	if kind != t.kind {
		t.endRun()
		t.kind = kind
	}
	t.n++
}

// char adds one non-ASCII character.
func (t *textCounter) char(r rune) {
	t.endRun()
	switch utf8.RuneLen(r) {
	case 2:
		t.total += 0.5
	case 3:
		t.total++
	default:
		t.total += 2
	}
}

// endRun prices the open run. A lone space costs nothing: tokenizers
// attach it to the word after it.
func (t *textCounter) endRun() {
	switch t.kind {
	case runLetters:
		t.total += float64(1 + (t.n-1)/6)
	case runDigits:
		t.total += float64((t.n + 2) / 3)
	case runSpaces:
		if t.n > 1 {
			t.total++
		}
	case runBreaks:
		t.total += 0.5
	case runPunct:
		t.total += float64((t.n + 1) / 2)
	}
	t.kind, t.n = runNone, 0
}

// take ends the open run and returns the tokens counted since the last
// take.
func (t *textCounter) take() float64 {
	t.endRun()
	total := t.total
	t.total = 0
	return total
}
