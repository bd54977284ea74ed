package validate

import (
	"testing"

	"github.com/llmstream/llmstream/transform/request"
)

// BenchmarkCheck checks one tool call's arguments against a schema
// compiled at provision (a configured tool).
func BenchmarkCheck(b *testing.B) {
	route, err := Compile([]request.ToolDef{{Name: "get_weather", Parameters: []byte(weather)}})
	if err != nil {
		b.Fatal(err)
	}
	tools := NewTools(route, nil)
	args := []byte(`{"city":"Paris","unit":"c","days":3,"where":{"lat":48.8,"tags":["a","b"]}}`)
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for range b.N {
		if _, failed := tools.Check(0, "get_weather", args); failed {
			b.Fatal("failed")
		}
	}
}

// BenchmarkClientSchema is one request's first call of a client tool: the
// request's tools read, the schema compiled, the call checked.
func BenchmarkClientSchema(b *testing.B) {
	body := []byte(`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":` + weather + `}}]}`)
	args := []byte(`{"city":"Paris","unit":"c"}`)
	b.ReportAllocs()
	for range b.N {
		in, err := request.Inspect(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, failed := NewTools(nil, in.Tools).Check(0, "get_weather", args); failed {
			b.Fatal("failed")
		}
	}
}
