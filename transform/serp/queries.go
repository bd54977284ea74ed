package serp

import (
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
)

// CodeQueriesCleaned is the violation a parser reports when a serp
// queries list broke a rule of specs/000 §4 and was cleaned: once per rule
// broken, its Text the rule's name (QueryRule.String). Every format that
// carries serp queries (thinkingml's serp_queries comment, jsonl's
// serp_queries event, specs/001 §1.1) cleans them alike, so the code is
// shared rather than each parser's own.
const CodeQueriesCleaned = "serp_queries_cleaned"

// QueryRule is a rule of specs/000 §4 that CleanQueries enforces.
type QueryRule uint8

// The rules. Their order is the order QueryRules.All yields them in, which
// is the order the violations are reported in.
const (
	// QueryTooMany: queries after the fifth are dropped.
	QueryTooMany QueryRule = iota
	// QueryDuplicate: a query that repeats an earlier one is dropped.
	QueryDuplicate
	// QueryTooLong: a query longer than 80 runes is cut to 80.
	QueryTooLong
	// QuerySensitive: a query holding an e-mail address, a phone number,
	// an IP address or a street address is dropped ("不包含敏感信息").
	QuerySensitive
	// QueryEmpty: a query that is empty once trimmed is dropped.
	QueryEmpty

	numQueryRules
)

var queryRuleNames = [numQueryRules]string{
	QueryTooMany:   "too_many",
	QueryDuplicate: "duplicate",
	QueryTooLong:   "too_long",
	QuerySensitive: "sensitive",
	QueryEmpty:     "empty",
}

// String returns the rule's name, as the CodeQueriesCleaned violation
// carries it.
func (r QueryRule) String() string {
	if r < numQueryRules {
		return queryRuleNames[r]
	}
	return "query_rule(" + strconv.Itoa(int(r)) + ")"
}

// QueryRules is a set of QueryRule values, one bit each.
type QueryRules uint8

// Has reports whether r is in s.
func (s QueryRules) Has(r QueryRule) bool { return s&(1<<r) != 0 }

// All yields the rules in s, in the order of the QueryRule constants.
func (s QueryRules) All() iter.Seq[QueryRule] {
	return func(yield func(QueryRule) bool) {
		for r := range numQueryRules {
			if s.Has(r) && !yield(r) {
				return
			}
		}
	}
}

// queryRuleDetails are the rule names as violation details: the events
// borrow them, so they are made once.
var queryRuleDetails = func() (d [numQueryRules][]byte) {
	for r := range numQueryRules {
		d[r] = []byte(r.String())
	}
	return d
}()

// EmitQueries emits list as a format's serp queries: cleaned by
// CleanQueries, after a CodeQueriesCleaned violation at off for each
// rule the list broke, then as one transform.KindSerpQueries event. Every parser
// whose format carries serp queries reports them this way, so that a
// client sees the same cleaning whatever the format.
func EmitQueries(list []string, off int64, emit transform.Emit) {
	list, broken := CleanQueries(list)
	for r := range broken.All() {
		emit(transform.Event{Kind: transform.KindViolation, Code: CodeQueriesCleaned, Offset: off, Text: queryRuleDetails[r]})
	}
	emit(transform.Event{Kind: transform.KindSerpQueries, List: list})
}

// The limits of specs/000 §4.
const (
	maxQueries    = 5
	maxQueryRunes = 80
)

// CleanQueries applies the serp queries rules of specs/000 §4 to list, in
// this order: each query is trimmed and dropped if empty, dropped if it
// holds an e-mail address, a phone number or an IP address, cut to 80
// runes (and trimmed again), dropped if it repeats an earlier one, and the
// first 5 that remain are kept. broken holds every rule the list broke.
// The result is never nil, so that encoders write [] rather than null; list
// is not modified.
//
// A byte that is not UTF-8 becomes U+FFFD first, as every encoder writes
// it (jsonout.AppendString), so that two queries that reach the client
// alike count as duplicates, and the 80 characters are the client's.
func CleanQueries(list []string) (out []string, broken QueryRules) {
	out = make([]string, 0, min(len(list), maxQueries))
	for _, q := range list {
		q = strings.TrimSpace(validUTF8(q))
		switch {
		case q == "":
			broken |= 1 << QueryEmpty
			continue
		case sensitive(q):
			broken |= 1 << QuerySensitive
			continue
		}
		if utf8.RuneCountInString(q) > maxQueryRunes {
			broken |= 1 << QueryTooLong
			q = strings.TrimSpace(truncateRunes(q, maxQueryRunes))
		}
		if slices.Contains(out, q) {
			broken |= 1 << QueryDuplicate
			continue
		}
		if len(out) == maxQueries {
			broken |= 1 << QueryTooMany
			break
		}
		out = append(out, q)
	}
	return out, broken
}

// truncateRunes returns the first n runes of s.
func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// validUTF8 returns s with each byte that is not part of a UTF-8 sequence
// replaced by U+FFFD, one for one as jsonout.AppendString writes them; s
// itself when it is valid.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
