package validate

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/llmstream/llmstream/transform/request"
)

// The limits on the client's tool schemas, which are compiled per request
// (and only those of the tools the model calls): a request may declare
// any schema, so the work it can cause is bounded.
const (
	// MaxSchemaBytes bounds one tool's parameters schema.
	MaxSchemaBytes = 256 << 10
	// MaxSchemasPerRequest bounds the client schemas compiled for one
	// request.
	MaxSchemasPerRequest = 32
)

// schemaURL is the name each schema is compiled under. No other document
// can be loaded: a "$ref" to a file or a URL does not compile (a proxy
// must not read its disk or the network for a client).
const schemaURL = "urn:llmstream:tool-parameters"

// Schemas are tool schemas compiled once, by function name: a route's
// configured tools, compiled at provision. A nil *Schemas has none.
type Schemas struct {
	byName map[string]*jsonschema.Schema // nil: the tool accepts anything
}

// Compile compiles the parameters schema of each tool. The error names
// the first tool whose schema does not compile.
func Compile(defs []request.ToolDef) (*Schemas, error) {
	s := &Schemas{}
	for _, d := range defs {
		if err := s.Add(d); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Add compiles one more tool's schema. The error names the tool.
func (s *Schemas) Add(d request.ToolDef) error {
	sch, err := compileSchema(d.Parameters)
	if err != nil {
		return fmt.Errorf("tool %q: parameters: %w", d.Name, err)
	}
	if s.byName == nil {
		s.byName = make(map[string]*jsonschema.Schema)
	}
	s.byName[d.Name] = sch
	return nil
}

// lookup returns the compiled schema of name, and whether it has one.
func (s *Schemas) lookup(name string) (*jsonschema.Schema, bool) {
	if s == nil {
		return nil, false
	}
	sch, ok := s.byName[name]
	return sch, ok
}

// compileSchema compiles one parameters schema; nil means none, which
// accepts anything.
func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	if raw == nil {
		return nil, nil
	}
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("the schema is over %d bytes", MaxSchemaBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // loads nothing: see schemaURL
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), schemaURL, "schema"))
	}
	return sch, nil
}

// Tools checks the tool calls of one request against the tools it
// declares: the route's configured tools by their schemas compiled at
// provision, the client's by schemas compiled the first time the model
// calls them. A Tools serves one stream and is not safe for concurrent
// use.
type Tools struct {
	route    *Schemas
	client   map[string][]byte // the client's tools not configured: raw schemas, borrowed
	compiled map[string]compiled
	names    []string // every declared name, for corrections
	n        int      // client schemas compiled
}

type compiled struct {
	sch *jsonschema.Schema
	err string // why the schema is unusable, "" if it is usable
}

// NewTools returns the checks of one request, whose tools (request.Inspect)
// are defs. A configured tool of the same name as a client tool replaced
// it in the request (CONTRACT.md §3), so its compiled schema is used;
// defs borrows the request body, which must outlive the Tools.
func NewTools(route *Schemas, defs []request.ToolDef) *Tools {
	t := &Tools{route: route}
	for _, d := range defs {
		if _, ok := route.lookup(d.Name); ok {
			continue
		}
		if t.client == nil {
			t.client = make(map[string][]byte)
		}
		if _, dup := t.client[d.Name]; !dup {
			t.client[d.Name] = d.Parameters
			t.names = append(t.names, d.Name)
		}
	}
	if route != nil {
		for _, d := range defs {
			if _, ok := route.lookup(d.Name); ok {
				t.names = append(t.names, d.Name)
			}
		}
	}
	return t
}

// Declared reports whether the request declares any tool.
func (t *Tools) Declared() bool { return len(t.names) > 0 }

