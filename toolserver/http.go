package toolserver

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// newHTTPTransport is the HTTP transport of a Set's streamable-HTTP
// servers: connection and handshake timeouts, and no response-header
// timeout (a server may hold a call's response until the tool is done;
// the call's own timeout bounds it).
func newHTTPTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// headerTransport sets a session's configured headers on every request
// to its server, and bounds what each response may make llmstream hold:
// a JSON body or an SSE event over max is replaced by an error response
// to the call (see skimmer).
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	max    int
	onDrop func(string, int)
}

// RoundTrip implements http.RoundTripper.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.header {
		req.Header[k] = v
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		resp.Body = newSSEFrames(resp.Body, t.max, t.onDrop)
	case "application/json":
		resp.Body = t.boundJSON(req, resp.Body)
	default:
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, int64(t.max)), resp.Body}
	}
	return resp, nil
}

// boundJSON reads a JSON response body of at most max bytes; a larger one
// becomes the error response to the request's id.
func (t *headerTransport) boundJSON(req *http.Request, body io.ReadCloser) io.ReadCloser {
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, int64(t.max)+1))
	if err != nil {
		return io.NopCloser(&errReader{err})
	}
	if len(b) <= t.max {
		return io.NopCloser(bytes.NewReader(b))
	}
	n, _ := io.Copy(io.Discard, body)
	t.onDrop("a response larger than the limit", len(b)+int(n))
	if id := requestID(req); id != nil {
		return io.NopCloser(bytes.NewReader(tooLargeResponse(id)))
	}
	return io.NopCloser(bytes.NewReader(nil))
}

// requestID returns the raw JSON id of the JSON-RPC request req carries,
// or nil.
func requestID(req *http.Request) []byte {
	if req.GetBody == nil {
		return nil
	}
	rc, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !r.ID.IsValid() {
		return nil
	}
	id, err := jsonMarshalID(r.ID.Raw())
	if err != nil {
		return nil
	}
	return id
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

// jsonMarshalID writes an id (a string or a number) as JSON.
func jsonMarshalID(v any) ([]byte, error) { return json.Marshal(v) }
