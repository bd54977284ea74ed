// Package serp cleans the search queries a reply carries (the thinkingml
// serp_queries comment, the jsonl serp_queries event) by the rules of
// specs/000 §4: at most five, no duplicates, at most 80 characters each,
// none holding an e-mail address, a phone number, an IP address or a
// street address. Every
// format reports a cleaned list the same way (EmitQueries).
package serp
