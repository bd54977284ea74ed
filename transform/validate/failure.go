package validate

import "strings"

// Severity says what a failure does (specs/004 §7.3.2).
type Severity uint8

const (
	// Hard is RetryNeeded: the reply is retried, and when the retries are
	// spent the stream ends with the error validation_failed.
	Hard Severity = iota
	// Soft is SoftRetryNeeded: the reply is retried, and when the retries
	// are spent it is delivered with the failure as a violation.
	Soft
	// Notice is reported as a violation and never retried.
	Notice
)

// Failure is one broken rule.
type Failure struct {
	// Code names the rule (codes.go).
	Code     string
	Severity Severity
	// Detail says what was wrong, for the violation's detail and the
	// error message. It may quote the reply (a tool's arguments), so it
	// goes to the client and never to the log, which carries Code only.
	Detail string
	// Correction tells the model what to do instead, for the retry.
	Correction string
	// Call is the stream index of the tool call at fault, -1 for a
	// failure of the whole reply.
	Call int
}

// Retried reports whether the failure asks for a retry.
func (f Failure) Retried() bool { return f.Severity != Notice }

// Worst returns the failures' most severe severity that asks for a
// retry, and false when none does.
func Worst(fs []Failure) (Severity, bool) {
	worst, any := Soft, false
	for _, f := range fs {
		switch f.Severity {
		case Hard:
			return Hard, true
		case Soft:
			worst, any = Soft, true
		}
	}
	return worst, any
}

// Reason returns the code that stands for a retry in the metric: the
// first hard failure's, else the first soft one's, "" if none asks for a
// retry.
func Reason(fs []Failure) string {
	soft := ""
	for _, f := range fs {
		switch {
		case f.Severity == Hard:
			return f.Code
		case f.Severity == Soft && soft == "":
			soft = f.Code
		}
	}
	return soft
}

// Correction returns the user message that tells the model why its reply
// was refused: the corrections of the failures, except those of the calls
// for which skip reports true (their tool messages carry them), "" when
// nothing is left. shown says whether the user saw the refused reply (the
// validate block's show_retries streams it): the model is told the truth
// either way, so that it neither repeats what the user read as if it were
// new nor refers to what the user never saw.
func Correction(fs []Failure, skip func(call int) bool, shown bool) string {
	var b strings.Builder
	for _, f := range fs {
		if !f.Retried() || f.Correction == "" || f.Call >= 0 && skip != nil && skip(f.Call) {
			continue
		}
		if b.Len() == 0 {
			if shown {
				b.WriteString("Your previous reply was not accepted. The user saw it, and sees your next reply after it as a new attempt.")
			} else {
				b.WriteString("Your previous reply was not accepted, and the user did not see it.")
			}
		}
		b.WriteByte(' ')
		b.WriteString(f.Correction)
	}
	return b.String()
}

// Codes returns the codes of the failures that ask for a retry, in
// order, space-separated.
func Codes(fs []Failure) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Retried() {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f.Code)
		}
	}
	return b.String()
}
