package encodertest

import (
	"encoding/json"
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
// with meta's message_id and request_id (a client that does not know one
// yet, empty in meta, learns it from the first event), and no
// event after the terminal one, completed or error. What each protocol
// sends between is its own test's to check.
func ReadGymBroSSE(out []byte, meta transform.Meta) ([]GymBroEvent, error) {
	sse, err := ReadSSE(out)
	if err != nil {
		return nil, err
	}
	if (meta.MessageID == "" || meta.RequestID == "") && len(sse) > 0 {
		var ids struct {
			MessageID string `json:"message_id"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal([]byte(sse[0].Data), &ids); err != nil {
			return nil, fmt.Errorf("event 0 %s: data is not a JSON object: %s", sse[0].Name, sse[0].Data)
		}
		if meta.MessageID == "" {
			meta.MessageID = ids.MessageID
		}
		if meta.RequestID == "" {
			meta.RequestID = ids.RequestID
		}
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
