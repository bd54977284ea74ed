package agent

import (
	"strconv"
	"unicode/utf8"
)

// DefaultMaxResultBytes is what the model is given of one result at most.
const DefaultMaxResultBytes = 64 << 10

// ModelText is what the model is given of a tool's result (CONTRACT.md
// §12), as the content of the call's tool message: its text parts, and a
// line describing each part that is not text (an image, a resource), in
// order, separated by blank lines; the structured content when there is
// nothing else; "Error: " before a failure's text, so that the model
// reads it as one. A text over max bytes (DefaultMaxResultBytes when max
// is below 1) is cut on a character boundary and ends with a marker that
// says so, so that the model knows it saw a part.
//
// The result is data for the model: it is never read by llmstream as an
// instruction, and it reaches the model only as a tool message.
func ModelText(r Result, max int) string {
	if max < 1 {
		max = DefaultMaxResultBytes
	}
	var b []byte
	sep := func() {
		if len(b) > 0 {
			b = append(b, "\n\n"...)
		}
	}
	for _, p := range r.Parts {
		sep()
		b = appendPart(b, p)
		if len(b) > 2*max {
			break // the rest would be cut anyway
		}
	}
	if len(b) == 0 && len(r.Structured) > 0 {
		b = append(b, r.Structured...)
	}
	if r.IsError {
		b = append([]byte("Error: "), b...)
		if len(b) == len("Error: ") {
			b = append(b, "the tool failed and said nothing more."...)
		}
	}
	return string(cut(b, max))
}

// appendPart appends the text of one part of a result.
func appendPart(b []byte, p Part) []byte {
	switch p.Kind {
	case PartText:
		return append(b, p.Text...)
	case PartImage, PartAudio:
		kind := "image"
		if p.Kind == PartAudio {
			kind = "audio"
		}
		b = append(b, '[')
		b = append(b, kind...)
		b = appendMeta(b, p)
		return append(b, ']')
	case PartResourceLink:
		b = append(b, "[resource link"...)
		b = appendMeta(b, p)
		b = append(b, ']')
		if p.Text != "" {
			b = append(b, ' ')
			b = append(b, p.Text...)
		}
		return b
	case PartResource:
		if p.Data == nil {
			b = append(b, "[resource"...)
			b = appendMeta(b, p)
			b = append(b, "]\n"...)
			return append(b, p.Text...)
		}
		b = append(b, "[resource"...)
		b = appendMeta(b, p)
		return append(b, ']')
	}
	return b
}

// appendMeta appends a part's name, URI, type and size, those it has.
func appendMeta(b []byte, p Part) []byte {
	if p.Name != "" {
		b = append(b, ": "...)
		b = append(b, p.Name...)
	}
	if p.URI != "" {
		b = append(b, " <"...)
		b = append(b, p.URI...)
		b = append(b, '>')
	}
	if p.MIMEType != "" {
		b = append(b, ", "...)
		b = append(b, p.MIMEType...)
	}
	if p.Data != nil {
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(len(p.Data)), 10)
		b = append(b, " bytes"...)
	}
	return b
}

// cut returns b if it fits in max bytes, else its start, cut on a
// character boundary, and a marker, max bytes in all.
func cut(b []byte, max int) []byte {
	if len(b) <= max {
		return b
	}
	marker := "\n[cut: the result has " + strconv.Itoa(len(b)) + " bytes; the first ones are shown]"
	keep := max - len(marker)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(b[keep]) {
		keep--
	}
	return append(b[:keep:keep], marker...)
}
