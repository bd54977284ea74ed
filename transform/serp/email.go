package serp

// emailAt reports whether the '@' at q[at] joins a local part and a domain
// into an e-mail address: a local part of [A-Za-z0-9._%+-] holding a
// letter or digit, and a domain of dot-separated labels of [A-Za-z0-9-]
// (none empty, none starting or ending with '-') whose last label, the
// top-level domain, is two letters or more. A full stop ending a sentence
// is not part of the domain.
//
// Not addresses: "@mention", "a@b" and "user@localhost" (no top-level
// domain), package versions ("react@18.2.0", "pkg@1.0.0-beta.2": the last
// label is not letters), scoped packages ("@babel/core"), and git's SSH
// user ("git@github.com:owner/repo", "git@gitlab.com"): the local part git
// names no mailbox, and such queries are about setting up a repository.
// Addresses in non-ASCII script (张三@例子.中国) are not recognised.
func emailAt(q string, at int) bool {
	start, alnum := at, false
	for start > 0 && isLocalByte(q[start-1]) {
		start--
		alnum = alnum || isAlnum(q[start])
	}
	if !alnum || q[start:at] == "git" {
		return false
	}
	end := at + 1
	for end < len(q) && (isAlnum(q[end]) || q[end] == '.' || q[end] == '-') {
		end++
	}
	domain := q[at+1 : end]
	for len(domain) > 0 && domain[len(domain)-1] == '.' {
		domain = domain[:len(domain)-1]
	}
	labels, tld := 0, ""
	for len(domain) > 0 {
		label := domain
		dot := indexByte(domain, '.')
		if dot >= 0 {
			label, domain = domain[:dot], domain[dot+1:]
		} else {
			domain = ""
		}
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		labels++
		tld = label
	}
	if labels < 2 || len(tld) < 2 {
		return false
	}
	for i := range len(tld) {
		if !isLetter(tld[i]) {
			return false
		}
	}
	return true
}

func isLocalByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// indexByte is strings.IndexByte, kept local so that the detectors read
// as one piece.
func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}
