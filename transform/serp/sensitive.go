package serp

// sensitive reports whether query q holds an e-mail address, a phone
// number, an IP address or a street address, which specs/000 §4 keeps out
// of serp queries ("不包含敏感信息（邮箱/手机号/IP/住址等）", specs/001 §1.1
// for jsonl) — and nothing else: a query is the model's suggestion for
// the user, and dropping an ordinary one (issue 9: "C++ std::vector 用法",
// "卧推 60 80 100 120 公斤") loses it.
//
// Each detector recognises one thing as written in real text, and decides
// the borderline cases in its own file: emailAt (email.go), phoneAt
// (phone.go), ipv4At and hasIPv6 (ipaddr.go), hasAddress (address.go).
// Each byte is looked at a bounded number of times, so a long query costs
// linear time. Only ASCII digits count as digits; full-width digits
// (１３８…) are not recognised. MAC addresses, names and ID card numbers
// are not in the spec's list and are not looked for.
func sensitive(q string) bool {
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '@':
			if emailAt(q, i) {
				return true
			}
		case c == '+' || c == '(' || isDigit(c):
			if phoneAt(q, i) || ipv4At(q, i) {
				return true
			}
		}
	}
	return hasIPv6(q) || hasAddress(q)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isAlnum(c byte) bool { return isDigit(c) || isLetter(c) }

// isWord reports whether c continues an identifier or a word written in
// ASCII: a number glued to one (v1.2.3.4, SKU13812345678, 120kg) is part
// of it, not an address or a phone number. CJK text around a number is no
// such glue: "电话13812345678" holds a phone number.
func isWord(c byte) bool { return isAlnum(c) || c == '_' }
