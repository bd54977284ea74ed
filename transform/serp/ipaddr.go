package serp

import "net/netip"

// ipv4At reports whether an IPv4 address starts at q[i]: a dotted quad of
// decimal octets 0–255 (leading zeros allowed, as people write them:
// 192.168.001.001), standing on its own. A full stop after it ends a
// sentence; a port (:8080) or a prefix length (/24) may follow.
//
// Not addresses: a quad glued to a word or a version mark ("v1.2.3.4",
// "abc1.2.3.4", "1.2.3.4-beta", "1.2.3.4+build"), a longer dotted run
// ("1.2.3.4.5", an OID or a version), octets over 255 ("Chrome
// 120.0.6099.109", "300.1.1.1"), fewer parts ("版本 1.2.3", dates as
// 2024.01.15). A bare quad of valid octets is taken for an address even
// when a version was meant ("版本 1.2.3.4"): the two cannot be told apart,
// and specs/000 §4 drops the query rather than risk an address.
func ipv4At(q string, i int) bool {
	if i > 0 && (isWord(q[i-1]) || q[i-1] == '.') {
		return false
	}
	end := i
	for end < len(q) && (isDigit(q[end]) || q[end] == '.') {
		end++
	}
	if end < len(q) {
		c := q[end]
		next := byte(0)
		if end+1 < len(q) {
			next = q[end+1]
		}
		if isWord(c) || c == '-' && isLetter(next) || c == '+' && isAlnum(next) {
			return false
		}
	}
	run := q[i:end]
	for len(run) > 0 && run[len(run)-1] == '.' {
		run = run[:len(run)-1]
	}
	parts := 0
	for len(run) > 0 {
		part := run
		if dot := indexByte(run, '.'); dot >= 0 {
			part, run = run[:dot], run[dot+1:]
		} else {
			run = ""
		}
		if len(part) == 0 || len(part) > 3 || atoi3(part) > 255 {
			return false
		}
		parts++
	}
	return parts == 4
}

// atoi3 returns the value of s, one to three decimal digits.
func atoi3(s string) int {
	n := 0
	for i := range len(s) {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// hasIPv6 reports whether q holds an IPv6 address, recognised only as a
// whole token: a maximal run of letters, digits and ":._%" (so that an
// identifier around "::" is one token) that netip parses as IPv6, zone and
// embedded IPv4 included, with a trailing full stop dropped.
//
// Not addresses: "::" inside an identifier ("C++ std::vector 用法",
// "Foo::Bar", Rust's "std::io") is no valid address; "A::B", "dead::beef"
// are, but hold no decimal digit, which every address written in practice
// has; Python slices ("a[::2]", "a[1::2]") are valid too, so a short form
// counts only with a group of three hex digits or more ("fe80::1",
// "2001:db8::1", "::ffff:1.2.3.4"), four groups or more, or as the
// loopback "::1". Times (10:30:00) and MAC addresses (00:1A:2B:3C:4D:5E)
// are not IPv6.
func hasIPv6(q string) bool {
	for i := 0; i < len(q); {
		if !isIPv6TokenByte(q[i]) {
			i++
			continue
		}
		start := i
		colons := 0
		for i < len(q) && isIPv6TokenByte(q[i]) {
			if q[i] == ':' {
				colons++
			}
			i++
		}
		if colons >= 2 && isIPv6(q[start:i]) {
			return true
		}
	}
	return false
}

func isIPv6TokenByte(c byte) bool {
	return isWord(c) || c == ':' || c == '.' || c == '%'
}

// isIPv6 reports whether tok is an IPv6 address as hasIPv6 counts them.
func isIPv6(tok string) bool {
	for len(tok) > 0 && tok[len(tok)-1] == '.' {
		tok = tok[:len(tok)-1]
	}
	a, err := netip.ParseAddr(tok)
	if err != nil || !a.Is6() {
		return false
	}
	addr := tok
	if pct := indexByte(addr, '%'); pct >= 0 {
		addr = addr[:pct]
	}
	digit, groups, long := false, 0, false
	for len(addr) > 0 {
		g := addr
		if c := indexByte(addr, ':'); c >= 0 {
			g, addr = addr[:c], addr[c+1:]
		} else {
			addr = ""
		}
		if g == "" {
			continue
		}
		groups++
		long = long || len(g) >= 3
		for i := range len(g) {
			digit = digit || isDigit(g[i])
		}
	}
	return digit && (long || groups >= 4 || tok == "::1")
}
