package toolserver

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmstream/llmstream/transform/agent"
)

// convert turns an MCP tool result into the neutral agent.Result, part by
// part and in order (MCP spec 2025-11-25 "Tool Result": text, image,
// audio, resource_link, embedded resource, structuredContent, isError).
// Binary data (an image, audio, a blob) larger than maxBinary is replaced
// by a text part that says what was left out, so that one result never
// holds more than the message bound and what the loop may keep of it.
func convert(res *mcp.CallToolResult, maxBinary int) agent.Result {
	out := agent.Result{IsError: res.IsError, Parts: make([]agent.Part, 0, len(res.Content))}
	for _, c := range res.Content {
		out.Parts = append(out.Parts, convertPart(c, maxBinary))
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && string(b) != "null" {
			out.Structured = b
		}
	}
	return out
}

// convertPart converts one content item.
func convertPart(c mcp.Content, maxBinary int) agent.Part {
	switch c := c.(type) {
	case *mcp.TextContent:
		return agent.Part{Kind: agent.PartText, Text: c.Text}
	case *mcp.ImageContent:
		if len(c.Data) > maxBinary {
			return omitted("image", c.MIMEType, len(c.Data), maxBinary)
		}
		return agent.Part{Kind: agent.PartImage, Data: c.Data, MIMEType: c.MIMEType}
	case *mcp.AudioContent:
		if len(c.Data) > maxBinary {
			return omitted("audio", c.MIMEType, len(c.Data), maxBinary)
		}
		return agent.Part{Kind: agent.PartAudio, Data: c.Data, MIMEType: c.MIMEType}
	case *mcp.ResourceLink:
		name := c.Name
		if name == "" {
			name = c.Title
		}
		return agent.Part{Kind: agent.PartResourceLink, URI: c.URI, Name: name, MIMEType: c.MIMEType, Text: c.Description}
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return agent.Part{Kind: agent.PartText, Text: "[an embedded resource without contents]"}
		}
		if len(r.Blob) > maxBinary {
			p := omitted("resource "+r.URI, r.MIMEType, len(r.Blob), maxBinary)
			return p
		}
		return agent.Part{Kind: agent.PartResource, URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Data: r.Blob}
	default:
		return agent.Part{Kind: agent.PartText, Text: fmt.Sprintf("[content of a kind llmstream does not read: %T]", c)}
	}
}

// omitted is the text part that stands for binary data left out.
func omitted(what, mime string, n, max int) agent.Part {
	return agent.Part{Kind: agent.PartText, Text: fmt.Sprintf("[%s (%s, %d bytes) left out: larger than %d bytes]", what, mime, n, max)}
}
