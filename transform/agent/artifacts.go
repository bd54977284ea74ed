package agent

import (
	"encoding/json"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform"
)

// Artifacts returns what a tool's result produced for the user (specs/004
// §7.3: the artifact events a tool emits): a file ready for each resource
// the client can fetch (a part with a URL: an http(s) resource link, or a
// resource the gateway serves), and the route's event for the tool
// (event, "" for none) with the result's data. A failed, declined or
// parked call produced nothing.
func Artifacts(event string, r Result) []transform.Artifact {
	if r.IsError || r.Denied || r.Park != nil {
		return nil
	}
	var out []transform.Artifact
	for _, p := range r.Parts {
		if typ, ok := JSONResource(p); ok {
			// Structured data (specs/002 §3.8): a resource part.
			out = append(out, transform.Artifact{Kind: transform.ArtifactResource, Name: typ, Data: []byte(strings.TrimSpace(p.Text))})
			continue
		}
		if (p.Kind == PartResourceLink || p.Kind == PartResource) && p.URL != "" {
			out = append(out, transform.Artifact{Kind: transform.ArtifactFile, URL: p.URL, Name: fileName(p), Type: p.MIMEType})
		}
	}
	if event != "" {
		out = append(out, transform.Artifact{Kind: event, Data: eventData(r)})
	}
	return out
}

// JSONResource reports whether a part is an embedded resource of JSON
// (application/json or a +json type, with a JSON text): structured data
// for the client (specs/002 §3.8 resource {resourceType, data}), not a
// file; its type is named by its URI: the host of "skillpet://characters",
// else the last element of the path, without its extension.
func JSONResource(p Part) (string, bool) {
	if p.Kind != PartResource || p.Data != nil {
		return "", false
	}
	mt := p.MIMEType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.TrimSpace(mt)
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") || !json.Valid([]byte(p.Text)) {
		return "", false
	}
	name := ""
	if u, err := url.Parse(p.URI); err == nil {
		name = strings.Trim(u.Path, "/")
		if name == "" {
			name = u.Host
		} else {
			name = path.Base(name)
		}
	}
	name = strings.TrimSuffix(name, path.Ext(name))
	if name == "" {
		name = "resource"
	}
	return name, true
}

// IsArtifactEvent reports whether an artifact is one of specs/004
// §7.3.1's ARTIFACT_EVENT_TYPES (a file, or a route's event): what
// validate counts. A structured resource is not.
func IsArtifactEvent(a transform.Artifact) bool {
	return a.Kind != transform.ArtifactResource
}

// fileName is a part's name, else the last element of its URI.
func fileName(p Part) string {
	if p.Name != "" {
		return p.Name
	}
	u := p.URI
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if b := path.Base(u); b != "." && b != "/" {
		return b
	}
	return "file"
}

// eventData is the JSON a result's event carries: its structured content,
// else its text when that is JSON, else its text as a string.
func eventData(r Result) []byte {
	if len(r.Structured) > 0 && json.Valid(r.Structured) {
		return r.Structured
	}
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Kind == PartText {
			b.WriteString(p.Text)
		}
	}
	text := strings.TrimSpace(b.String())
	if text != "" && json.Valid([]byte(text)) {
		return []byte(text)
	}
	out, _ := json.Marshal(b.String())
	return out
}

// Images returns the images a result carries that the client can fetch
// (specs/002 §3.7): its image parts and its links to images, each with a
// URL, numbered img-0, img-1, … in order. A failed call carries none.
func Images(r Result) []transform.Image {
	if r.IsError || r.Denied || r.Park != nil {
		return nil
	}
	var out []transform.Image
	for _, p := range r.Parts {
		image := p.Kind == PartImage || p.Kind == PartResourceLink && strings.HasPrefix(p.MIMEType, "image/")
		if !image || p.URL == "" {
			continue
		}
		out = append(out, transform.Image{ID: "img-" + strconv.Itoa(len(out)), URL: p.URL, Label: p.Name, Type: p.MIMEType})
	}
	return out
}
