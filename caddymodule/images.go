package caddymodule

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/transform/request"
)

// The image blocks of a conversation (CONTRACT.md §13, specs/002 §3.7):
// a tool's images are shown as image_generation and stored as a tool
// record "[image_generation] {…}"; POST …/image-select/{projectId}
// records the user's choice in that record (status "selected",
// selectedImageIds, actionId), which init then replays and the next
// turn's model reads; a "__continue__" message (the component's
// autoSendAfterImageSelect) continues the turn with it.

// maxImageSelectBody bounds an /image-select body.
const maxImageSelectBody = 64 << 10

// imageSelect answers POST …/image-select/{projectId}.
func (c *conversationRoute) imageSelect(w http.ResponseWriter, r *http.Request, rid string, key conversation.Key) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxImageSelectBody+1))
	_ = r.Body.Close()
	if err != nil || len(body) > maxImageSelectBody {
		c.answer(w, rid, http.StatusBadRequest, request.CodeMissingParams, "the body is unreadable or too large")
		return
	}
	sel, rerr := request.ParseImageSelect(body)
	if rerr != nil {
		c.answer(w, rid, rerr.Status, rerr.Code, rerr.Message)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
	defer cancel()
	l, err := c.store.Lock(ctx, key)
	if err != nil {
		c.storeFailed(w, rid, "STORE_UNAVAILABLE", err)
		return
	}
	defer c.release(ctx, rid, l)
	recs, err := c.store.Load(ctx, key)
	if err != nil {
		c.storeFailed(w, rid, "STORE_UNAVAILABLE", err)
		return
	}
	rec, status, code, msg := selectImages(recs, sel)
	if status != http.StatusOK {
		c.answer(w, rid, status, code, msg)
		return
	}
	if err := l.Replace(ctx, rec); err != nil {
		c.storeFailed(w, rid, "STORE_UNAVAILABLE", err)
		return
	}
	_ = writeJSON(w, http.StatusOK, rid, []byte(`{"success":true}`))
}

// selectImages finds the image block sel names (the latest of that id)
// and returns its record with the choice recorded, or the error to
// answer: 404 for a block the conversation does not have, 400 for ids
// that are not its images or a count its mode does not allow, 409 for a
// block shown for display only.
func selectImages(recs []conversation.Record, sel request.ImageSelect) (conversation.Record, int, string, string) {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Role != conversation.RoleTool {
			continue
		}
		var t struct {
			Marker     string `json:"_t"`
			ToolCallID string `json:"toolCallId"`
			Body       string `json:"body"`
		}
		if json.Unmarshal([]byte(recs[i].Content), &t) != nil || t.Marker != conversation.ToolMarker {
			continue
		}
		raw, ok := strings.CutPrefix(t.Body, conversation.ImagePrefix)
		if !ok {
			continue
		}
		var block map[string]any
		if json.Unmarshal([]byte(raw), &block) != nil || block["id"] != sel.BlockID {
			continue
		}
		var ids []string
		images, _ := block["images"].([]any)
		for _, im := range images {
			if m, ok := im.(map[string]any); ok {
				if id, ok := m["id"].(string); ok {
					ids = append(ids, id)
				}
			}
		}
		mode, _ := block["mode"].(string)
		n := len(sel.SelectedImageIDs)
		for _, id := range sel.SelectedImageIDs {
			if !slices.Contains(ids, id) {
				return conversation.Record{}, http.StatusBadRequest, "INVALID_SELECTION", "image " + id + " is not one of the block's images"
			}
		}
		switch {
		case mode != "single_select" && mode != "multi_select" && n > 0:
			return conversation.Record{}, http.StatusConflict, "NOT_SELECTABLE", "the block's images are shown for display, not to choose from"
		case n > 0 && mode == "single_select" && n != 1:
			return conversation.Record{}, http.StatusBadRequest, "INVALID_SELECTION", "choose exactly one image"
		case n > 0 && n > maxSelect(block, len(ids)):
			return conversation.Record{}, http.StatusBadRequest, "INVALID_SELECTION", "too many images chosen"
		case n > 0 && n < minSelect(block):
			return conversation.Record{}, http.StatusBadRequest, "INVALID_SELECTION", "too few images chosen"
		}
		block["status"] = "selected"
		block["selectedImageIds"] = sel.SelectedImageIDs
		if sel.ActionID != "" {
			block["actionId"] = sel.ActionID
		}
		b, err := json.Marshal(block)
		if err != nil {
			return conversation.Record{}, http.StatusInternalServerError, "CHAT_FAILED", err.Error()
		}
		out := recs[i]
		out.Content = string(conversation.AppendToolContent(nil, t.ToolCallID, conversation.ImagePrefix+string(b)))
		return out, http.StatusOK, "", ""
	}
	return conversation.Record{}, http.StatusNotFound, "NOT_FOUND", "no image block " + sel.BlockID + " in this conversation"
}

// minSelect and maxSelect read a block's bounds.
func minSelect(block map[string]any) int {
	if v, ok := block["minSelect"].(float64); ok {
		return int(v)
	}
	return 1
}

func maxSelect(block map[string]any, n int) int {
	if v, ok := block["maxSelect"].(float64); ok {
		return int(v)
	}
	return n
}
