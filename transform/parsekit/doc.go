// Package parsekit holds what the format parsers share beside the event
// model: the raw echo every parser owes the raw-reply protocols (RawEcho),
// the carry that keeps emitted text on UTF-8 boundaries (RuneCarry), the
// phase id syntax of the phased formats (ParsePhaseID), and the lenient
// decoding of a JSON string's body (AppendUnescaped) that the upstream
// decoder and the conversation store both need.
package parsekit
