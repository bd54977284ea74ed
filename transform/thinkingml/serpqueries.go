package thinkingml

import (
	"sync"

	"github.com/llmstream/llmstream/transform/jsonstream"
)

// queryPaths watch the elements of the serp_queries list.
var queryPaths = jsonstream.MustCompile(jsonstream.Watch{Path: "[*]", Mode: jsonstream.Text})

// queryReader decodes the serp_queries list with the JSON tokenizer the
// JSON formats use (jsonstream's package comment, "The JSON readers").
// Its tokenizer and buffers are reused through queryReaders.
type queryReader struct {
	tok  jsonstream.Tokenizer
	text []byte // the queries' text, one after the other
	ends []int  // where each query ends in text
	ok   bool
}

// queryReaders keeps queryReaders between replies: a list is decoded once
// per reply, and a tokenizer's buffers are worth reusing.
var queryReaders = sync.Pool{New: func() any {
	r := &queryReader{}
	r.tok.Init(jsonstream.Config{Paths: queryPaths, Doc: jsonstream.DocBare, Root: jsonstream.TypeArray})
	return r
}}

// decodeQueries decodes the body of the serp_queries comment: a JSON array
// of strings and nothing else (TM29: ["q1",] and ['q1'] are not). The
// comment is held whole, so it is decoded in one Feed. It is strict where
// the JSON formats are lenient: an element that is not a string (null
// included), an invalid escape or a raw control character rejects the
// list; a lone surrogate becomes U+FFFD, as everywhere. The list and its
// strings are allocated once each: the strings share one backing string.
func decodeQueries(b []byte) ([]string, bool) {
	r := queryReaders.Get().(*queryReader)
	defer queryReaders.Put(r)
	r.tok.Reset()
	r.text, r.ends, r.ok = r.text[:0], r.ends[:0], true
	n := r.tok.Feed(b, r)
	r.tok.Close(r)
	if !r.ok || !r.tok.Done() || skipSpace(b[n:]) != len(b)-n {
		return nil, false
	}
	all := string(r.text)
	list := make([]string, len(r.ends))
	start := 0
	for i, end := range r.ends {
		list[i] = all[start:end]
		start = end
	}
	return list, true
}

// HandleToken collects the list's strings and rejects what decodeQueries
// does not accept.
func (r *queryReader) HandleToken(tk *jsonstream.Token) {
	switch tk.Kind {
	case jsonstream.TokenStart:
		r.ok = r.ok && tk.Type == jsonstream.TypeString
	case jsonstream.TokenText:
		r.text = append(r.text, tk.Text...)
	case jsonstream.TokenEnd:
		r.ends = append(r.ends, len(r.text))
	case jsonstream.TokenViolation:
		r.ok = r.ok && tk.Code == jsonstream.CodeLoneSurrogate
	case jsonstream.TokenInvalid, jsonstream.TokenLimit:
		r.ok = false
	}
}
