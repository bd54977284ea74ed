package serp

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
)

func TestCleanQueries(t *testing.T) {
	long := strings.Repeat("一二三四五六七八九十", 9)
	cut := strings.Repeat("一二三四五六七八九十", 8)
	tests := []struct {
		name   string
		in     []string
		want   []string
		broken []QueryRule
	}{
		{"clean", []string{"a", "b"}, []string{"a", "b"}, nil},
		{"none", nil, []string{}, nil},
		{"trimmed", []string{" a\t", "\nb "}, []string{"a", "b"}, nil},
		{"too_many", []string{"1", "2", "3", "4", "5", "6"}, []string{"1", "2", "3", "4", "5"}, []QueryRule{QueryTooMany}},
		{"duplicate", []string{"a", "a", " a "}, []string{"a"}, []QueryRule{QueryDuplicate}},
		{"too_long", []string{long}, []string{cut}, []QueryRule{QueryTooLong}},
		{"too_long_retrimmed", []string{strings.Repeat("x", 79) + "  y"}, []string{strings.Repeat("x", 79)}, []QueryRule{QueryTooLong}},
		{"exactly_80_runes", []string{cut}, []string{cut}, nil},
		{"duplicate_after_cut", []string{long, long + "x"}, []string{cut}, []QueryRule{QueryTooLong, QueryDuplicate}},
		{"sensitive", []string{"mail me@x.org", "ok", "call 13812345678", "host 10.0.0.1"}, []string{"ok"}, []QueryRule{QuerySensitive}},
		{"empty", []string{"", "  ", "a"}, []string{"a"}, []QueryRule{QueryEmpty}},
		// Bytes that are not UTF-8 reach the client as U+FFFD, one each:
		// these two queries read alike there.
		{"invalid_utf8", []string{"a\xff", "a\xfe", "b\xff\xfe"}, []string{"a\uFFFD", "b\uFFFD\uFFFD"}, []QueryRule{QueryDuplicate}},
		{"sensitive_not_counted", []string{"a@b.co", "1", "2", "3", "4", "5"}, []string{"1", "2", "3", "4", "5"}, []QueryRule{QuerySensitive}},
		// Sensitivity is checked before the cut, which can leave what reads
		// as a phone number: 16 digits are none, 15 are.
		{"cut_after_sensitive_check", []string{strings.Repeat("0", 64) + "A" + strings.Repeat("0", 16)},
			[]string{strings.Repeat("0", 64) + "A" + strings.Repeat("0", 15)}, []QueryRule{QueryTooLong}},
		{"all_rules", []string{"", "a", "a", "me@x.org", long, "b", "c", "d", "e"}, []string{"a", cut, "b", "c", "d"},
			[]QueryRule{QueryTooMany, QueryDuplicate, QueryTooLong, QuerySensitive, QueryEmpty}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got, broken := CleanQueries(in)
			if got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("CleanQueries(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("CleanQueries modified its argument: %q", in)
			}
			var want QueryRules
			for _, r := range tt.broken {
				want |= 1 << r
			}
			if broken != want {
				t.Errorf("broken = %05b, want %05b", broken, want)
			}
			for r := range numQueryRules {
				if broken.Has(r) != slices.Contains(tt.broken, r) {
					t.Errorf("Has(%s) = %v", r, broken.Has(r))
				}
			}
		})
	}
}

func TestEmitSerpQueries(t *testing.T) {
	var got []string
	emit := func(ev transform.Event) {
		switch ev.Kind {
		case transform.KindViolation:
			got = append(got, ev.Code+"@"+strconv.FormatInt(ev.Offset, 10)+":"+string(ev.Text))
		case transform.KindSerpQueries:
			got = append(got, "Q"+strings.Join(ev.List, ","))
			if ev.List == nil {
				t.Error("nil List")
			}
		default:
			t.Errorf("unexpected %s", ev.Kind)
		}
	}
	EmitQueries([]string{"b", " b", "", "a"}, 7, emit)
	EmitQueries(nil, 9, emit)
	want := "serp_queries_cleaned@7:duplicate|serp_queries_cleaned@7:empty|Qb,a|Q"
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("events %s, want %s", s, want)
	}
}

