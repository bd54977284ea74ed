package config

import (
	"bytes"
	"fmt"
	"strings"
)

// fencedBlock is the content of a ```json fenced code block in a Markdown
// file, and the line of its opening fence (1-based) for error messages.
type fencedBlock struct {
	line    int
	content []byte
}

// jsonBlocks returns the ```json (or ~~~json) fenced code blocks of a
// Markdown document, in order. Fences follow CommonMark: up to three spaces
// of indent, three or more backticks or tildes, an info string whose first
// word names the language; the block closes at a fence of the same
// character, at least as long, with nothing after it. Blocks in other
// languages are skipped whole, so a ```json line inside a ```markdown
// example is not taken for a block. A json block that is never closed is an
// error: in a tools file it is a truncated tool, not the rest of the file.
func jsonBlocks(md []byte) ([]fencedBlock, error) {
	var blocks []fencedBlock
	var (
		open     bool   // inside a fenced block
		isJSON   bool   // the open block is json
		fence    string // the open block's fence run, e.g. "````"
		start    int    // the open block's fence line
		contents []byte
	)
	line := 0
	for rest := md; len(rest) > 0; {
		var l []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			l, rest = rest, nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		line++
		run, info, ok := fenceLine(l)
		if !open {
			if ok {
				open, fence, start = true, run, line
				f := strings.Fields(info)
				isJSON = len(f) > 0 && strings.EqualFold(f[0], "json")
				contents = nil
			}
			continue
		}
		if ok && run[0] == fence[0] && len(run) >= len(fence) && info == "" {
			if isJSON {
				blocks = append(blocks, fencedBlock{line: start, content: contents})
			}
			open = false
			continue
		}
		if isJSON {
			contents = append(append(contents, l...), '\n')
		}
	}
	if open && isJSON {
		return nil, fmt.Errorf("```json block at line %d is not closed", start)
	}
	return blocks, nil
}

// fenceLine reports whether l is a code fence line and returns its run of
// fence characters and its trimmed info string.
func fenceLine(l []byte) (run, info string, ok bool) {
	s := string(l)
	indent := len(s) - len(strings.TrimLeft(s, " "))
	if indent > 3 {
		return "", "", false
	}
	s = s[indent:]
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return "", "", false
	}
	n := len(s) - len(strings.TrimLeft(s, s[:1]))
	if n < 3 {
		return "", "", false
	}
	info = strings.TrimSpace(s[n:])
	// A backtick fence's info string cannot hold a backtick (CommonMark
	// §4.5), which is what keeps inline ```code``` from opening a block.
	if s[0] == '`' && strings.Contains(info, "`") {
		return "", "", false
	}
	return s[:n], info, true
}
