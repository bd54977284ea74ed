package aisdk_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// chunkSchema is the extract of ai@6's uiMessageChunkSchema in
// testdata/ui-message-chunk-schema.json.
type chunkSchema struct {
	DataPrefix string                 `json:"dataPrefix"`
	Data       chunkFields            `json:"data"`
	Chunks     map[string]chunkFields `json:"chunks"`
}

type chunkFields struct {
	Required map[string]string `json:"required"`
	Optional map[string]string `json:"optional"`
}

var loadSchema = sync.OnceValues(func() (*chunkSchema, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "ui-message-chunk-schema.json"))
	if err != nil {
		return nil, err
	}
	var s chunkSchema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
})

// validateChunk checks a decoded chunk against the schema: a known type,
// every required field present, and every field of its declared type.
func validateChunk(s *chunkSchema, m map[string]any) error {
	typ, ok := m["type"].(string)
	if !ok {
		return fmt.Errorf("chunk without a string type: %v", m)
	}
	fields, ok := s.Chunks[typ]
	if strings.HasPrefix(typ, s.DataPrefix) {
		fields, ok = s.Data, true
	}
	if !ok {
		return fmt.Errorf("unknown chunk type %q", typ)
	}
	for k, want := range fields.Required {
		v, ok := m[k]
		if !ok {
			return fmt.Errorf("%s lacks required %s: %v", typ, k, m)
		}
		if err := checkType(typ, k, v, want); err != nil {
			return err
		}
	}
	for k, v := range m {
		if k == "type" {
			continue
		}
		want, ok := fields.Optional[k]
		if _, req := fields.Required[k]; req {
			continue
		}
		if !ok {
			return fmt.Errorf("%s has field %s the schema does not declare: %v", typ, k, m)
		}
		if err := checkType(typ, k, v, want); err != nil {
			return err
		}
	}
	return nil
}

func checkType(typ, k string, v any, want string) error {
	ok := true
	switch {
	case want == "string":
		_, ok = v.(string)
	case want == "boolean":
		_, ok = v.(bool)
	case want == "record":
		_, ok = v.(map[string]any)
	case want == "unknown":
	case strings.HasPrefix(want, "enum:"):
		s, isString := v.(string)
		ok = isString && strings.Contains("|"+strings.TrimPrefix(want, "enum:")+"|", "|"+s+"|")
	default:
		return fmt.Errorf("schema extract: unknown type %q", want)
	}
	if !ok {
		return fmt.Errorf("%s.%s = %v is not %s", typ, k, v, want)
	}
	return nil
}
