package aisdk

import (
	"strconv"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// appendDelta appends a text-delta or reasoning-delta, opening a part of
// that kind first when none is open. Parts open lazily, on their first
// text, so that an empty section makes no empty part. Empty text sends
// nothing.
func (e *Encoder) appendDelta(dst []byte, kind partKind, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	if e.open != kind {
		dst = e.closePart(dst)
		dst = e.openPart(dst, kind)
	}
	if kind == partText {
		dst = append(dst, `data: {"type":"text-delta","id":"`...)
	} else {
		dst = append(dst, `data: {"type":"reasoning-delta","id":"`...)
	}
	dst = e.appendOpenID(dst)
	dst = append(dst, `","delta":`...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, "}\n\n"...)
}

// openPart appends text-start or reasoning-start for a new part.
func (e *Encoder) openPart(dst []byte, kind partKind) []byte {
	e.open = kind
	if kind == partText {
		e.openID = e.nText
		e.nText++
		dst = append(dst, `data: {"type":"text-start","id":"`...)
	} else {
		e.openID = e.nReasoning
		e.nReasoning++
		dst = append(dst, `data: {"type":"reasoning-start","id":"`...)
	}
	dst = e.appendOpenID(dst)
	return append(dst, "\"}\n\n"...)
}

// closeIf closes the open part if it is of kind.
func (e *Encoder) closeIf(dst []byte, kind partKind) []byte {
	if e.open != kind {
		return dst
	}
	return e.closePart(dst)
}

// closePart appends text-end or reasoning-end for the open part, if any.
// The SDK marks a part done only on its end chunk (ai@6
// processUIMessageStream), so every part opened is ended.
func (e *Encoder) closePart(dst []byte) []byte {
	switch e.open {
	case partText:
		dst = append(dst, `data: {"type":"text-end","id":"`...)
	case partReasoning:
		dst = append(dst, `data: {"type":"reasoning-end","id":"`...)
	default:
		return dst
	}
	dst = e.appendOpenID(dst)
	e.open = partNone
	return append(dst, "\"}\n\n"...)
}

// appendOpenID appends the open part's id, "text-N" or "reasoning-N".
func (e *Encoder) appendOpenID(dst []byte) []byte {
	if e.open == partText {
		dst = append(dst, "text-"...)
	} else {
		dst = append(dst, "reasoning-"...)
	}
	return strconv.AppendInt(dst, e.openID, 10)
}
