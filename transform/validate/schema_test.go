package validate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/request"
)

// weather is a schema with required fields, types, an enum, a nested
// object and a $ref.
const weather = `{
	"type": "object",
	"properties": {
		"city": {"type": "string"},
		"unit": {"enum": ["c", "f"]},
		"days": {"type": "integer", "minimum": 1},
		"where": {"$ref": "#/$defs/point"}
	},
	"required": ["city"],
	"additionalProperties": false,
	"$defs": {"point": {"type": "object", "properties": {"lat": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["lat"]}}
}`

func TestToolsCheck(t *testing.T) {
	defs := []request.ToolDef{
		{Name: "get_weather", Parameters: []byte(weather)},
		{Name: "anything"}, // no schema
		{Name: "legacy_draft", Parameters: []byte(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["q"],"definitions":{"s":{"type":"string"}},"properties":{"q":{"$ref":"#/definitions/s"}}}`)},
	}
	tools := NewTools(nil, defs)
	tests := []struct {
		name, tool, args string
		code             string // "" passes
		detail           string // in the failure's detail
	}{
		{"valid", "get_weather", `{"city":"Paris","unit":"c","days":3,"where":{"lat":48.8,"tags":["a"]}}`, "", ""},
		{"required", "get_weather", `{"unit":"c"}`, CodeToolArgsInvalid, "at the top level: missing property 'city'"},
		{"type", "get_weather", `{"city":1}`, CodeToolArgsInvalid, "at /city: got number, want string"},
		{"enum", "get_weather", `{"city":"x","unit":"k"}`, CodeToolArgsInvalid, "at /unit: value must be one of 'c', 'f'"},
		{"integer", "get_weather", `{"city":"x","days":1.5}`, CodeToolArgsInvalid, "at /days: got number, want integer"},
		{"minimum", "get_weather", `{"city":"x","days":0}`, CodeToolArgsInvalid, "at /days: minimum"},
		{"additional", "get_weather", `{"city":"x","zip":"1"}`, CodeToolArgsInvalid, "at the top level: additional properties 'zip' not allowed"},
		{"nested_ref", "get_weather", `{"city":"x","where":{"lat":"north"}}`, CodeToolArgsInvalid, "at /where/lat: got string, want number"},
		{"nested_required", "get_weather", `{"city":"x","where":{}}`, CodeToolArgsInvalid, "at /where: missing property 'lat'"},
		{"array_item", "get_weather", `{"city":"x","where":{"lat":1,"tags":["a",2]}}`, CodeToolArgsInvalid, "at /where/tags/1: got number, want string"},
		{"several", "get_weather", `{"city":1,"unit":"k"}`, CodeToolArgsInvalid, "at /city: got number, want string; at /unit:"},
		{"not_json", "get_weather", `{"city":`, CodeToolArgsInvalid, "the arguments are not valid JSON"},
		{"trailing_text", "get_weather", `{"city":"x"} and more`, CodeToolArgsInvalid, "not valid JSON"},
		{"not_object", "get_weather", `"Paris"`, CodeToolArgsInvalid, "got string, want object"},
		{"no_schema_accepts_anything", "anything", `[1,"two",{"three":null}]`, "", ""},
		{"no_schema_still_needs_json", "anything", `{oops}`, CodeToolArgsInvalid, "not valid JSON"},
		{"draft07_definitions_ref", "legacy_draft", `{"q":3}`, CodeToolArgsInvalid, "at /q: got number, want string"},
		{"unknown", "get_wether", `{}`, CodeUnknownTool, `tool "get_wether" is not among the request's tools`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, failed := tools.Check(7, tt.tool, []byte(tt.args))
			if tt.code == "" {
				if failed {
					t.Fatalf("Check failed: %+v", f)
				}
				return
			}
			if !failed || f.Code != tt.code || f.Severity != Hard || f.Call != 7 {
				t.Fatalf("Check = %+v, %v; want a hard %s of call 7", f, failed, tt.code)
			}
			if !strings.Contains(f.Detail, tt.detail) {
				t.Errorf("detail %q does not contain %q", f.Detail, tt.detail)
			}
			if !strings.Contains(f.Correction, strconv.Quote(tt.tool)) {
				t.Errorf("correction %q does not name the tool", f.Correction)
			}
		})
	}
}

