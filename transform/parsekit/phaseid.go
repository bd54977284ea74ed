package parsekit

// maxPhaseIDDigits bounds a phase id, so that it fits an int everywhere.
const maxPhaseIDDigits = 9

// ParsePhaseID parses a phase id as the phased formats write it: the id
// attribute of a ThinkingML <phase> (specs/000 §3) and the id of a jsonl
// phase_start or phase_delta (specs/001 §6.2). An id is a positive decimal
// integer of at most 9 digits, so that it fits an int everywhere; ok is
// false for anything else ("", "0", "+1", "1a", ten digits).
func ParsePhaseID(b []byte) (id int, ok bool) {
	if len(b) == 0 || len(b) > maxPhaseIDDigits {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		id = id*10 + int(c-'0')
	}
	if id == 0 {
		return 0, false
	}
	return id, true
}
