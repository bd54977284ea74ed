package agent

import (
	"bytes"
	"encoding/json"
)

// AddUsage returns the usage objects sum and add summed, in sum's buffer:
// every number of add is added to the number at the same path of sum
// (prompt_tokens, completion_tokens, total_tokens, and the counts inside
// prompt_tokens_details and completion_tokens_details), and members only
// one has are kept (CONTRACT.md §12: one lifecycle per client turn, usage
// summed over its rounds). An empty sum gives add; an add that is not a
// JSON object gives sum unchanged. It runs once per round, not per delta.
func AddUsage(sum, add []byte) []byte {
	if len(bytes.TrimSpace(add)) == 0 {
		return sum
	}
	if len(bytes.TrimSpace(sum)) == 0 {
		return append(sum[:0], add...)
	}
	a, ok := decodeObject(sum)
	if !ok {
		return append(sum[:0], add...)
	}
	b, ok := decodeObject(add)
	if !ok {
		return sum
	}
	out, err := json.Marshal(addObjects(a, b))
	if err != nil {
		return sum
	}
	return append(sum[:0], out...)
}

// decodeObject decodes a JSON object whose numbers stay json.Numbers, so
// that integers are written back as integers.
func decodeObject(b []byte) (map[string]any, bool) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return m, d.Decode(&m) == nil && m != nil
}

// addObjects adds b into a.
func addObjects(a, b map[string]any) map[string]any {
	if a == nil {
		a = map[string]any{}
	}
	for k, bv := range b {
		av, ok := a[k]
		if !ok {
			a[k] = bv
			continue
		}
		switch bv := bv.(type) {
		case json.Number:
			if an, ok := av.(json.Number); ok {
				a[k] = addNumbers(an, bv)
			}
		case map[string]any:
			if am, ok := av.(map[string]any); ok {
				a[k] = addObjects(am, bv)
			}
		}
	}
	return a
}

// addNumbers adds two JSON numbers, as integers when both are.
func addNumbers(a, b json.Number) json.Number {
	if ai, err := a.Int64(); err == nil {
		if bi, err := b.Int64(); err == nil {
			out, _ := json.Marshal(ai + bi)
			return json.Number(out)
		}
	}
	af, _ := a.Float64()
	bf, _ := b.Float64()
	out, _ := json.Marshal(af + bf)
	return json.Number(out)
}
