package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration in the JSON config. Like caddy.Duration, it
// is either an integer number of nanoseconds or a string holding a Go
// duration ("15s", "1m30s") that may also use "d" for days of 24 hours. It
// marshals as an integer, as caddy.Duration does, so that `caddy adapt`
// output reads back.
type Duration time.Duration

// UnmarshalJSON reads an integer of nanoseconds or a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := parseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: want a string such as \"15s\" or an integer of nanoseconds: %w", err)
	}
	*d = Duration(n)
	return nil
}

// maxDurationLen bounds the string parseDuration accepts, as
// caddy.ParseDuration does.
const maxDurationLen = 1024

// parseDuration is time.ParseDuration with the extra unit "d" (24h), the
// syntax caddy.ParseDuration accepts, so that a Caddyfile duration means the
// same in the JSON config.
func parseDuration(s string) (time.Duration, error) {
	if len(s) > maxDurationLen {
		return 0, errors.New("parsing duration: longer than 1024 bytes")
	}
	if !strings.Contains(s, "d") {
		return time.ParseDuration(s)
	}
	// Rewrite each "<number>d" as hours, then let the standard parser read
	// the rest (and reject what it would reject).
	out := make([]byte, 0, len(s)+8)
	num := 0 // where the number that precedes i starts, in s
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 'd' {
			if !isNumberByte(c) {
				num = i + 1
			}
			out = append(out, c)
			continue
		}
		days, err := strconv.ParseFloat(s[num:i], 64)
		if err != nil {
			return 0, fmt.Errorf("parsing duration %q: bad number of days %q", s, s[num:i])
		}
		// Replace the number already copied by the same span in hours.
		out = strconv.AppendFloat(out[:len(out)-(i-num)], days*24, 'f', -1, 64)
		out = append(out, 'h')
		num = i + 1
	}
	return time.ParseDuration(string(out))
}

// isNumberByte reports whether c may be part of a duration's number.
func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+'
}
