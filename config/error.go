package config

import (
	"errors"
	"fmt"
)

// Error is a configuration problem found by Route.Load. Its message names
// the setting, as `caddy validate` and `caddy adapt` must (CONTRACT.md §3),
// and Setting names it for code: the JSON name of the field ("protocol",
// "tools", "limits.max_tag").
type Error struct {
	// Setting is the JSON name of the offending setting.
	Setting string
	msg     string
	err     error
}

// Error returns the message, which names the setting.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying error, such as the *fs.PathError of a file
// that cannot be read, or nil.
func (e *Error) Unwrap() error { return e.err }

// errorf returns an *Error for setting. The message is built as fmt.Errorf
// builds it, and an error wrapped with %w stays reachable through Unwrap.
func errorf(setting, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Setting: setting, msg: err.Error(), err: errors.Unwrap(err)}
}
