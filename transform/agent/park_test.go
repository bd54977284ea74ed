package agent

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/llmstream/llmstream/transform"
)

// TestElicitation: what an MCP elicitation's schema becomes (CONTRACT.md
// §13): one property with options (enum, titled oneOf, legacy enumNames, a
// boolean) is a choice, no property a confirmation, several a form in the
// server's order; a schema llmstream cannot show is refused.
func TestElicitation(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		kind     transform.AwaitKind
		options  []string // ids, for a choice
		labels   []string
		question []string // ids, for a form
		ok       bool
	}{
		{"enum", `{"type":"object","properties":{"plan":{"type":"string","title":"方案","enum":["a","b"]}},"required":["plan"]}`,
			transform.AwaitChoice, []string{"a", "b"}, []string{"a", "b"}, nil, true},
		{"titled oneOf", `{"type":"object","properties":{"hero":{"type":"string","oneOf":[{"const":"h1","title":"Superman"},{"const":"h2","title":"Batman"}]}}}`,
			transform.AwaitChoice, []string{"h1", "h2"}, []string{"Superman", "Batman"}, nil, true},
		{"legacy enumNames", `{"type":"object","properties":{"pet":{"type":"string","enum":["p1","p2"],"enumNames":["Cats","Dogs"]}}}`,
			transform.AwaitChoice, []string{"p1", "p2"}, []string{"Cats", "Dogs"}, nil, true},
		{"boolean", `{"type":"object","properties":{"ok":{"type":"boolean","title":"Go on?"}}}`,
			transform.AwaitChoice, []string{"true", "false"}, []string{"是", "否"}, nil, true},
		{"confirmation", `{"type":"object","properties":{}}`,
			transform.AwaitChoice, []string{"accept", "decline"}, []string{"确认", "拒绝"}, nil, true},
		{"no schema", ``, transform.AwaitChoice, []string{"accept", "decline"}, []string{"确认", "拒绝"}, nil, true},
		{"form, in the server's order", `{"type":"object","properties":{"zname":{"type":"string"},"age":{"type":"integer"},"color":{"type":"string","enum":["red","blue"]}},"required":["zname"]}`,
			transform.AwaitForm, nil, nil, []string{"zname", "age", "color"}, true},
		{"one free-text field is a form", `{"type":"object","properties":{"name":{"type":"string"}}}`,
			transform.AwaitForm, nil, nil, []string{"name"}, true},
		{"multi-select is a form", `{"type":"object","properties":{"f":{"type":"array","items":{"enum":["a","b"]}}}}`,
			transform.AwaitForm, nil, nil, []string{"f"}, true},
		{"nested object refused", `{"type":"object","properties":{"o":{"type":"object"}}}`, 0, nil, nil, nil, false},
		{"not JSON refused", `{`, 0, nil, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := Elicitation("Pick one", []byte(tt.schema))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if p.Await.Kind != tt.kind {
				t.Fatalf("kind = %d, want %d", p.Await.Kind, tt.kind)
			}
			var ids, labels, qs []string
			for _, o := range p.Await.Options {
				ids, labels = append(ids, o.ID), append(labels, o.Label)
			}
			for _, q := range p.Await.Questions {
				qs = append(qs, q.ID)
			}
			if !equal(ids, tt.options) || !equal(labels, tt.labels) || !equal(qs, tt.question) {
				t.Errorf("options %v %v, questions %v; want %v %v, %v", ids, labels, qs, tt.options, tt.labels, tt.question)
			}
			if p.Resume.Mode != ResumeRetry || p.Await.Message != "Pick one" {
				t.Errorf("resume %q, message %q", p.Resume.Mode, p.Await.Message)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestContent: the elicitation result an answer makes, with the values
// the schema gave (a number stays a number), and answers that do not fit
// refused.
func TestContent(t *testing.T) {
	choice, _ := Elicitation("", []byte(`{"type":"object","properties":{"n":{"type":"integer","enum":[1,2]}}}`))
	confirm, _ := Elicitation("Sure?", nil)
	form, _ := Elicitation("", []byte(`{"type":"object","properties":{"name":{"type":"string","title":"名字"},"age":{"type":"integer","title":"年龄"},`+
		`"ok":{"type":"boolean","title":"同意"},"pet":{"type":"string","title":"宠物","enum":["p1","p2"],"enumNames":["猫","狗"]},`+
		`"tools":{"type":"array","title":"乐器","items":{"enum":["g","p"]}}},"required":["name"]}`))
	tests := []struct {
		name    string
		p       Park
		a       Answer
		action  string
		content string
		err     bool
	}{
		{"choice", choice, Answer{OptionID: "2"}, "accept", `{"n":2}`, false},
		{"choice: unknown option", choice, Answer{OptionID: "3"}, "", "", true},
		{"confirmation accepted", confirm, Answer{OptionID: "accept"}, "accept", `{}`, false},
		{"confirmation declined", confirm, Answer{OptionID: "decline"}, "decline", "", false},
		{"form", form, Answer{Text: "名字：叶无锋\n年龄：18\n同意：是\n宠物：狗\n乐器：g、p"}, "accept",
			`{"age":18,"name":"叶无锋","ok":true,"pet":"p2","tools":["g","p"]}`, false},
		{"form: optional left out, ASCII colon", form, Answer{Text: "名字: A"}, "accept", `{"name":"A"}`, false},
		{"form: required missing", form, Answer{Text: "年龄：3"}, "", "", true},
		{"form: not an integer", form, Answer{Text: "名字：A\n年龄：3.5"}, "", "", true},
		{"form: not an option", form, Answer{Text: "名字：A\n宠物：鱼"}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			action, content, err := tt.p.Content(tt.a)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if err != nil {
				if !errors.Is(err, ErrBadAnswer) {
					t.Errorf("error %v is not ErrBadAnswer", err)
				}
				return
			}
			if action != tt.action || string(content) != tt.content {
				t.Errorf("got %s %s, want %s %s", action, content, tt.action, tt.content)
			}
		})
	}
}

// TestParkRoundTrip: a park survives its JSON (the parked round's record
// in the store).
func TestParkRoundTrip(t *testing.T) {
	p, _ := Elicitation("Pick", []byte(`{"type":"object","properties":{"x":{"type":"string","enum":["a","b"]}}}`))
	p.Resume.RequestState, p.Resume.InputID = "st", "in1"
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Park
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if _, c, err := q.Content(Answer{OptionID: "b"}); err != nil || string(c) != `{"x":"b"}` || q.Resume.RequestState != "st" {
		t.Errorf("after the round trip: %s %v %+v", c, err, q.Resume)
	}
}

// FuzzElicitation: whatever schema a server sends, reading it never
// panics, and every option it offers is an answer its Content accepts.
func FuzzElicitation(f *testing.F) {
	f.Add("m", []byte(`{"type":"object","properties":{"a":{"type":"string","enum":["x",1,null,{"k":2}]}}}`))
	f.Add("m", []byte(`{"properties":{"b":{"type":"boolean"},"c":{"type":"array","items":{"anyOf":[{"const":"z"}]}}},"required":["b"]}`))
	f.Add("", []byte(`{"properties":{"a":{},"a":{"type":"number"}}}`))
	f.Fuzz(func(t *testing.T, msg string, schema []byte) {
		p, ok := Elicitation(msg, schema)
		if !ok {
			return
		}
		if p.Await.Kind == transform.AwaitChoice {
			for _, o := range p.Await.Options {
				action, content, err := p.Content(Answer{OptionID: o.ID})
				if err != nil {
					t.Fatalf("option %q refused: %v", o.ID, err)
				}
				if action == ActionAccept && !json.Valid(content) {
					t.Fatalf("content %q is not JSON", content)
				}
			}
		}
		_, _, _ = p.Content(Answer{Text: msg})
	})
}

// TestJSONResource: an embedded JSON resource is structured data named by
// its URI (specs/002 §3.8), anything else is not.
func TestJSONResource(t *testing.T) {
	for _, tt := range []struct {
		p    Part
		name string
		ok   bool
	}{
		{Part{Kind: PartResource, URI: "skillpet://characters", MIMEType: "application/json", Text: `[1]`}, "characters", true},
		{Part{Kind: PartResource, URI: "demo://story/plan.json", MIMEType: "application/vnd.x+json; charset=utf-8", Text: `{"a":1}`}, "plan", true},
		{Part{Kind: PartResource, URI: "x", MIMEType: "application/json", Text: `{`}, "", false},
		{Part{Kind: PartResource, URI: "x", MIMEType: "text/plain", Text: `{}`}, "", false},
		{Part{Kind: PartResourceLink, URI: "x", MIMEType: "application/json"}, "", false},
	} {
		name, ok := JSONResource(tt.p)
		if name != tt.name || ok != tt.ok {
			t.Errorf("%+v: %q %v, want %q %v", tt.p, name, ok, tt.name, tt.ok)
		}
	}
	arts := Artifacts("", Result{Parts: []Part{{Kind: PartResource, URI: "skillpet://characters", MIMEType: "application/json", Text: `[1]`}}})
	if len(arts) != 1 || arts[0].Kind != "resource" || IsArtifactEvent(arts[0]) {
		t.Errorf("artifacts %+v", arts)
	}
}
