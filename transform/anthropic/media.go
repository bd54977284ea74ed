package anthropic

import (
	"bytes"
	"encoding/base64"
	"image"
	_ "image/gif"  // registers GIF for image.DecodeConfig
	_ "image/jpeg" // registers JPEG
	_ "image/png"  // registers PNG
	"math"
)

// pdfBytesPerPage is the size that stands for a page when a PDF's pages
// cannot be counted (its page objects are in compressed object streams).
const pdfBytesPerPage = 100 << 10

// mediaTokens prices a string that is an image or a PDF (EstimateTokens):
// a data: URL of an image or a PDF, or the url of an image_url part. It
// reports false for any other string.
func mediaTokens(raw []byte, imageURL bool) (int, bool) {
	switch {
	case bytes.HasPrefix(raw, []byte("data:image/")):
		w, h, ok := imageSize(base64Payload(raw))
		if !ok {
			return imageMaxTokens, true
		}
		return imageTokens(w, h), true
	case bytes.HasPrefix(raw, []byte("data:application/pdf")):
		return pdfPageTokens * pdfPages(base64Payload(raw)), true
	case imageURL:
		return imageMaxTokens, true
	}
	return 0, false
}

// base64Payload returns the data of a base64 data: URL, with the JSON
// escape "\/" undone (a JSON encoder may write base64's slashes so).
func base64Payload(raw []byte) []byte {
	i := bytes.Index(raw, []byte(";base64,"))
	if i < 0 {
		return nil
	}
	data := raw[i+len(";base64,"):]
	if bytes.IndexByte(data, '\\') >= 0 {
		data = bytes.ReplaceAll(data, []byte(`\/`), []byte("/"))
	}
	return data
}

// imageSize reads an image's width and height from its header, decoding
// only as much base64 as the header needs.
func imageSize(data []byte) (int, int, bool) {
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data)))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// imageTokens is Anthropic's price of a w×h image: width × height / 750,
// after scaling the long edge down to imageMaxEdge, at most
// imageMaxTokens.
func imageTokens(w, h int) int {
	fw, fh := float64(w), float64(h)
	if long := math.Max(fw, fh); long > imageMaxEdge {
		fw, fh = fw*imageMaxEdge/long, fh*imageMaxEdge/long
	}
	return int(math.Min(math.Ceil(fw*fh/750), imageMaxTokens))
}

// pdfPages counts a base64 PDF's pages by their /Type /Page objects; a PDF
// whose objects are compressed counts a page per pdfBytesPerPage.
func pdfPages(data []byte) int {
	pdf := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, _ := base64.StdEncoding.Decode(pdf, data)
	pdf = pdf[:n]
	pages := 0
	for _, marker := range [][]byte{[]byte("/Type /Page"), []byte("/Type/Page")} {
		for rest := pdf; ; {
			i := bytes.Index(rest, marker)
			if i < 0 {
				break
			}
			rest = rest[i+len(marker):]
			if len(rest) == 0 || rest[0] != 's' { // not /Type /Pages
				pages++
			}
		}
	}
	if pages == 0 {
		pages = 1 + len(pdf)/pdfBytesPerPage
	}
	return pages
}
