package llmmock

import (
	"encoding/json"
	"net/http"
	"sync"
)

// recordPath ends the URL at which a recording mock serves the request
// bodies it kept.
const recordPath = "/llm_mock/requests"

// recordLimit bounds the bodies a recording mock keeps: the oldest go
// first, so that a long test run costs bounded memory.
const recordLimit = 256

// recorder keeps the bodies of the chat requests a mock received, for
// tests that check what llm_stream sent upstream.
type recorder struct {
	mu     sync.Mutex
	bodies []json.RawMessage
}

// add keeps a copy of body, a valid JSON document.
func (rc *recorder) add(body []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bodies) == recordLimit {
		rc.bodies = append(rc.bodies[:0], rc.bodies[1:]...)
	}
	rc.bodies = append(rc.bodies, append(json.RawMessage(nil), body...))
}

// serve answers GET with the kept bodies as a JSON array, oldest first,
// and DELETE by forgetting them.
func (rc *recorder) serve(w http.ResponseWriter, r *http.Request) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		b, err := json.Marshal(rc.bodies)
		if err != nil {
			return err
		}
		if rc.bodies == nil {
			b = []byte("[]")
		}
		w.Header().Set("Content-Type", "application/json")
		_, err = w.Write(b)
		return err
	case http.MethodDelete:
		rc.bodies = nil
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	w.Header().Set("Allow", "GET, DELETE")
	return mockError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET or DELETE")
}
