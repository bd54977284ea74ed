package skillpet

import (
	"encoding/json"
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// Images a tool generates (CONTRACT.md §13, specs/002 §3.7): a call to a
// tool the route marks as an image tool shows image_generating {id,
// prompt} while it runs, and its result image_generation {id, prompt,
// images, mode}: the images the result carries, each with the URL the
// client fetches it at, in the route's mode (display, single_select,
// multi_select, with minSelect and maxSelect for a selection). The block's
// id is "img-" and the call id; a call whose result has images but whose
// tool is not marked shows image_generation only, for display.

// ImageBlockID is the id of the image block of call id.
func ImageBlockID(callID string) string { return "img-" + callID }

// promptOf returns the "prompt" argument of a call's arguments, "" when
// there is none.
func promptOf(args []byte) string {
	var a struct {
		Prompt string `json:"prompt"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Prompt
}

// appendImageGenerating appends image_generating {id, prompt}.
func appendImageGenerating(dst []byte, callID, prompt string) []byte {
	dst = append(dst, "event: image_generating\ndata: {\"id\":"...)
	dst = jsonout.AppendStringS(dst, ImageBlockID(callID))
	if prompt != "" {
		dst = append(dst, `,"prompt":`...)
		dst = jsonout.AppendStringS(dst, prompt)
	}
	return append(dst, "}\n\n"...)
}

// appendImageGeneration appends image_generation for a call's images.
func appendImageGeneration(dst []byte, callID, prompt, mode string, images []transform.Image) []byte {
	if mode == "" || len(images) == 0 {
		mode = "display" // nothing to choose from
	}
	dst = append(dst, "event: image_generation\ndata: "...)
	dst = AppendImageBlock(dst, ImageBlockID(callID), prompt, mode, images)
	return append(dst, "\n\n"...)
}

// AppendImageBlock appends the image_generation object: what the event
// carries, and what the conversation stores after "[image_generation] ".
func AppendImageBlock(dst []byte, id, prompt, mode string, images []transform.Image) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonout.AppendStringS(dst, id)
	if prompt != "" {
		dst = append(dst, `,"prompt":`...)
		dst = jsonout.AppendStringS(dst, prompt)
	}
	dst = append(dst, `,"images":[`...)
	for i, im := range images {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = jsonout.AppendStringS(dst, im.ID)
		dst = append(dst, `,"url":`...)
		dst = jsonout.AppendStringS(dst, im.URL)
		if im.Label != "" {
			dst = append(dst, `,"label":`...)
			dst = jsonout.AppendStringS(dst, im.Label)
		}
		if im.Width > 0 && im.Height > 0 {
			dst = append(dst, `,"width":`...)
			dst = strconv.AppendInt(dst, int64(im.Width), 10)
			dst = append(dst, `,"height":`...)
			dst = strconv.AppendInt(dst, int64(im.Height), 10)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"mode":`...)
	dst = jsonout.AppendStringS(dst, mode)
	switch mode {
	case "single_select":
		dst = append(dst, `,"minSelect":1,"maxSelect":1`...)
	case "multi_select":
		dst = append(dst, `,"minSelect":1,"maxSelect":`...)
		dst = strconv.AppendInt(dst, int64(len(images)), 10)
	}
	return append(dst, '}')
}
