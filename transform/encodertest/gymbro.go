package encodertest

import (
	"fmt"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// GymBroEvent is an event of a protocol built on gymbro.SystemEvents, with
// its data decoded.
type GymBroEvent struct {
	SSEEvent
	Fields map[string]any
}

// ReadGymBroSSE reads a stream of a protocol built on gymbro.SystemEvents
// (gymbro, jsonseq) and checks the framing they share (specs/000 §6.2,
// specs/001 §3): no comments, every data line one JSON object that starts
// with meta's message_id and request_id, and no event after the terminal
// one, completed or error. What each protocol sends between is its own
// test's to check.
func ReadGymBroSSE(out []byte, meta transform.Meta) ([]GymBroEvent, error) {
	sse, err := ReadSSE(out)
	if err != nil {
		return nil, err
	}
	ids := `{"message_id":` + string(jsonout.AppendStringS(nil, meta.MessageID)) +
		`,"request_id":` + string(jsonout.AppendStringS(nil, meta.RequestID))
	evs := make([]GymBroEvent, len(sse))
	for i, e := range sse {
		if e.Comment {
			return nil, fmt.Errorf("event %d: the GymBro system events have no comments", i)
		}
		if !strings.HasPrefix(e.Data, ids) {
			return nil, fmt.Errorf("event %d %s: data does not start with message_id and request_id: %s", i, e.Name, e.Data)
		}
		if i > 0 && (sse[i-1].Name == "completed" || sse[i-1].Name == "error") {
			return nil, fmt.Errorf("event %d %s after the terminal event", i, e.Name)
		}
		m, err := e.DecodeData()
		if err != nil {
			return nil, err
		}
		evs[i] = GymBroEvent{e, m}
	}
	return evs, nil
}
