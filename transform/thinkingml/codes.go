package thinkingml

import "github.com/llmstream/llmstream/transform/serp"

// The violation codes the parser reports (transform.KindViolation). Each is
// a structural anomaly after which the model's text still reaches the
// client, tags included (CONTRACT.md §4, §7); Offset is where in the reply
// it was found and Text a short detail, usually the tag involved.
const (
	// CodeUnexpectedText: non-whitespace text at top level, outside every
	// block (PARSING.md TM25, TM18). It becomes answer text; reported once
	// per run of such text.
	CodeUnexpectedText = "unexpected_text"
	// CodeTrailingText: text after </final> (TM33). It becomes answer text
	// again, in a new answer section.
	CodeTrailingText = "trailing_text"
	// CodeTextOutsidePhase: text inside <thinking> but outside every
	// <phase>. It opens an implicit phase titled ParserOptions.ReasoningTitle.
	CodeTextOutsidePhase = "text_outside_phase"
	// CodeUnknownTag: a tag outside the whitelist of specs/000 §2 (<note>,
	// </note>, <br/>) in <think>, <serp> or <thinking>. Text is the tag name,
	// with a leading "/" for a closing tag. The tag stays text (TM19).
	CodeUnknownTag = "unknown_tag"
	// CodeMisplacedTag: a whitelisted tag where it has no meaning (<think>
	// inside a phase, <title/>). Text is the tag name. The tag stays text.
	CodeMisplacedTag = "misplaced_tag"
	// CodeMiscasedTag: a tag spelled like a whitelisted one but for the
	// case of its letters (<Think>, </FINAL>, <Phase id="1">). Tags are
	// case-sensitive (PARSING.md TM18), so it stays text. Text is the name
	// as written, with a leading "/" for a closing tag.
	CodeMiscasedTag = "miscased_tag"
	// CodeStrayCloseTag: a closing tag with nothing to close (</think> at
	// top level, </phase> between phases, </final> after text that no
	// <final> opened). It stays text where it stands (CONTRACT.md §7), so
	// the words around it are not glued together.
	CodeStrayCloseTag = "stray_close_tag"
	// CodeLiteralFinalTag: a literal <final> or </final> inside <thinking>
	// or <think>, which specs/000 §1 forbids. It is text, escaped in the raw
	// reply as &lt;final&gt; / &lt;/final&gt;.
	CodeLiteralFinalTag = "literal_final_tag"
	// CodeTagTooLong: a <phase …> tag whose attributes outgrew
	// Limits.MaxTagBytes (a model adding an attribute). The bytes held are
	// released as text where they stand, and the scan goes on (CONTRACT.md
	// §7: only max_reply, max_sse_line and max_block end a stream). Text is
	// "phase" as written.
	CodeTagTooLong = "tag_too_long"
	// CodeAttrSyntax: a <phase> tag whose attributes are not exactly
	// id="N": other quotes, no quotes, extra spaces or attributes (TM21).
	CodeAttrSyntax = "attr_syntax"
	// CodeBadPhaseID: a <phase> without an id, or whose id is not a positive
	// integer (TM21). The phase gets the previous id + 1.
	CodeBadPhaseID = "bad_phase_id"
	// CodePhaseOrder: a phase id that is not the previous id + 1
	// (specs/000 §3, TM22).
	CodePhaseOrder = "phase_order"
	// CodeDuplicatePhaseID: a phase id used before (TM22).
	CodeDuplicatePhaseID = "duplicate_phase_id"
	// CodeMissingTitle: a phase whose text (or end) comes before any
	// <title>; it is titled ParserOptions.ReasoningTitle.
	CodeMissingTitle = "missing_title"
	// CodeEmptyTitle: a <title> with only whitespace; the phase is titled
	// ParserOptions.ReasoningTitle.
	CodeEmptyTitle = "empty_title"
	// CodeTitleAfterText: a <title> after phase text. It stays text.
	CodeTitleAfterText = "title_after_text"
	// CodeImplicitPhaseClose: </thinking> or a new <phase> while a phase is
	// open; the phase is closed there (TM24).
	CodeImplicitPhaseClose = "implicit_phase_close"
	// CodeBlockOrder: a block out of the order of specs/000 §1 (<serp> after
	// <thinking>, <think> after <serp>, …). It is parsed all the same.
	CodeBlockOrder = "block_order"
	// CodeDuplicateBlock: a second <think>, <serp>, <thinking> or <final>.
	// It is parsed all the same.
	CodeDuplicateBlock = "duplicate_block"
	// CodeMissingThinking: no <thinking> block before <final> or the end.
	CodeMissingThinking = "missing_thinking"
	// CodeMissingPhase: no <phase> tag before <final> or the end.
	CodeMissingPhase = "missing_phase"
	// CodeMissingFinal: the reply ended without a <final> block.
	CodeMissingFinal = "missing_final"
	// CodeMissingSerpQueries: a <final> without the serp_queries comment
	// (specs/000 §4 "默认必须").
	CodeMissingSerpQueries = "missing_serp_queries"
	// CodeSerpQueriesJSON: a serp_queries comment whose body is not a JSON
	// array of strings (TM29). The comment stays answer text.
	CodeSerpQueriesJSON = "serp_queries_json"
	// CodeSerpQueriesCleaned: the query list broke a rule of specs/000 §4
	// and was cleaned (serp.CleanQueries). Text names the rule:
	// "too_many", "duplicate", "too_long", "sensitive" or "empty". jsonl
	// reports the same code for its serp_queries event.
	CodeSerpQueriesCleaned = serp.CodeQueriesCleaned
	// CodeDuplicateSerpQueries: a second serp_queries comment in one answer.
	// It stays answer text.
	CodeDuplicateSerpQueries = "duplicate_serp_queries"
	// CodeContentAfterSerpQueries: answer text after the serp_queries
	// comment, which specs/000 §4 puts last (TM32).
	CodeContentAfterSerpQueries = "content_after_serp_queries"
	// CodeParsingErrorMarker: <<ParsingError>> somewhere other than as the
	// whole reply (TM17). It stays text.
	CodeParsingErrorMarker = "parsing_error_marker"
	// CodeUnterminatedThink: the reply ended inside <think> (TM09).
	CodeUnterminatedThink = "unterminated_think"
	// CodeUnterminatedSerp: the reply ended inside <serp>, or <thinking> or
	// <final> began before </serp>.
	CodeUnterminatedSerp = "unterminated_serp"
	// CodeUnterminatedThinking: the reply ended inside <thinking>.
	CodeUnterminatedThinking = "unterminated_thinking"
	// CodeUnterminatedPhase: the reply ended inside a <phase>.
	CodeUnterminatedPhase = "unterminated_phase"
	// CodeUnterminatedTitle: the reply, the phase or <thinking> ended inside
	// a <title>.
	CodeUnterminatedTitle = "unterminated_title"
	// CodeUnterminatedFinal: the reply ended inside <final> (TM10).
	CodeUnterminatedFinal = "unterminated_final"
	// CodeUnterminatedComment: the reply or the answer ended inside a
	// serp_queries comment (TM30). The held comment is answer text.
	CodeUnterminatedComment = "unterminated_comment"
	// CodeInvalidUTF8: the reply ended inside a UTF-8 sequence (TM34). The
	// bytes are passed on as they are.
	CodeInvalidUTF8 = "invalid_utf8"
)
