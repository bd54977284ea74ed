package request

import (
	"encoding/json"
	"strings"
)

// The answers a client sends to calls that wait for its user (CONTRACT.md
// §13): skillpet's POST …/tool-response body, and the approvals an AI SDK
// page sends back in its next request.

// ToolResponse is a skillpet POST {baseUrl}/tool-response body (specs/002
// §2.4): the user picked optionId for the interactive tool call
// toolCallId.
type ToolResponse struct {
	ProjectID, ToolCallID, ToolName, OptionID string
	// ConversationID is the optional conversationId, as /stream's.
	ConversationID string
	// EnableThinking and EnableSearch are the toggles, as /stream's.
	EnableThinking, EnableSearch bool
}

// ParseToolResponse reads a /tool-response body: projectId, toolCallId,
// toolName and optionId are required non-empty strings (400
// MISSING_PARAMS naming the first missing one, as /stream's); a projectId
// over 256 bytes and ids over 512 are refused the same way.
func ParseToolResponse(body []byte) (ToolResponse, *Error) {
	d, root, e := parseObject(body, missingParams)
	if e != nil {
		return ToolResponse{}, e
	}
	tr := ToolResponse{
		ProjectID:      d.memberStr(root, "projectId"),
		ToolCallID:     d.memberStr(root, "toolCallId"),
		ToolName:       d.memberStr(root, "toolName"),
		OptionID:       d.memberStr(root, "optionId"),
		ConversationID: d.memberStr(root, "conversationId"),
		EnableThinking: d.kind(d.member(root, "enableThinking")) == 't',
		EnableSearch:   d.kind(d.member(root, "enableSearch")) == 't',
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"projectId", tr.ProjectID, 256}, {"toolCallId", tr.ToolCallID, 512}, {"toolName", tr.ToolName, 512}, {"optionId", tr.OptionID, 512}} {
		if f.v == "" {
			return ToolResponse{}, missingParams("", f.name+" is required (a non-empty string)")
		}
		if len(f.v) > f.max {
			return ToolResponse{}, missingParams("", f.name+" is too long")
		}
	}
	return tr, nil
}

// Approval is the user's answer to a tool call that waited for their
// approval, as an AI SDK page sends it back: a tool part in state
// approval-responded (addToolApprovalResponse), in its last assistant
// message.
type Approval struct {
	// ID is the approvalId the gateway gave (tool-approval-request).
	ID, ToolCallID string
	Approved       bool
	Reason         string
}

// maxApprovals bounds the approvals read from one request.
const maxApprovals = 64

// aisdkApprovals returns the approvals of the last message of msgs when
// it is an assistant message: the turn useChat sends after the user
// answered (its parts in state approval-responded); and, when there are
// some, that message's id, which the continuation's start must repeat:
// useChat appends a stream whose messageId is another message's as a new
// message, showing the turn twice (ai@6 AbstractChat.makeRequest). An id
// that is not 1 to 128 letters, digits, '_' or '-' is not repeated.
func aisdkApprovals(d jsonDoc, msgs span) ([]Approval, string) {
	var last span
	d.elements(msgs, func(m span) bool {
		last = m
		return true
	})
	if !last.exists() || !d.stringIs(d.member(last, "role"), "assistant") {
		return nil, ""
	}
	var out []Approval
	d.elements(d.member(last, "parts"), func(p span) bool {
		if !isToolPartType(d.memberStr(p, "type")) || !d.stringIs(d.member(p, "state"), "approval-responded") {
			return true
		}
		var tp struct {
			ToolCallID string `json:"toolCallId"`
			Approval   struct {
				ID       string `json:"id"`
				Approved bool   `json:"approved"`
				Reason   string `json:"reason"`
			} `json:"approval"`
		}
		if json.Unmarshal(d[p.start:p.end], &tp) != nil || tp.Approval.ID == "" || tp.ToolCallID == "" {
			return true
		}
		out = append(out, Approval{ID: tp.Approval.ID, ToolCallID: tp.ToolCallID, Approved: tp.Approval.Approved,
			Reason: strings.TrimSpace(tp.Approval.Reason)})
		return len(out) < maxApprovals
	})
	if len(out) == 0 {
		return nil, ""
	}
	id := d.memberStr(last, "id")
	if !safeID(id) {
		id = ""
	}
	return out, id
}

// ImageSelect is a skillpet POST {baseUrl}/image-select/{projectId} body
// (specs/002 §3.7): the images the user chose in the image block blockId,
// and the action button they pressed, if any.
type ImageSelect struct {
	BlockID          string
	SelectedImageIDs []string
	ActionID         string
}

// maxSelected bounds the ids of one selection.
const maxSelected = 64

// ParseImageSelect reads an /image-select body: blockId is a required
// non-empty string, selectedImageIds an array of non-empty strings (at
// most 64, each at most 128 bytes, no repeats), actionId an optional
// string; a selection names an image or an action. A body that breaks
// these is 400 MISSING_PARAMS naming the problem.
func ParseImageSelect(body []byte) (ImageSelect, *Error) {
	d, root, e := parseObject(body, missingParams)
	if e != nil {
		return ImageSelect{}, e
	}
	is := ImageSelect{BlockID: d.memberStr(root, "blockId"), ActionID: d.memberStr(root, "actionId")}
	if is.BlockID == "" || len(is.BlockID) > 256 {
		return ImageSelect{}, missingParams("", "blockId is required (a non-empty string)")
	}
	if len(is.ActionID) > 128 {
		return ImageSelect{}, missingParams("", "actionId is too long")
	}
	sel := d.member(root, "selectedImageIds")
	if sel.exists() && d.kind(sel) != '[' {
		return ImageSelect{}, missingParams("", "selectedImageIds must be an array of image ids")
	}
	var bad *Error
	seen := map[string]bool{}
	d.elements(sel, func(v span) bool {
		id := d.str(v)
		switch {
		case d.kind(v) != '"' || id == "" || len(id) > 128:
			bad = missingParams("", "selectedImageIds must hold non-empty image ids")
		case seen[id]:
			bad = missingParams("", "selectedImageIds names "+id+" twice")
		case len(is.SelectedImageIDs) >= maxSelected:
			bad = missingParams("", "selectedImageIds holds too many ids")
		}
		if bad != nil {
			return false
		}
		seen[id] = true
		is.SelectedImageIDs = append(is.SelectedImageIDs, id)
		return true
	})
	if bad != nil {
		return ImageSelect{}, bad
	}
	if len(is.SelectedImageIDs) == 0 && is.ActionID == "" {
		return ImageSelect{}, missingParams("", "selectedImageIds is required (or an actionId)")
	}
	return is, nil
}

// safeID reports whether id is 1 to 128 letters, digits, '_' or '-'.
func safeID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
