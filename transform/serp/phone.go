package serp

// maxPhoneGroups bounds the digit groups of one phone number ("+33 1 23 45
// 67 89" has six).
const maxPhoneGroups = 6

// phoneRun is one run of digit groups that may be a phone number: groups
// of ASCII digits joined by exactly one separator each, as phone numbers
// are written (' ', '-', '.', or parentheses around a group).
type phoneRun struct {
	plus   bool // the run starts with '+': a country code follows
	n      int  // groups read; more than maxPhoneGroups is no phone number
	digits int  // digits in all groups
	// group[k] spans q[start[k]:end[k]]; paren[k] says it was in "( )".
	start, end [maxPhoneGroups]int
	paren      [maxPhoneGroups]bool
}

// phoneAt reports whether a phone number starts at q[i]: one run of digit
// groups, each joined to the next by a single ' ', '-' or '.' (a group may
// stand in parentheses), not glued to an ASCII word on either side, whose
// grouping is one that phone numbers are written in:
//
//	+86 138 1234 5678, +8613812345678, +1 (555) 123-4567   '+', a country code, 8–15 digits
//	0086 138 1234 5678, 0044 20 7946 0958                 "00" for '+
//	13812345678, 138-1234-5678, 138 1234 5678             mainland-China mobile 1[3-9]\d{9}
//	010-12345678, (0755) 1234567, 01012345678             a trunk-0 area code and a local number, 10–12 digits
//	020 7946 0958, 07700 900123                           (UK and alike)
//	(555) 123-4567, 555.123.4567, 1-800-555-0199          North American: [2-9]xx xxx xxxx
//	06 12 34 56 78                                        0 and four pairs (France and alike)
//
// Separate numbers are not one phone number, however many digits they
// add up to: "卧推 60 80 100 120 公斤", "HIIT 20 40 60 90 120 秒", "2023
// 2024 2025", "1 299 000" fit none of these groupings, and neither do
// dates (2024-01-15), times (10:30), versions (1.2.3.4), decimals,
// prices, a Unix time (1700000000) or an ISBN-13 (9787111213826). A bare
// run of 10–12 digits starting with 0 reads as a national number, except
// after "ISBN" (ISBN 0306406152). The grouping is not checked against
// numbering plans beyond this, so a made-up number in one of these shapes
// counts, and one written in another shape ("1234 5678") does not.
func phoneAt(q string, i int) bool {
	if i > 0 && (isWord(q[i-1]) || q[i-1] == '+' || q[i-1] == '.' && q[i] != '+') {
		return false // inside a word, "C++ 11", "1.5"
	}
	if q[i] == '(' && i > 0 && isDigit(q[i-1]) {
		return false
	}
	var r phoneRun
	end, ok := r.read(q, i)
	if !ok || end < len(q) && isWord(q[end]) {
		return false
	}
	if r.plus {
		// E.164: at most 15 digits; fewer than 8 is no whole number.
		return q[r.start[0]] != '0' && r.digits >= 8 && r.digits <= 15
	}
	if g := q[r.start[0]:r.end[0]]; len(g) > 2 && g[:2] == "00" && g[2] != '0' && !r.paren[0] {
		// 00 dials out as '+' does (0086 138 1234 5678).
		return r.digits-2 >= 8 && r.digits-2 <= 15
	}
	return r.national(q) && !afterISBN(q, i)
}

// read reads the run at q[i:] and returns the index after it; ok is false
// when what is there is no run of at most maxPhoneGroups groups.
func (r *phoneRun) read(q string, i int) (end int, ok bool) {
	if q[i] == '+' {
		r.plus = true
		i++
	}
	for {
		paren := i < len(q) && q[i] == '('
		if paren {
			i++
		}
		j := i
		for j < len(q) && isDigit(q[j]) {
			j++
		}
		if j == i || r.n == maxPhoneGroups {
			return 0, false
		}
		r.start[r.n], r.end[r.n], r.paren[r.n] = i, j, paren
		r.n++
		r.digits += j - i
		i = j
		if paren {
			if i == len(q) || q[i] != ')' {
				return 0, false
			}
			i++
			if i < len(q) && (isDigit(q[i]) || q[i] == '(') {
				continue // "(010)12345678"
			}
		}
		// One separator, then the next group.
		if i+1 < len(q) && (q[i] == ' ' || q[i] == '-' || q[i] == '.') && (isDigit(q[i+1]) || q[i+1] == '(') {
			i++
			continue
		}
		return i, true
	}
}

// national reports whether the run, with no '+', is grouped as one of the
// national forms phoneAt lists.
func (r *phoneRun) national(q string) bool {
	g := func(k int) string { return q[r.start[k]:r.end[k]] }
	l := func(k int) int { return r.end[k] - r.start[k] }
	for k := 1; k < r.n; k++ {
		if r.paren[k] {
			return false // only an area code stands in parentheses
		}
	}
	switch r.n {
	case 1:
		d := g(0)
		return isCNMobile(d) || d[0] == '0' && len(d) >= 10 && len(d) <= 12
	case 2: // trunk-0 area code, local number
		return g(0)[0] == '0' && l(0) >= 3 && l(0) <= 5 && l(1) >= 6 && l(1) <= 8 &&
			r.digits >= 10 && r.digits <= 12
	case 3:
		switch {
		case l(0) == 3 && l(1) == 4 && l(2) == 4 && isCNMobile(g(0)+g(1)+g(2)):
			return !r.paren[0]
		case isNANP(g(0), g(1), g(2)):
			return true
		}
		return g(0)[0] == '0' && l(0) >= 3 && l(0) <= 5 && l(1) >= 3 && l(1) <= 4 && l(2) >= 3 && l(2) <= 4 &&
			r.digits >= 10 && r.digits <= 11
	case 4: // 1-800-555-0199
		return g(0) == "1" && !r.paren[0] && isNANP(g(1), g(2), g(3))
	case 5: // 06 12 34 56 78
		if r.paren[0] || l(0) != 2 || g(0)[0] != '0' || g(0)[1] == '0' {
			return false
		}
		for k := 1; k < 5; k++ {
			if l(k) != 2 {
				return false
			}
		}
		return true
	}
	return false
}

// isCNMobile reports whether d is a mainland-China mobile number,
// 1[3-9]\d{9}.
func isCNMobile(d string) bool {
	return len(d) == 11 && d[0] == '1' && d[1] >= '3' && d[1] <= '9'
}

// isNANP reports whether the groups are a North American number: an area
// code of three digits not starting with 0 or 1, then three and four
// digits. The exchange is not checked the same way, since the numbers
// people write as examples ("(555) 123-4567") break that rule.
func isNANP(area, exchange, line string) bool {
	return len(area) == 3 && len(exchange) == 3 && len(line) == 4 && area[0] >= '2'
}

// afterISBN reports whether the run at q[i] follows "ISBN" (any case),
// "ISBN-10" or "ISBN-13", with spaces or a colon between.
func afterISBN(q string, i int) bool {
	j := i
	for j > 0 && (q[j-1] == ' ' || q[j-1] == ':') {
		j--
	}
	if j >= 3 && (q[j-3:j] == "-10" || q[j-3:j] == "-13") {
		j -= 3
	}
	return j >= 4 && foldASCII(q[j-4:j]) == "isbn" && (j == 4 || !isWord(q[j-5]))
}

// foldASCII returns s with its ASCII letters in lower case.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
