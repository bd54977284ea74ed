// Package thinkingml parses a ThinkingML v4.5 reply (specs/000) while it
// streams and emits the shared events of package transform.
//
// # Events
//
//	<think>…</think>                    ReasoningStart, ReasoningDelta…, ReasoningEnd
//	<serp>…</serp>                      one SerpSummary with the whole text, verbatim
//	<thinking>…</thinking>              ThinkingStart … ThinkingEnd
//	<phase id="N"><title>T</title>x</phase>
//	                                    PhaseStart{N, T} at </title> (T trimmed),
//	                                    PhaseDelta{N}… for x, PhaseEnd{N}
//	<final>md<!-- <serp_queries>
//	[…]
//	</serp_queries> --></final>         AnswerStart, AnswerDelta… (md verbatim),
//	                                    SerpQueries (cleaned), AnswerEnd
//
// Every input byte is also emitted, in order, as KindRaw: the raw reply for
// the gymbro protocol. Its only change is that a literal <final> or
// </final> that is text inside <thinking> or <think> becomes &lt;final&gt;
// or &lt;/final&gt; (CONTRACT.md §4, specs/000 §1 "兼容性"; for <think>
// this is our choice, since it would break a gymbro client's parser the
// same way). Raw follows the same hold-back as the structure and never ends
// mid-rune.
//
// # Scanner
//
// One pass (PARSING.md §5.3). In text, bytes.IndexByte finds the next '<'
// and the text before it is emitted as one event, a sub-slice of the input.
// From '<', bytes are held only while they may still be a tag legal in the
// current state (a small static table per state, see stateRules); when
// they cannot, they are text and the scan resumes at the next '<' inside
// them (TM15 "<<think>"). Held bytes are bounded by the longest legal tag
// (<<ParsingError>>, 16 bytes), a tag name held only to report it as
// unknown by 32 bytes, a <phase> tag by Limits.MaxTagBytes. Text events never end mid-rune
// (parsekit.RuneCarry). Each byte is examined O(1) times; nothing is
// re-parsed. Event Text is borrowed: valid only until emit returns.
//
// # Policies
//
// Lose nothing (CONTRACT.md §7): every structural anomaly is a
// KindViolation (Code, Offset in the reply, Text a short detail such as
// the tag name; the codes are the Code constants of this package) and the
// model's text still reaches the client, verbatim and tags included: a
// byte of the reply is left out of the text events only when it is markup
// that acts (a tag that opens or closes a section, structural whitespace,
// the serp_queries comment, which becomes SerpQueries). Only these are
// fatal, as a KindError after which input is ignored (open sections are
// closed first):
//   - the whole reply, modulo surrounding whitespace (at most 256 bytes on
//     either side), being exactly <<ParsingError>>:
//     transform.CodeModelParsingError, and no other event at all, not even
//     Raw. Until that is settled the start of the reply is held.
//   - a held block (<title>, <serp>, serp_queries comment) longer than
//     Limits.MaxBlockBytes: transform.CodeBlockTooLong. Its first
//     MaxBlockBytes bytes, cut to whole characters, are delivered first as
//     what the block would have become: the summary, the text of a phase
//     titled ReasoningTitle (missing_title), answer text.
//
// A <phase …> tag longer than Limits.MaxTagBytes (a model adding an
// attribute) is not fatal: the held bytes are released as text where they
// stand, reported as tag_too_long, and the scan goes on.
//
// Whitespace before the first tag and between blocks gives no events
// (TM04, TM05), except where it stands between answer text and top-level
// text after it (after </final>, which a code sample inside <final> may
// write early): there it is the answer's, so that the words on either
// side of the markup are not glued together. Text inside <think>, phase bodies and <final> is verbatim,
// leading and trailing newlines included, except the whitespace right
// before a serp_queries comment, which goes with the comment (TM27). The
// whitespace between <phase> and <title> (or the phase's first text) and
// around a title is structural. </think> needs no newline after it (TM06).
// Empty blocks give paired start and end events with no deltas (TM07).
//
// Non-whitespace text at top level, outside every block (before, between
// or after blocks, TM25; a reply that ignored the format; <Think> and
// other tags not legal there, TM18), becomes answer text: AnswerStart is
// emitted if needed and AnswerEnd at the next structural tag or the end.
// Whitespace inside such a run is answer text. Each run is reported once:
// unexpected_text, or trailing_text after </final> (TM33). A closing tag
// with nothing to close (</think> at top level, </phase> between phases,
// </final> after text that no <final> opened) is reported as
// stray_close_tag and stays text where it stands, so that the words
// around it are not glued together (TM25).
//
// Inside <thinking> but outside any phase whitespace is ignored; other text
// (an unknown tag too, TM19) opens an implicit phase with the previous id
// + 1 and title ParserOptions.ReasoningTitle (text_outside_phase), closed
// by the next <phase>, </phase> or </thinking>.
//
// Tags: inside <final> nothing is a tag but </final> and "<!--" (TM11,
// TM12). Inside <think>, <serp>, <thinking>, phases and titles a tag
// outside the whitelist of specs/000 §2 stays text and is reported as
// unknown_tag, a whitelisted one with no meaning there as misplaced_tag
// (Text: the name, "/name" for a closing tag). Only <name>, </name> and
// <name/> count as tags for these reports; "<name " is text, so that
// "a <b and" is not reported. Everything is case-sensitive (TM18); "<think
// >" and "<think/>" are not <think>. A whitelisted name in another letter
// case (<Think>, </FINAL>, <Phase id="1">) is reported as miscased_tag
// wherever the exact tag would be one, <final> and top level included,
// and stays text. A literal <final> or </final> inside
// <thinking> or <think> is text (plain in the deltas, escaped in Raw) and
// is reported as literal_final_tag, since specs/000 §1 forbids it.
// <<ParsingError>> anywhere but as the whole reply is text, reported as
// parsing_error_marker (TM17).
//
// <serp>: <thinking> or <final> before </serp> ends it (unterminated_serp),
// so that a missing </serp> cannot swallow the reply.
//
// Phases: id="N", id='N', id=N and extra spaces are accepted (TM21); any
// form but exactly <phase id="N"> is reported as attr_syntax. An id that is
// missing or not a positive integer (at most 9 digits) is bad_phase_id and
// the phase gets the previous id + 1; an id used before is
// duplicate_phase_id (TM22); otherwise an id that is not the previous + 1
// is phase_order. A phase whose text, </phase>, </thinking> or next <phase>
// comes before any <title> is titled ReasoningTitle (missing_title); a
// title of whitespace only likewise (empty_title); a <title> after phase
// text stays text (title_after_text). </phase> or </thinking> inside a
// title ends it (unterminated_title). </thinking> or <phase> with a phase
// open closes it (implicit_phase_close, TM24; not reported for implicit
// phases).
//
// Block order (specs/000 §1): a block out of order (<serp> after
// <thinking>, <think> after <serp>, …) is block_order, a second <think>,
// <serp>, <thinking> or <final> is duplicate_block; either is parsed and
// emitted all the same. missing_thinking and missing_phase are reported
// when <final> arrives or at the end, missing_final at the end.
//
// Serp comment (specs/000 §4, PARSING.md §5.4): in <final>, "<!--" is held
// while it may still open the serp_queries comment (whitespace, then
// <serp_queries>); any other comment is released as answer text as soon as
// it differs (TM28). The serp_queries comment is held, bounded by
// MaxBlockBytes, until "-->". If its trimmed body is <serp_queries> … </serp_queries>
// around a JSON array of strings, it and the whitespace before it are
// removed from the answer and become one SerpQueries, cleaned (see
// serp.CleanQueries: trimmed, empty ones and those holding an e-mail address,
// phone number or IP address dropped, cut to 80 runes, duplicates dropped,
// at most 5; every rule broken is reported as serp_queries_cleaned). An
// empty array gives an empty, non-nil List. A body that is not such an
// array ("[\"q1\",]", "['q1']") is serp_queries_json and the comment stays
// answer text (TM29); so does a second serp_queries comment
// (duplicate_serp_queries). Text after the comment is
// content_after_serp_queries (TM32); whitespace after it is dropped. A
// <final> without the comment is missing_serp_queries. A </final> inside
// the held comment, or the end of the reply, ends it as
// unterminated_comment and the held comment is emitted as answer text:
// PARSING.md TM30 says "not emitted as F", but CONTRACT.md §4 says never
// lose the model's text, and that wins.
//
// End of reply: held bytes are text (TM10: a held "<th" is flushed);
// every open section is closed and reported (unterminated_think,
// unterminated_serp, unterminated_thinking, unterminated_phase,
// unterminated_title, unterminated_final, unterminated_comment), each
// violation right after its end event (TM09). An incomplete UTF-8 sequence
// at the end is emitted as it is and reported as invalid_utf8 (TM34).
//
// A <think> the chat template opened in the prompt (TM08, think_tags
// prefilled) is read in front of this parser, by transform/thinktags, as
// for every format.
package thinkingml
