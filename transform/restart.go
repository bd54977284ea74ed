package transform

// Restarter is implemented by an encoder whose protocol has its own way
// to show that a reply starts over: skillpet's round_start, an aisdk
// data-retry part. With the validate block's show_retries, a reply that
// fails its validation streams as it comes, and the retry that replaces it
// is announced with this marker (CONTRACT.md §10); without it, or for a
// protocol without a marker, the reply is held until it is validated.
type Restarter interface {
	// AppendRestart appends the marker of attempt (2 for the first retry);
	// reason is the failure code that caused the retry.
	AppendRestart(dst []byte, attempt int, reason string) []byte
}
