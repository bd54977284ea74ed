// Package parsekit holds what the format parsers share beside the event
// model: the raw echo every parser owes the raw-reply protocols (RawEcho),
// the carry that keeps emitted text on UTF-8 boundaries (RuneCarry), and the
// phase id syntax of the phased formats (ParsePhaseID).
package parsekit
