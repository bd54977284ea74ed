package wiretest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// readErrorBody reads the JSON body of an HTTP error in the OpenAI shape,
// {"error": {"message": …, "code": …, …}}, the one every protocol without
// an error body of its own answers with (CONTRACT.md §3, §6).
func readErrorBody(out []byte) (Seen, error) {
	var v struct {
		Error any `json:"error"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return Seen{}, fmt.Errorf("not one JSON object: %v", err)
	}
	if v.Error == nil {
		return Seen{}, fmt.Errorf("no error object: %s", out)
	}
	return errorObject(v.Error)
}

// errorObject reads an OpenAI error object's error member: a message,
// and a code when it has one.
func errorObject(v any) (Seen, error) {
	seen := Seen{Failed: true}
	o, ok := v.(map[string]any)
	if !ok {
		return seen, fmt.Errorf("error is not an object")
	}
	seen.Code, _ = o["code"].(string)
	if seen.Message, _ = o["message"].(string); seen.Message == "" {
		return seen, fmt.Errorf("error without a message")
	}
	return seen, nil
}

// readFlatError reads specs/002 §2.3's error body, {"error": CODE,
// "message": …}, the shape of every skillpet error answered with a status.
func readFlatError(out []byte) (Seen, error) {
	var v struct {
		Error   *string `json:"error"`
		Message string  `json:"message"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return Seen{}, fmt.Errorf("not one JSON object: %v", err)
	}
	if v.Error == nil || *v.Error == "" || *v.Error != strings.ToUpper(*v.Error) {
		return Seen{}, fmt.Errorf("no upper-case error code (specs/002 §2.3): %s", out)
	}
	return Seen{Failed: true, Code: *v.Error, Message: v.Message}, nil
}

// inOrder reports whether every part occurs in s, each after the last.
func inOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}
