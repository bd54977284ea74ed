// Package jsonout writes the JSON that the protocol encoders send: quoted
// strings and string bodies, compacted raw values, string lists, the
// ClarifyPayload members and the violations list. Every function appends to
// the caller's buffer, like strconv.AppendInt, and allocates only when that
// buffer must grow, so that encoders allocate nothing per delta.
package jsonout
