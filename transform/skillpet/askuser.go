package skillpet

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// AskUserQuestion is one question of an ask_user form, normalised as
// specs/002 §5 NormalizedQuestion.
type AskUserQuestion struct {
	ID                  string
	Prompt              string
	Options             []AskUserOption
	AllowMultiple       bool
	AllowFreeText       bool
	FreeTextPlaceholder string
	// Hint is a clarification's frontend hint (specs/004 §7.2
	// ClarifyPayload.hint, such as "needClassId"): an extra member that a
	// component following specs/002 ignores and one that knows it acts on.
	// Normalisation never sets it; the ask_user tool has no such field.
	Hint string
}

// AskUserOption is one option of an AskUserQuestion.
type AskUserOption struct {
	ID, Label string
}

// NormalizeAskUserQuestions is specs/002 §5 normalizeAskUserQuestions,
// rule for rule, on decoded JSON (as encoding/json decodes into any, with
// json.Number for numbers): the aliases prompt/question/text/title,
// options/choices, label/text/name/title, id/value,
// allowFreeText/allow_free_text/freeText, allowMultiple/allow_multiple and
// freeTextPlaceholder/free_text_placeholder, JavaScript truthiness and
// String() conversion, and questions without a prompt, or without options
// unless free text is allowed, skipped.
func NormalizeAskUserQuestions(raw []any) []AskUserQuestion {
	var out []AskUserQuestion
	for i, item := range raw {
		q, ok := item.(map[string]any)
		if !ok {
			continue // also arrays: typeof [] is "object" but they have no prompt
		}
		prompt := jsString(firstTruthy(q, "", "prompt", "question", "text", "title"))
		if prompt == "" {
			continue
		}
		id := jsString(firstTruthy(q, "q-"+strconv.Itoa(i), "id"))
		allowFreeText := jsTruthy(firstTruthy(q, nil, "allowFreeText", "allow_free_text", "freeText"))
		rawOpts, _ := firstTruthy(q, nil, "options", "choices").([]any)
		var options []AskUserOption
		for j, o := range rawOpts {
			switch o := o.(type) {
			case string:
				options = append(options, AskUserOption{ID: "opt-" + strconv.Itoa(j), Label: o})
			case map[string]any:
				label := jsString(firstTruthy(o, "", "label", "text", "name", "title"))
				if label != "" {
					optID := jsString(firstTruthy(o, "opt-"+strconv.Itoa(j), "id", "value"))
					options = append(options, AskUserOption{ID: optID, Label: label})
				}
			}
		}
		if len(options) == 0 && !allowFreeText {
			continue
		}
		nq := AskUserQuestion{ID: id, Prompt: prompt, Options: options, AllowFreeText: allowFreeText}
		nq.AllowMultiple = jsTruthy(firstTruthy(q, nil, "allowMultiple", "allow_multiple"))
		if p := firstTruthy(q, nil, "freeTextPlaceholder", "free_text_placeholder"); p != nil {
			nq.FreeTextPlaceholder = jsString(p)
		}
		out = append(out, nq)
	}
	return out
}

// askUserQuestions extracts the questions of the ask_user tool's arguments
// (specs/002 §6: {"questions": [...]}). It is lenient where models are
// sloppy: a bare array is taken as the questions, and questions sent as a
// JSON string holding an array are decoded. Anything else has no
// questions.
func askUserQuestions(args []byte) []any {
	v, ok := decodeJSON(args)
	if !ok {
		return nil
	}
	if list, ok := v.([]any); ok {
		return list
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	switch qs := obj["questions"].(type) {
	case []any:
		return qs
	case string:
		if inner, ok := decodeJSON([]byte(qs)); ok {
			list, _ := inner.([]any)
			return list
		}
	}
	return nil
}

// appendAskUser appends the ask_user event for the arguments of an
// ask_user tool call (specs/002 §6 steps 2–3). The event is sent even when
// no question survives normalisation, as the reference backend does: the
// model asked, and the client decides what an empty form means.
func appendAskUser(dst, args []byte) []byte {
	return appendAskUserEvent(dst, NormalizeAskUserQuestions(askUserQuestions(args)))
}

// appendClarify appends a clarification as an ask_user form with one
// question (CONTRACT.md §5): id "clarify", the options as opt-j, free text
// allowed so that the user can answer outside the options, and the
// clarification's hint, when it has one, as the question's "hint".
func appendClarify(dst []byte, c *transform.Clarify) []byte {
	q := AskUserQuestion{ID: "clarify", Prompt: c.Question, AllowFreeText: true, Hint: c.Hint}
	q.Options = make([]AskUserOption, len(c.Options))
	for j, label := range c.Options {
		q.Options[j] = AskUserOption{ID: "opt-" + strconv.Itoa(j), Label: label}
	}
	return appendAskUserEvent(dst, []AskUserQuestion{q})
}

// appendAskUserEvent appends ask_user {questions} with the fields of each
// question in the order of specs/002 §5, optional ones only when set.
func appendAskUserEvent(dst []byte, qs []AskUserQuestion) []byte {
	dst = append(dst, "event: ask_user\ndata: {\"questions\":["...)
	for i, q := range qs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = jsonout.AppendStringS(dst, q.ID)
		dst = append(dst, `,"prompt":`...)
		dst = jsonout.AppendStringS(dst, q.Prompt)
		dst = append(dst, `,"options":[`...)
		for j, o := range q.Options {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonout.AppendStringS(dst, o.ID)
			dst = append(dst, `,"label":`...)
			dst = jsonout.AppendStringS(dst, o.Label)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
		if q.AllowMultiple {
			dst = append(dst, `,"allowMultiple":true`...)
		}
		if q.AllowFreeText {
			dst = append(dst, `,"allowFreeText":true`...)
		}
		if q.FreeTextPlaceholder != "" {
			dst = append(dst, `,"freeTextPlaceholder":`...)
			dst = jsonout.AppendStringS(dst, q.FreeTextPlaceholder)
		}
		if q.Hint != "" {
			dst = append(dst, `,"hint":`...)
			dst = jsonout.AppendStringS(dst, q.Hint)
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}\n\n"...)
}

// decodeJSON decodes one JSON value, numbers as json.Number so that they
// keep the digits the model wrote until jsString formats them.
func decodeJSON(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
		return nil, false
	}
	return v, true
}

// firstTruthy is JavaScript's `obj[k1] || obj[k2] || … || def`: the first
// truthy value among the keys, else def.
func firstTruthy(obj map[string]any, def any, keys ...string) any {
	for _, k := range keys {
		if v := obj[k]; jsTruthy(v) {
			return v
		}
	}
	return def
}

// jsTruthy is JavaScript truthiness for a decoded JSON value: null, false,
// 0 and "" are falsy; objects and arrays, even empty, are truthy.
func jsTruthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	}
	return true
}

// jsString is JavaScript's String(v) for a decoded JSON value.
func jsString(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return jsNumber(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// jsNumber formats a JSON number as JavaScript's Number.prototype.toString:
// 1.0 is "1", 1e21 is "1e+21", 1.5e-7 is "1.5e-7".
func jsNumber(n json.Number) string {
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		if math.IsInf(f, -1) {
			return "-Infinity"
		}
		if math.IsInf(f, 1) {
			return "Infinity"
		}
		return n.String()
	}
	if f == 0 {
		return "0" // also -0
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// Go writes at least two exponent digits (1e-07); JavaScript one.
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + digits
}
