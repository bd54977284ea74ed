package jsonstream

import "github.com/llmstream/llmstream/transform"

// scan runs the grammar over p from i until p ends or the object is done
// or broken, and returns where it stopped (PARSING.md §5.5: one byte at a
// time, no backtracking; a byte is looked at again only when the state it
// ends hands it to the next one, as the end of a number does).
func (t *Tokenizer) scan(p []byte, i int) int {
	for i < len(p) && t.st < stDone {
		switch t.st {
		case stStr:
			i = t.stepString(p, i)
		case stStrEsc:
			i = t.stepEscape(p, i)
		case stStrU:
			i = t.stepHex(p, i)
		case stStrHi:
			i = t.stepHighSurrogate(p, i)
		case stStrHiEsc:
			i = t.stepHighSurrogateEscape(p, i)
		case stNumber:
			i = t.stepNumber(p, i)
		case stLiteral:
			i = t.stepLiteral(p, i)
		default:
			i = t.stepStructure(p, i)
		}
	}
	return i
}

// stepStructure handles a byte between tokens.
func (t *Tokenizer) stepStructure(p []byte, i int) int {
	c := p[i]
	if isBlank(c) {
		return i + 1
	}
	switch t.st {
	case stValue:
		return t.beginValue(p, i)
	case stArrFirst:
		if c == ']' {
			return t.pop(p, i)
		}
		return t.beginValue(p, i)
	case stObjFirst, stObjKey:
		if c == '"' {
			t.beginKey(i)
			return i + 1
		}
		if c == '}' && t.st == stObjFirst {
			return t.pop(p, i)
		}
		return t.syntax(p, i, "expected a string key")
	case stColon:
		if c == ':' {
			t.st = stValue
			return i + 1
		}
		return t.syntax(p, i, "expected ':' after an object key")
	}
	// stAfter
	top := &t.stack[len(t.stack)-1]
	switch {
	case c == ',' && top.obj:
		t.st = stObjKey
		return i + 1
	case c == ',':
		t.st = stValue
		t.valNode, t.valIdx = t.elem(top.node), top.count
		return i + 1
	case c == '}' && top.obj, c == ']' && !top.obj:
		return t.pop(p, i)
	}
	if top.obj {
		return t.syntax(p, i, "expected ',' or '}' after an object member")
	}
	return t.syntax(p, i, "expected ',' or ']' after an array element")
}

// elem returns the node of the elements of the array at node n.
func (t *Tokenizer) elem(n int32) int32 {
	if n < 0 {
		return -1
	}
	return t.paths.nodes[n].elem
}

// watched returns the watch index and mode of node n, or -1.
func (t *Tokenizer) watched(n int32) (int32, Mode) {
	if n < 0 {
		return -1, 0
	}
	nd := &t.paths.nodes[n]
	return nd.path, nd.mode
}

// beginValue starts the value whose first byte is p[i], described by
// valNode and valIdx.
func (t *Tokenizer) beginValue(p []byte, i int) int {
	var typ Type
	switch c := p[i]; {
	case c == '{':
		typ = TypeObject
	case c == '[':
		typ = TypeArray
	case c == '"':
		typ = TypeString
	case c == '-' || c >= '0' && c <= '9':
		typ = TypeNumber
	case c == 't' || c == 'f':
		typ = TypeBool
	case c == 'n':
		typ = TypeNull
	default:
		return t.syntax(p, i, "expected a value")
	}
	path, mode := t.watched(t.valNode)
	if path >= 0 {
		t.report(TokenStart, path, t.valIdx, typ, nil, "", t.off(i))
		if mode&Raw != 0 && (typ != TypeString || mode&Text == 0) {
			t.cap = capture{on: true, path: path, idx: t.valIdx, depth: len(t.stack), start: i}
		}
	}
	t.curNode, t.curIdx, t.curOff = t.valNode, t.valIdx, t.off(i)
	switch typ {
	case TypeObject, TypeArray:
		return t.push(p, i, typ == TypeObject)
	case TypeString:
		sk := sinkSkip
		if path >= 0 && mode&Text != 0 {
			sk = sinkText
		}
		t.str.begin(sk, false)
		t.st = stStr
		return i + 1
	case TypeNumber:
		t.num = numStart
		t.scalar = t.scalar[:0]
		t.scalarX = false
		t.st = stNumber
		return i
	}
	t.lit = literalOf(p[i])
	t.litPos = 0
	t.st = stLiteral
	return i
}

// push opens the container whose first byte is p[i].
func (t *Tokenizer) push(p []byte, i int, obj bool) int {
	if len(t.stack) == cap(t.stack) {
		t.limit(p, i, transform.CodeJSONTooDeep, "JSON nested deeper than the depth limit")
		return i
	}
	t.stack = append(t.stack, frame{node: t.valNode, obj: obj, idx: t.valIdx})
	if obj {
		t.st = stObjFirst
	} else {
		t.st = stArrFirst
		t.valNode, t.valIdx = t.elem(t.valNode), 0
	}
	return i + 1
}

// pop closes the container whose closing byte is p[i].
func (t *Tokenizer) pop(p []byte, i int) int {
	f := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	typ := TypeArray
	if f.obj {
		typ = TypeObject
	}
	return t.endValue(p, i+1, f.node, f.idx, typ, nil)
}

// endValue finishes a value whose last byte is p[end-1] (or, when end is
// 0, the previous Feed's last byte).
func (t *Tokenizer) endValue(p []byte, end int, node int32, idx int, typ Type, text []byte) int {
	if t.cap.on && len(t.stack) == t.cap.depth {
		t.flushCapture(p, end, false)
		t.cap.on = false
	}
	if path, _ := t.watched(node); path >= 0 {
		t.report(TokenEnd, path, idx, typ, text, "", t.off(end-1))
	}
	if len(t.stack) == 0 {
		t.st = stDone
		return end
	}
	if top := &t.stack[len(t.stack)-1]; !top.obj {
		top.count++
	}
	t.st = stAfter
	return end
}

// beginKey starts an object key whose opening quote is at i. Keys are
// buffered (up to MaxKeyBytes) only in watched objects, where they are
// matched against the watched members.
func (t *Tokenizer) beginKey(i int) {
	top := &t.stack[len(t.stack)-1]
	sk := sinkSkip
	if top.node >= 0 {
		sk = sinkKey
		t.key = t.key[:0]
		t.keyOff = t.off(i)
		t.keyRaw = t.keyRaw[:0]
		t.keyRawStart = i
	}
	t.str.begin(sk, true)
	t.st = stStr
}

// endKey resolves the key just read to the node of its value.
func (t *Tokenizer) endKey(p []byte, i int) {
	top := &t.stack[len(t.stack)-1]
	t.valNode, t.valIdx = -1, top.idx
	t.st = stColon
	if top.node < 0 {
		return
	}
	n, ord := t.paths.lookup(top.node, t.key)
	if n < 0 {
		return
	}
	if top.seen&(1<<ord) != 0 {
		// JO19: append-only. Both values are reported; a consumer that
		// already streamed the first cannot take it back.
		t.violation(p, i, CodeDuplicateKey, t.key, t.keyOff)
	}
	top.seen |= 1 << ord
	t.valNode = n
}

// syntax reports a byte JSON does not allow at i.
func (t *Tokenizer) syntax(p []byte, i int, detail string) int {
	t.invalid(p, i, CodeBadJSON, detail, t.off(i))
	return i
}