// TestToolsConfiguredWin checks that a configured tool's schema, compiled
// once, is used for its name even though the request also lists it (the
// shaper replaced the client's tool of that name).
func TestToolsConfiguredWin(t *testing.T) {
	route, err := Compile([]request.ToolDef{{Name: "ask", Parameters: []byte(`{"type":"object","required":["q"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	tools := NewTools(route, []request.ToolDef{{Name: "ask", Parameters: []byte(`{}`)}, {Name: "other"}})
	if f, failed := tools.Check(0, "ask", []byte(`{}`)); !failed || f.Code != CodeToolArgsInvalid {
		t.Errorf("Check(ask) = %+v, %v; want the configured schema's tool_args_invalid", f, failed)
	}
	if _, failed := tools.Check(0, "other", []byte(`{}`)); failed {
		t.Errorf("Check(other) failed")
	}
	f, _ := tools.Check(0, "nope", []byte(`{}`))
	if !strings.Contains(f.Correction, "other, ask") {
		t.Errorf("correction %q does not list the declared tools", f.Correction)
	}
}

func TestToolsNoneDeclared(t *testing.T) {
	tools := NewTools(nil, nil)
	if tools.Declared() {
		t.Error("Declared() with no tools")
	}
	f, failed := tools.Check(0, "x", []byte(`{}`))
	if !failed || f.Code != CodeUnknownTool || !strings.Contains(f.Correction, "no tools are available") {
		t.Errorf("Check = %+v, %v", f, failed)
	}
}

// TestClientSchemaUnusable: a client schema that cannot be used leaves its
// tool's arguments unchecked, with a notice, never a retry.
func TestClientSchemaUnusable(t *testing.T) {
	big := `{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`
	tests := []struct{ name, schema, detail string }{
		{"invalid_type", `{"type":"foo"}`, "is not valid against metaschema"},
		{"file_ref", `{"$ref":"file:///etc/passwd"}`, "file:///etc/passwd"},
		{"http_ref", `{"$ref":"https://example.com/s.json"}`, "https://example.com/s.json"},
		{"too_large", big, "over"},
		{"bad_regexp", `{"type":"string","pattern":"("}`, "pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := NewTools(nil, []request.ToolDef{{Name: "t", Parameters: []byte(tt.schema)}})
			f, failed := tools.Check(2, "t", []byte(`{"any":1}`))
			if !failed || f.Code != CodeToolSchemaUnusable || f.Severity != Notice || f.Retried() {
				t.Fatalf("Check = %+v, %v; want a tool_schema_unusable notice", f, failed)
			}
			if !strings.Contains(f.Detail, tt.detail) {
				t.Errorf("detail %q does not contain %q", f.Detail, tt.detail)
			}
			if strings.Contains(f.Detail, "root") && strings.Contains(f.Detail, "passwd:") {
				t.Errorf("the detail shows a file's content: %q", f.Detail)
			}
		})
	}
}

// TestClientSchemasBounded: at most MaxSchemasPerRequest client schemas
// are compiled for one request; each is compiled once.
func TestClientSchemasBounded(t *testing.T) {
	var defs []request.ToolDef
	for i := range MaxSchemasPerRequest + 2 {
		defs = append(defs, request.ToolDef{Name: "t" + strconv.Itoa(i), Parameters: []byte(`{"type":"object"}`)})
	}
	tools := NewTools(nil, defs)
	for range 3 { // repeated calls reuse the compiled schemas
		for i := range MaxSchemasPerRequest {
			if f, failed := tools.Check(i, "t"+strconv.Itoa(i), []byte(`[]`)); !failed || f.Code != CodeToolArgsInvalid {
				t.Fatalf("t%d: %+v, %v", i, f, failed)
			}
		}
	}
	f, failed := tools.Check(0, "t"+strconv.Itoa(MaxSchemasPerRequest), []byte(`[]`))
	if !failed || f.Code != CodeToolSchemaUnusable || !strings.Contains(f.Detail, "more than") {
		t.Errorf("schema beyond the limit: %+v, %v", f, failed)
	}
}

func TestCompileNamesTheTool(t *testing.T) {
	_, err := Compile([]request.ToolDef{{Name: "ok", Parameters: []byte(`{}`)}, {Name: "broken", Parameters: []byte(`{"type":7}`)}})
	if err == nil || !strings.Contains(err.Error(), `tool "broken": parameters:`) {
		t.Errorf("Compile error = %v", err)
	}
}

func TestPointer(t *testing.T) {
	for _, tt := range []struct {
		tokens []string
		want   string
	}{{nil, ""}, {[]string{"a", "0"}, "/a/0"}, {[]string{"a/b", "m~n"}, "/a~1b/m~0n"}} {
		if got := Pointer(tt.tokens); got != tt.want {
			t.Errorf("Pointer(%q) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
}
