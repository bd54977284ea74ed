package parsekit_test

import (
	"testing"

	"github.com/llmstream/llmstream/transform/parsekit"
)

func TestParsePhaseID(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true}, {"42", 42, true}, {"007", 7, true}, {"999999999", 999999999, true},
		{"", 0, false}, {"0", 0, false}, {"000", 0, false}, {"1000000000", 0, false},
		{"1a", 0, false}, {"+1", 0, false}, {"-1", 0, false}, {" 1", 0, false}, {"1.0", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parsekit.ParsePhaseID([]byte(tt.in))
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParsePhaseID(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
