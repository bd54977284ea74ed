package thinkingml

// tagID names one whitelisted tag of specs/000 §2, opening or closing.
type tagID uint8

const (
	tagThink tagID = iota
	tagThinkEnd
	tagSerp
	tagSerpEnd
	tagThinking
	tagThinkingEnd
	tagPhase
	tagPhaseEnd
	tagTitle
	tagTitleEnd
	tagFinal
	tagFinalEnd
	numTags
)

// tagTable spells each tagID: its name and whether it closes.
var tagTable = [numTags]struct {
	name    string
	closing bool
}{
	tagThink:       {"think", false},
	tagThinkEnd:    {"think", true},
	tagSerp:        {"serp", false},
	tagSerpEnd:     {"serp", true},
	tagThinking:    {"thinking", false},
	tagThinkingEnd: {"thinking", true},
	tagPhase:       {"phase", false},
	tagPhaseEnd:    {"phase", true},
	tagTitle:       {"title", false},
	tagTitleEnd:    {"title", true},
	tagFinal:       {"final", false},
	tagFinalEnd:    {"final", true},
}

// tagSet is a set of tagIDs.
type tagSet uint16

func setOf(ids ...tagID) tagSet {
	var s tagSet
	for _, id := range ids {
		s |= 1 << id
	}
	return s
}

func (s tagSet) has(id tagID) bool { return s&(1<<id) != 0 }

// rules is what the tag scanner looks for in one grammar state
// (PARSING.md §5.3: a tiny static table per state).
type rules struct {
	// tags are the tags the state acts on; everything else is text.
	tags tagSet
	// sniff makes the scanner hold any tag-shaped name (<note>, </x>,
	// <br/>) so that an unknown or misplaced tag is reported (TM19). Without
	// it, bytes are held only while they may still be one of tags.
	sniff bool
	// comment makes "<!--" structural (the serp_queries comment, specs/000
	// §4); only <final> has it.
	comment bool
}

// finalTags are the literal <final> and </final> that <think> and
// <thinking> turn into escaped text (specs/000 §1 "兼容性").
var finalTags = setOf(tagFinal, tagFinalEnd)

var stateRules = [numStates]rules{
	// Top level: the four blocks open; closers are stray (dropped). Unknown
	// tags are not sniffed: top-level text is unexpected anyway, and TM18
	// wants <Think> and <think > held no longer than they may be a tag.
	stTop: {tags: setOf(tagThink, tagSerp, tagThinking, tagFinal,
		tagThinkEnd, tagSerpEnd, tagThinkingEnd, tagFinalEnd, tagPhaseEnd, tagTitleEnd)},
	stThink: {tags: setOf(tagThinkEnd) | finalTags, sniff: true},
	// <thinking> and <final> end a <serp> the model forgot to close, so that
	// a missing </serp> does not swallow the reply into a held block.
	stSerp:     {tags: setOf(tagSerpEnd, tagThinking, tagFinal), sniff: true},
	stThinking: {tags: setOf(tagPhase, tagThinkingEnd, tagPhaseEnd, tagTitleEnd) | finalTags, sniff: true},
	stPhaseHead: {tags: setOf(tagTitle, tagPhase, tagPhaseEnd, tagThinkingEnd) | finalTags,
		sniff: true},
	stTitle: {tags: setOf(tagTitleEnd, tagPhaseEnd, tagThinkingEnd) | finalTags, sniff: true},
	stPhase: {tags: setOf(tagPhase, tagPhaseEnd, tagThinkingEnd, tagTitle) | finalTags, sniff: true},
	// Inside <final> nothing is a tag but </final> and "<!--" (CONTRACT.md
	// §4, TM11, TM12).
	stFinal: {tags: setOf(tagFinalEnd), comment: true},
}

// lookupTag returns the whitelisted tag spelled name (closing or not).
func lookupTag(name []byte, closing bool) (tagID, bool) {
	for id := range numTags {
		if t := tagTable[id]; t.closing == closing && string(name) == t.name {
			return id, true
		}
	}
	return 0, false
}

// lookupTagFold is lookupTag ignoring ASCII letter case: it finds the
// whitelisted tag a mis-cased name (<Think>, </FINAL>) stands for.
func lookupTagFold(name []byte, closing bool) (tagID, bool) {
	for id := range numTags {
		if t := tagTable[id]; t.closing == closing && foldEqual(name, t.name) {
			return id, true
		}
	}
	return 0, false
}

// prefixOf reports whether name starts one of the tags in s, in any
// letter case, so that a mis-cased tag is held long enough to be reported.
func (s tagSet) prefixOf(name []byte, closing bool) bool {
	for id := range numTags {
		t := tagTable[id]
		if s.has(id) && t.closing == closing && len(name) <= len(t.name) && foldEqual(name, t.name[:len(name)]) {
			return true
		}
	}
	return false
}

// foldEqual reports whether name equals lower, a lower-case ASCII tag
// name, ignoring the case of name's ASCII letters.
func foldEqual(name []byte, lower string) bool {
	if len(name) != len(lower) {
		return false
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// The literal byte sequences the scanner matches besides tags.
const (
	// marker is what the model writes when it cannot follow the format
	// (specs/000 §2).
	marker = "<<ParsingError>>"
	// commentOpen starts the serp_queries comment (specs/000 §4).
	commentOpen = "<!--"
	// serpOpen and serpClose wrap the serp_queries JSON array.
	serpOpen  = "<serp_queries>"
	serpClose = "</serp_queries>"
)

// maxName bounds a sniffed tag name: longer names are text without a
// violation, so that hold-back stays bounded by a constant.
const maxName = 32

// maxSpace bounds a held run of whitespace: before the first tag (for the
// <<ParsingError>> check), before a possible serp_queries comment in
// <final> (TM27) and inside "<!--" before "<serp_queries>" (PARSING.md
// §5.10 MaxHoldWhitespace).
const maxSpace = 256

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func isNameStart(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isNameChar(c byte) bool {
	return isNameStart(c) || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':'
}

// skipSpace returns the index of the first non-whitespace byte of b, or
// len(b).
func skipSpace(b []byte) int {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// trimSpaceEnd returns the length of b without its trailing whitespace.
func trimSpaceEnd(b []byte) int {
	k := len(b)
	for k > 0 && isSpace(b[k-1]) {
		k--
	}
	return k
}
