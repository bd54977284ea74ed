//go:build race

package jsonout_test

// The race detector makes sync.Pool drop items at random, so code that
// reuses pooled state (encoding/json's scanner) allocates under -race.
func init() { raceEnabled = true }
