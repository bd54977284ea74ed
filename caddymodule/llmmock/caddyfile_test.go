package llmmock

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestMockCaddyfileErrors covers the llm_mock directive's error branches.
func TestMockCaddyfileErrors(t *testing.T) {
	cases := map[string]struct{ input, want string }{
		"argument on the directive": {"llm_mock x {\n}", "wrong argument count"},
		"unknown option":            {"llm_mock {\n\treply file.txt\n}", `unrecognized llm_mock option "reply"`},
		"zero chunk size":           {"llm_mock {\n\tchunk_size 0\n}", "chunk_size: must be at least 1"},
		"bad chunk size":            {"llm_mock {\n\tchunk_size big\n}", `chunk_size: invalid number "big"`},
		"bad interval":              {"llm_mock {\n\tinterval fast\n}", `interval: invalid duration "fast"`},
		"duplicate model":           {"llm_mock {\n\tmodel a\n\tmodel b\n}", "model: specified more than once"},
		"reply_text without text":   {"llm_mock {\n\treply_text\n}", "reply_text: missing value"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := new(Mock)
			err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
