package thinkingml

import (
	"sync"

	"github.com/llmstream/llmstream/transform/jsonstream"
)

// queryPaths watch the elements of the serp_queries list.
var queryPaths = jsonstream.MustCompile(jsonstream.Watch{Path: "[*]", Mode: jsonstream.Text})

// queryReader decodes the serp_queries list with the JSON tokenizer the
// JSON formats use (jsonstream's package comment, "The JSON readers").
// Its tokenizer and buffer are reused through queryReaders.
type queryReader struct {
	tok   jsonstream.Tokenizer
	query []byte // the query being read
	list  []string
	ok    bool
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
// list; a lone surrogate becomes U+FFFD, as everywhere.
func decodeQueries(b []byte) ([]string, bool) {
	r := queryReaders.Get().(*queryReader)
	defer queryReaders.Put(r)
	r.tok.Reset()
	r.list, r.ok = []string{}, true
	n := r.tok.Feed(b, r)
	r.tok.Close(r)
	list := r.list
	r.list = nil
	if !r.ok || !r.tok.Done() || skipSpace(b[n:]) != len(b)-n {
		return nil, false
	}
	return list, true
}

// HandleToken collects the list's strings and rejects what decodeQueries
// does not accept.
func (r *queryReader) HandleToken(tk *jsonstream.Token) {
	switch tk.Kind {
	case jsonstream.TokenStart:
		r.ok = r.ok && tk.Type == jsonstream.TypeString
		r.query = r.query[:0]
	case jsonstream.TokenText:
		r.query = append(r.query, tk.Text...)
	case jsonstream.TokenEnd:
		if r.ok {
			r.list = append(r.list, string(r.query))
		}
	case jsonstream.TokenViolation:
		r.ok = r.ok && tk.Code == jsonstream.CodeLoneSurrogate
	case jsonstream.TokenInvalid, jsonstream.TokenLimit:
		r.ok = false
	}
}
