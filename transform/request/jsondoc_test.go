package request

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestJSONDocScan(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// want are the raw elements of the top-level array, or the raw
		// "key:value" members of the top-level object.
		want []string
	}{
		{"backslash_runs", `["a\\", "b\\\"c", "\\\\\"", ""]`, []string{`"a\\"`, `"b\\\"c"`, `"\\\\\""`, `""`}},
		{"nested", "[ {\"a\":[1,{\"b\":\"]}\"}]} ,[[]],\t{} ]", []string{`{"a":[1,{"b":"]}"}]}`, `[[]]`, `{}`}},
		{"scalars", `[1.0e+2,-0,true,false,null,"x"]`, []string{`1.0e+2`, `-0`, `true`, `false`, `null`, `"x"`}},
		{"empty_array", "[ \n ]", nil},
		{"members", "{ \"a\" : 1 , \"b\\\"\":{\"c\":[\"}\"]},\"\":\"\"}", []string{`"a":1`, `"b\"":{"c":["}"]}`, `"":""`}},
		{"empty_object", "{\t}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.doc)) {
				t.Fatalf("test document is not valid JSON")
			}
			d := jsonDoc(tt.doc)
			root := d.root()
			var got []string
			d.elements(root, func(v span) bool { got = append(got, string(d[v.start:v.end])); return true })
			d.members(root, func(k, v span) bool {
				got = append(got, string(d[k.start:k.end])+":"+string(d[v.start:v.end]))
				return true
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("scan = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJSONDocMember(t *testing.T) {
	d := jsonDoc(`{"role":"user","r\u006fle":"sys\u0074em","n":1,"s":"a\"b"}`)
	root := d.root()
	if !d.stringIs(d.member(root, "role"), "system") {
		t.Errorf("member(role) is not the last, unescaped \"system\"")
	}
	if got := d.memberStr(root, "s"); got != `a"b` {
		t.Errorf("memberStr(s) = %q", got)
	}
	if got := d.memberStr(root, "n"); got != "" {
		t.Errorf("memberStr of a number = %q, want \"\"", got)
	}
	if d.member(root, "absent").exists() {
		t.Errorf("member(absent) exists")
	}
}
