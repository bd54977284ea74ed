package toolserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoResource is the error of ReadResource for a resource it cannot read:
// no server offers the tool, the server has no such resource, or it is
// larger than the bound.
var ErrNoResource = errors.New("toolserver: the resource cannot be read")

// ReadResource reads uri from the server that offers tool (a resource link
// a result of that tool carries: CONTRACT.md §13, the file is served to
// the client by the gateway): its media type and bytes, at most
// MaxBinaryBytes, within the server's timeout. r resolves per-user
// headers, as for the call.
func (s *Set) ReadResource(ctx context.Context, tool, uri string, r Resolver) (string, []byte, error) {
	var srv *server
	var c *conn
	s.offered(ctx, r, false, func(ot Tool, osrv *server, oc *conn) bool {
		if ot.Name == tool {
			srv, c = osrv, oc
			return false
		}
		return true
	})
	if srv == nil || c == nil {
		return "", nil, ErrNoResource
	}
	ctx, cancel := context.WithTimeout(ctx, srv.timeout)
	defer cancel()
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrNoResource, err)
	}
	if res == nil || len(res.Contents) == 0 || res.Contents[0] == nil {
		return "", nil, ErrNoResource
	}
	rc := res.Contents[0]
	data := rc.Blob
	if data == nil {
		data = []byte(rc.Text)
	}
	if len(data) > s.maxBinary {
		return "", nil, fmt.Errorf("%w: %d bytes, more than %d", ErrNoResource, len(data), s.maxBinary)
	}
	return rc.MIMEType, data, nil
}
