package jsonstream

import (
	"strings"
	"testing"
)

func TestKeyword(t *testing.T) {
	long := strings.Repeat("x", MaxKeywordBytes)
	tests := []struct {
		name    string
		pieces  []string
		want    string
		tooLong bool
	}{
		{"empty", nil, "", false},
		{"one_piece", []string{"final_delta"}, "final_delta", false},
		{"pieces", []string{"final", "", "_delta"}, "final_delta", false},
		{"at_limit", []string{long[:10], long[10:]}, long, false},
		// Too long: dropped whole, however it was cut.
		{"over_limit", []string{long + "y"}, "", true},
		{"over_limit_pieces", []string{"y", long}, "", true},
		{"over_then_short", []string{long, "yy", "z"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k Keyword
			for _, p := range tt.pieces {
				k.Append([]byte(p))
			}
			if string(k.Bytes()) != tt.want || k.TooLong() != tt.tooLong {
				t.Errorf("Bytes() = %q, TooLong() = %v; want %q, %v", k.Bytes(), k.TooLong(), tt.want, tt.tooLong)
			}
			k.Reset()
			k.Append([]byte("ok"))
			if string(k.Bytes()) != "ok" || k.TooLong() {
				t.Errorf("after Reset: %q, %v", k.Bytes(), k.TooLong())
			}
		})
	}
}
