package serp

import "net/netip"

// sensitive reports whether query q holds an e-mail address, a phone
// number or an IP address, which specs/000 §4 keeps out of serp queries
// ("不包含敏感信息"). The checks are heuristics tuned to avoid dropping
// ordinary queries: see emailAt, phoneAt and ipToken.
func sensitive(q string) bool {
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '@':
			if emailAt(q, i) {
				return true
			}
		case c >= '0' && c <= '9' || c == '+' || c == '(':
			if i > 0 && isDigit(q[i-1]) {
				continue // inside a number already looked at
			}
			if phoneAt(q, i) {
				return true
			}
		}
	}
	return hasIP(q)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }

// emailAt reports whether the '@' at q[at] joins a local part and a domain
// with a dot and an alphabetic top-level label of two letters or more.
func emailAt(q string, at int) bool {
	local := 0
	for i := at - 1; i >= 0 && (isAlnum(q[i]) || q[i] == '.' || q[i] == '_' || q[i] == '%' || q[i] == '+' || q[i] == '-'); i-- {
		local++
	}
	if local == 0 {
		return false
	}
	end := at + 1
	for end < len(q) && (isAlnum(q[end]) || q[end] == '.' || q[end] == '-') {
		end++
	}
	domain := q[at+1 : end]
	for len(domain) > 0 && domain[len(domain)-1] == '.' {
		domain = domain[:len(domain)-1] // a sentence's full stop
	}
	dot := -1
	for i := len(domain) - 1; i >= 0; i-- {
		if domain[i] == '.' {
			dot = i
			break
		}
	}
	if dot <= 0 || len(domain)-dot-1 < 2 {
		return false
	}
	for _, c := range []byte(domain[dot+1:]) {
		if c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return true
}

// phoneAt reports whether a phone number starts at q[i]: digit groups
// joined by at most two of " -()", optionally after '+', holding 10 to 15
// digits (CN mobile 13812345678, 138-1234-5678, +86 138 1234 5678,
// 010-12345678, (555) 123-4567), or 7 to 15 after a '+'. Runs made only of
// four-digit years ("2023 2024 2025") are not phone numbers.
func phoneAt(q string, i int) bool {
	plus := q[i] == '+'
	if plus {
		i++
	}
	digits, groups, years := 0, 0, 0
	for i < len(q) {
		start := i
		for i < len(q) && isDigit(q[i]) {
			i++
		}
		if n := i - start; n > 0 {
			digits += n
			groups++
			if n == 4 && (q[start:start+2] == "19" || q[start:start+2] == "20") {
				years++
			}
		}
		sep := 0
		for i < len(q) && sep <= 2 && (q[i] == ' ' || q[i] == '-' || q[i] == '(' || q[i] == ')') {
			i++
			sep++
		}
		if sep == 0 || sep > 2 || i == len(q) || !isDigit(q[i]) {
			break
		}
	}
	if digits > 15 || groups > 0 && years == groups {
		return false
	}
	return digits >= 10 || plus && digits >= 7
}

// hasIP reports whether q holds an IPv4 address (four dotted decimals) or
// an IPv6 address (two colons or more), each a maximal run of hex digits,
// dots and colons.
func hasIP(q string) bool {
	for i := 0; i < len(q); {
		if !isIPByte(q[i]) {
			i++
			continue
		}
		start := i
		dots, colons := 0, 0
		for i < len(q) && isIPByte(q[i]) {
			switch q[i] {
			case '.':
				dots++
			case ':':
				colons++
			}
			i++
		}
		tok := q[start:i]
		for len(tok) > 0 && (tok[len(tok)-1] == '.' || tok[len(tok)-1] == ':' && len(tok) > 1 && tok[len(tok)-2] != ':') {
			tok = tok[:len(tok)-1] // punctuation ending a sentence
		}
		if colons == 0 {
			// Letters glued before a dotted quad ("ip:a1.2.3.4" aside,
			// "abc1.2.3.4") are not part of it.
			for len(tok) > 0 && !isDigit(tok[0]) {
				tok = tok[1:]
			}
		}
		if dots >= 3 || colons >= 2 {
			if a, err := netip.ParseAddr(tok); err == nil && (a.Is4() || a.Is6()) {
				return true
			}
		}
	}
	return false
}

func isIPByte(c byte) bool {
	return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' || c == '.' || c == ':'
}