// TestQueryRules checks the rule names the violations carry and the order
// QueryRules.All reports them in.
func TestQueryRules(t *testing.T) {
	var names []string
	for r := range QueryRules(1<<numQueryRules - 1).All() {
		names = append(names, r.String())
	}
	if got := strings.Join(names, ","); got != "too_many,duplicate,too_long,sensitive,empty" {
		t.Errorf("All() = %s", got)
	}
	var first []QueryRule
	for r := range (QueryRules(1<<QueryDuplicate | 1<<QueryEmpty)).All() {
		first = append(first, r)
		break
	}
	if !slices.Equal(first, []QueryRule{QueryDuplicate}) {
		t.Errorf("All() after break: %v", first)
	}
	if s := QueryRule(9).String(); s != "query_rule(9)" {
		t.Errorf("QueryRule(9).String() = %q", s)
	}
}

// FuzzCleanQueries checks the promises of CleanQueries on any list: at
// most 5 queries, none empty, untrimmed, longer than 80 runes, repeated or
// sensitive; a rule reported for every change; and a clean list cleaned
// again unchanged, with no rule broken.
//
// The sensitivity check runs before the cut to 80 runes (as thinkingml has
// always done), and a cut can make a query look sensitive that was not
// (a 16-digit number cut to 15 digits reads as a phone number): such a
// cut query is allowed, and the list is then not checked for idempotence.
//
// It also checks that the detectors see an address or a number as a whole
// whatever surrounds it: a query found sensitive stays so between CJK
// words and spaces, as queries put it.
func FuzzCleanQueries(f *testing.F) {
	f.Add("a\x00a\x00 b \x00me@x.org\x00\x0013812345678\x00c\x00d\x00e\x00f")
	f.Add(strings.Repeat("长", 81) + "\x00" + strings.Repeat("x", 79) + "  y")
	for _, c := range sensitiveCases {
		f.Add(c.q)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		list := strings.Split(joined, "\x00")
		for _, q := range list {
			if sensitive(q) && !sensitive("问 "+q+" 吗") {
				t.Fatalf("%q is sensitive, but not between words", q)
			}
		}
		out, broken := CleanQueries(list)
		if out == nil || len(out) > maxQueries {
			t.Fatalf("%d queries (nil %v)", len(out), out == nil)
		}
		for i, q := range out {
			switch {
			case q == "" || q != strings.TrimSpace(q):
				t.Fatalf("query %q empty or untrimmed", q)
			case utf8.RuneCountInString(q) > maxQueryRunes:
				t.Fatalf("query %q longer than %d runes", q, maxQueryRunes)
			case slices.Contains(out[:i], q):
				t.Fatalf("query %q repeated", q)
			case sensitive(q) && !cutFromClean(q, list):
				t.Fatalf("query %q sensitive", q)
			}
		}
		if broken == 0 && !slices.Equal(out, trimAll(list)) {
			t.Fatalf("list %q cleaned to %q with no rule reported", list, out)
		}
		if slices.ContainsFunc(out, sensitive) {
			return
		}
		again, rules := CleanQueries(out)
		if !slices.Equal(again, out) || rules != 0 {
			t.Fatalf("cleaning %q again gave %q, rules %05b", out, again, rules)
		}
	})
}

// trimAll returns list as a client receives it when no rule is broken:
// trimmed, with U+FFFD for bytes that are not UTF-8.
func trimAll(list []string) []string {
	out := make([]string, len(list))
	for i, q := range list {
		out[i] = strings.TrimSpace(string([]rune(q))) // []rune: U+FFFD per bad byte
	}
	return out
}

// cutFromClean reports whether q is the cut of a query of list that was
// longer than 80 runes and not sensitive.
func cutFromClean(q string, list []string) bool {
	for _, l := range list {
		l = strings.TrimSpace(string([]rune(l)))
		if utf8.RuneCountInString(l) > maxQueryRunes && strings.HasPrefix(l, q) && !sensitive(l) {
			return true
		}
	}
	return false
}