// Check checks one complete tool call: its name among the declared tools
// (unknown_tool) and its arguments, raw JSON text, against the tool's
// schema (tool_args_invalid, naming the failing JSON Pointer). A client
// schema that cannot be used gives a notice (tool_schema_unusable) and
// the arguments go unchecked. call is the call's stream index. It returns
// false when the call passes.
func (t *Tools) Check(call int, name string, args []byte) (Failure, bool) {
	sch, ok := t.route.lookup(name)
	if !ok {
		raw, declared := t.client[name]
		if !declared {
			return t.unknown(call, name), true
		}
		c := t.compile(name, raw)
		if c.err != "" {
			return Failure{
				Code: CodeToolSchemaUnusable, Severity: Notice, Call: call,
				Detail: "tool " + strconv.Quote(name) + ": arguments not checked: " + c.err,
			}, true
		}
		sch = c.sch
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return argsInvalid(call, name, "the arguments are not valid JSON"), true
	}
	if sch == nil {
		return Failure{}, false // no schema: any arguments
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(doc); errors.As(err, &ve) {
		return argsInvalid(call, name, describe(ve)), true
	} else if err != nil {
		return argsInvalid(call, name, err.Error()), true
	}
	return Failure{}, false
}

// compile compiles a client tool's schema once, within the limits.
func (t *Tools) compile(name string, raw []byte) compiled {
	if c, ok := t.compiled[name]; ok {
		return c
	}
	var c compiled
	if t.n >= MaxSchemasPerRequest {
		c.err = "more than " + strconv.Itoa(MaxSchemasPerRequest) + " tool schemas in one request"
	} else {
		if raw != nil {
			t.n++
		}
		sch, err := compileSchema(raw)
		if err != nil {
			c.err = err.Error()
		}
		c.sch = sch
	}
	if t.compiled == nil {
		t.compiled = make(map[string]compiled)
	}
	t.compiled[name] = c
	return c
}

// unknown is the failure of a call to an undeclared tool.
func (t *Tools) unknown(call int, name string) Failure {
	f := Failure{
		Code: CodeUnknownTool, Severity: Hard, Call: call,
		Detail: "tool " + strconv.Quote(name) + " is not among the request's tools",
	}
	if len(t.names) == 0 {
		f.Correction = "You called the tool " + strconv.Quote(name) +
			", but no tools are available here. Answer without calling a tool."
	} else {
		f.Correction = "You called the tool " + strconv.Quote(name) + ", which is not available. The available tools are: " +
			strings.Join(t.names, ", ") + ". Call one of them, or answer without a tool."
	}
	return f
}

// argsInvalid is the failure of a call whose arguments are invalid.
func argsInvalid(call int, name, why string) Failure {
	return Failure{
		Code: CodeToolArgsInvalid, Severity: Hard, Call: call,
		Detail: "tool " + strconv.Quote(name) + ": " + why,
		Correction: "The arguments of your call to " + strconv.Quote(name) + " do not satisfy its JSON Schema: " + why +
			". Call it again with arguments that satisfy the schema.",
	}
}

// printer renders the schema library's messages.
var printer = message.NewPrinter(language.English)

// maxLeaves bounds the schema errors a detail lists.
const maxLeaves = 3

// describe lists the innermost errors of a validation, each at its JSON
// Pointer in the arguments ("at /city: got number, want string"), the
// first maxLeaves in sorted order: the library reports them in map
// order, and the same arguments must give the same detail (it is in the
// retry request and the events).
func describe(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
				slices.Sort(k.Properties)
			}
			where := "at the top level"
			if len(e.InstanceLocation) > 0 {
				where = "at " + Pointer(e.InstanceLocation)
			}
			leaves = append(leaves, where+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(leaves)
	leaves = slices.Compact(leaves)
	return strings.Join(leaves[:min(len(leaves), maxLeaves)], "; ")
}

// Pointer returns the JSON Pointer (RFC 6901) of a location given as
// tokens: "" for the root.
func Pointer(tokens []string) string {
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteByte('/')
		tok = strings.ReplaceAll(tok, "~", "~0")
		b.WriteString(strings.ReplaceAll(tok, "/", "~1"))
	}
	return b.String()
}
