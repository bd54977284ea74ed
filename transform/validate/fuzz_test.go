package validate

import (
	"testing"

	"github.com/llmstream/llmstream/transform/request"
)

// FuzzTools checks any client schema against any arguments, and reads any
// tool result for a failure: no panic, a failure of a known code and
// severity, the same verdict on a second call (the compiled schema is
// reused), and a detail for every failure.
func FuzzTools(f *testing.F) {
	f.Add([]byte(weather), []byte(`{"city":"x","where":{"lat":"n"}}`), []byte(`"Error: no"`))
	f.Add([]byte(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`), []byte(`{}`), []byte(`{"ok":false}`))
	f.Add([]byte(`{"type":"string","pattern":"(a+)+$"}`), []byte(`"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"`), []byte(`[{"type":"text","text":"ok"}]`))
	f.Add([]byte(`true`), []byte(`1e999`), []byte(`null`))
	f.Fuzz(func(t *testing.T, schema, args, result []byte) {
		tools := NewTools(nil, []request.ToolDef{{Name: "t", Parameters: schema}})
		first, failed := tools.Check(0, "t", args)
		again, failedAgain := tools.Check(0, "t", args)
		if failed != failedAgain || first != again {
			t.Fatalf("two checks differ: %+v %v, %+v %v", first, failed, again, failedAgain)
		}
		if failed {
			switch {
			case first.Code == CodeToolArgsInvalid && first.Severity == Hard:
			case first.Code == CodeToolSchemaUnusable && first.Severity == Notice:
			default:
				t.Fatalf("unexpected failure %+v", first)
			}
			if first.Detail == "" || first.Code == CodeToolArgsInvalid && first.Correction == "" {
				t.Fatalf("failure without detail or correction: %+v", first)
			}
		}
		_ = ReportsFailure(request.LoopResult{Content: validJSONOr(result), Message: validJSONOr(result)})
	})
}

// validJSONOr returns b when it is JSON (as the request's values are),
// else a JSON string.
func validJSONOr(b []byte) []byte {
	in, err := request.Inspect([]byte(`{"messages":[{"role":"tool","content":` + string(b) + `}]}`))
	if err != nil || len(in.Loop.Results) != 1 {
		return []byte(`"x"`)
	}
	return in.Loop.Results[0].Content
}
