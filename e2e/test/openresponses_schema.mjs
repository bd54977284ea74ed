// Our own JSON Schemas of the Open Responses wire, as llmstream's
// responses routes speak it: written for llmstream from the Open Responses
// specification, version 2026-04-24 (github.com/openresponses/openresponses:
// the specification page's rules on items, content, streaming and errors,
// and the members its OpenAPI document, public/openapi/openapi.json, marks
// required, with their types and enums), read and not copied. They cover
// what a responses route sends:
//
//   - the Response object (every member the spec requires, nullable where
//     the spec allows null), its usage, reasoning, text format, tools and
//     tool_choice;
//   - the output items: message, function_call, function_call_output,
//     reasoning, compaction, and mcp_call (OpenAI's item for the calls of
//     a tool the server runs, which the spec leaves to providers);
//   - the content parts an item or a part event may carry;
//   - every streamed event, by type: the response lifecycle, items,
//     content parts, output text, refusals, raw reasoning, reasoning
//     summaries, annotations, function call and mcp_call arguments, the
//     mcp_call lifecycle, and error;
//   - the WebSocket error frame and the response.compaction object;
//   - the response.create frame a client sends over a WebSocket (the
//     tests check their own requests with it).
//
// Where llmstream follows the SDKs rather than the spec
// (docs/openai.md, "Where the Open Responses spec and the SDKs
// disagree"), the schema says so at that member:
//   - raw reasoning streams as response.reasoning_text.delta / .done (the
//     spec's response.reasoning.delta / .done are refused: no SDK parses
//     them);
//   - a json_schema text format repeats the client's schema object (the
//     spec types it null);
//   - mcp_call and its response.mcp_call* events are OpenAI's names,
//     without the provider prefix the spec asks of extension items.
//
// Members a schema does not name are allowed, as the spec allows them. A
// few checks are stricter than the spec's document, where its prose asks
// more or llmstream always sends more (each is noted at its member): the
// Response's status and a reasoning item's status have their lifecycle's
// values, metadata is an object of strings.
// Unions are discriminated by `type`, so a failure names the one shape
// that was meant rather than every shape tried.
import Ajv2020 from 'ajv/dist/2020.js';

// The spec version these schemas were written from.
export const SPEC_VERSION = '2026-04-24';

const str = { type: 'string' };
const int = { type: 'integer' };
const num = { type: 'number' };
const bool = { type: 'boolean' };
const nul = { type: 'null' };
const ref = (name) => ({ $ref: `#/$defs/${name}` });
const orNull = (s) => ({ anyOf: [s, nul] });
const oneOf = (...values) => ({ type: 'string', enum: values });
const arrayOf = (s) => ({ type: 'array', items: s });

/**
 * shape is an object schema: every member of `must` present and of its
 * schema, the members of `may` of theirs when present.
 */
const shape = (must, may = {}) => ({
  type: 'object',
  required: Object.keys(must),
  properties: { ...must, ...may },
});

/**
 * byType is a union discriminated by `type`: the value is an object whose
 * type is one of the keys, and it holds that key's schema.
 */
const byType = (cases) => ({
  type: 'object',
  required: ['type'],
  properties: { type: { enum: Object.keys(cases) } },
  allOf: Object.entries(cases).map(([type, s]) => ({
    if: { properties: { type: { const: type } }, required: ['type'] },
    then: s,
  })),
});

/** typed is shape() with `type` fixed to name. */
const typed = (name, must, may) => shape({ type: { const: name }, ...must }, may);

// Item lifecycles. The spec gives every item in_progress, completed and
// incomplete; an mcp_call also ends failed (or waits, calling).
const itemStatus = oneOf('in_progress', 'completed', 'incomplete');

// The Response's own states: queued, in_progress, then one terminal state
// (the spec's document types status as any string; its prose and OpenAI's
// API name these).
const responseStatus = oneOf('queued', 'in_progress', 'completed', 'failed', 'incomplete', 'cancelled');

const $defs = {
  // Content parts. Output text always carries its annotations (possibly
  // none); logprobs, when sent, are per token.
  TopLogprob: shape({ token: str, logprob: num, bytes: arrayOf(int) }),
  Logprob: shape({ token: str, logprob: num, bytes: arrayOf(int), top_logprobs: arrayOf(ref('TopLogprob')) }),
  Annotation: byType({
    url_citation: typed('url_citation', { url: str, start_index: int, end_index: int, title: str }),
  }),
  InputText: typed('input_text', { text: str }),
  OutputText: typed('output_text', { text: str, annotations: arrayOf(ref('Annotation')) }, { logprobs: arrayOf(ref('Logprob')) }),
  Text: typed('text', { text: str }),
  SummaryText: typed('summary_text', { text: str }),
  ReasoningText: typed('reasoning_text', { text: str }),
  Refusal: typed('refusal', { refusal: str }),
  InputImage: typed('input_image', { image_url: orNull(str), detail: oneOf('low', 'high', 'auto') }),
  InputFile: typed('input_file', {}, { filename: str, file_url: str }),
  InputVideo: typed('input_video', { video_url: str }),
  // Any part an item may hold (messages may also hold video).
  Part: byType({
    input_text: ref('InputText'),
    output_text: ref('OutputText'),
    text: ref('Text'),
    summary_text: ref('SummaryText'),
    reasoning_text: ref('ReasoningText'),
    refusal: ref('Refusal'),
    input_image: ref('InputImage'),
    input_file: ref('InputFile'),
  }),
  MessagePart: byType({
    input_text: ref('InputText'),
    output_text: ref('OutputText'),
    text: ref('Text'),
    summary_text: ref('SummaryText'),
    reasoning_text: ref('ReasoningText'),
    refusal: ref('Refusal'),
    input_image: ref('InputImage'),
    input_file: ref('InputFile'),
    input_video: ref('InputVideo'),
  }),

  // Output items: each has an id and a type, and (the spec's items-are-
  // state-machines rule) a status, but for compaction items, which the
  // spec's own schema gives none.
  Message: typed(
    'message',
    {
      id: str,
      status: itemStatus,
      role: oneOf('user', 'assistant', 'system', 'developer'),
      content: arrayOf(ref('MessagePart')),
    },
    // phase labels an assistant message (added in 2026-04-24).
    { phase: oneOf('commentary', 'final_answer') },
  ),
  FunctionCall: typed('function_call', { id: str, call_id: str, name: str, arguments: str, status: itemStatus }),
  FunctionCallOutput: typed('function_call_output', {
    id: str,
    call_id: str,
    output: { anyOf: [str, arrayOf(byType({ input_text: ref('InputText'), input_image: ref('InputImage'), input_file: ref('InputFile') }))] },
    status: itemStatus,
  }),
  // The spec's reasoning item requires its summary (which may be empty);
  // raw reasoning (content) and encrypted_content are optional. Its
  // status is required here as for the other items (the spec's document
  // names none, its items-are-state-machines rule gives every item one,
  // and Codex reads it).
  Reasoning: typed('reasoning', { id: str, summary: arrayOf(ref('Part')), status: itemStatus }, {
    content: arrayOf(ref('Part')),
    encrypted_content: str,
  }),
  Compaction: typed('compaction', { id: str, encrypted_content: str }, { created_by: str }),
  // OpenAI's mcp_call (the spec defines no item for a call the server
  // runs): the server, the tool and its arguments, and once done its
  // output or its error (a string, or the object openai-go types).
  McpCall: typed(
    'mcp_call',
    { id: str, server_label: str, name: str, arguments: str, status: oneOf('in_progress', 'calling', 'completed', 'incomplete', 'failed') },
    {
      output: orNull(str),
      error: {
        anyOf: [nul, str, shape({ type: str }, { content: arrayOf(byType({ text: ref('Text') })) })],
      },
      approval_request_id: orNull(str),
    },
  ),
  Item: byType({
    message: ref('Message'),
    function_call: ref('FunctionCall'),
    function_call_output: ref('FunctionCallOutput'),
    reasoning: ref('Reasoning'),
    compaction: ref('Compaction'),
    mcp_call: ref('McpCall'),
  }),

  // The Response and its parts.
  Usage: shape({
    input_tokens: int,
    output_tokens: int,
    total_tokens: int,
    input_tokens_details: shape({ cached_tokens: int }),
    output_tokens_details: shape({ reasoning_tokens: int }),
  }),
  FunctionTool: typed('function', {
    name: str,
    description: orNull(str),
    parameters: orNull({ type: 'object' }),
    strict: orNull(bool),
  }),
  ToolChoice: {
    anyOf: [
      oneOf('none', 'auto', 'required'),
      typed('function', {}, { name: str }),
      typed('allowed_tools', { tools: arrayOf(typed('function', {}, { name: str })), mode: oneOf('none', 'auto', 'required') }),
    ],
  },
  TextFormat: byType({
    text: typed('text', {}),
    json_object: typed('json_object', {}),
    // schema: the client's schema object, as OpenAI repeats it (the
    // spec's document types it null).
    json_schema: typed('json_schema', {
      name: str,
      description: orNull(str),
      schema: orNull({ type: 'object' }),
      strict: bool,
    }),
  }),
  Response: shape({
    id: str,
    object: { const: 'response' },
    created_at: int,
    // null until the response is done (spec: "if it was completed").
    completed_at: orNull(int),
    status: responseStatus,
    incomplete_details: orNull(shape({ reason: str })),
    model: str,
    previous_response_id: orNull(str),
    instructions: orNull(str),
    output: arrayOf(ref('Item')),
    error: orNull(shape({ code: str, message: str })),
    tools: arrayOf(ref('FunctionTool')),
    tool_choice: ref('ToolChoice'),
    truncation: oneOf('auto', 'disabled'),
    parallel_tool_calls: bool,
    text: shape({ format: ref('TextFormat') }, { verbosity: oneOf('low', 'medium', 'high') }),
    top_p: num,
    presence_penalty: num,
    frequency_penalty: num,
    top_logprobs: int,
    temperature: num,
    reasoning: orNull(shape({
      effort: orNull(oneOf('none', 'low', 'medium', 'high', 'xhigh')),
      summary: orNull(oneOf('concise', 'detailed', 'auto')),
    })),
    usage: orNull(ref('Usage')),
    max_output_tokens: orNull(int),
    max_tool_calls: orNull(int),
    store: bool,
    background: bool,
    service_tier: str,
    // The spec's document leaves the echoed metadata untyped; what a
    // client may send is an object of strings, so that is what comes back.
    metadata: { type: 'object', additionalProperties: str },
    safety_identifier: orNull(str),
    prompt_cache_key: orNull(str),
  }),

  // POST /responses/compact answers a response.compaction object.
  Compacted: shape({
    id: str,
    object: { const: 'response.compaction' },
    output: arrayOf(ref('Item')),
    created_at: int,
    usage: ref('Usage'),
  }),

  // A WebSocket turn that fails before it has a response is one error
  // frame with an HTTP-like status.
  WebSocketError: shape({
    type: { const: 'error' },
    status: int,
    error: shape({ code: str, message: str }, { type: str, param: orNull(str) }),
  }),

  // What a client sends over a WebSocket: a create body with its type,
  // and none of the HTTP-only members (stream, stream_options,
  // background). Input items are checked by kind and required members.
  InputItem: {
    anyOf: [
      // an item_reference may leave out its type
      shape({ id: str }, { type: orNull({ const: 'item_reference' }) }),
      byType({
        message: typed('message', {
          role: oneOf('user', 'assistant', 'system', 'developer'),
          content: { anyOf: [str, arrayOf(ref('MessagePart'))] },
        }, { phase: oneOf('commentary', 'final_answer') }),
        function_call: typed('function_call', { call_id: str, name: str, arguments: str }),
        function_call_output: typed('function_call_output', {
          call_id: { type: 'string', minLength: 1, maxLength: 64 },
          output: { anyOf: [str, { type: 'array' }] },
        }),
        reasoning: typed('reasoning', { summary: arrayOf(ref('SummaryText')) }),
        compaction: typed('compaction', { encrypted_content: str }),
        item_reference: typed('item_reference', { id: str }),
      }),
    ],
  },
  ResponseCreate: {
    ...shape({ type: { const: 'response.create' } }, {
      model: orNull(str),
      input: orNull({ anyOf: [str, arrayOf(ref('InputItem'))] }),
      previous_response_id: orNull(str),
      instructions: orNull(str),
      store: bool,
      tools: orNull(arrayOf(typed('function', { name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' } }))),
    }),
    not: { anyOf: [{ required: ['stream'] }, { required: ['stream_options'] }, { required: ['background'] }] },
  },
};

// Streamed events. Each has its type and a sequence_number; the rest by
// kind: a response snapshot, an item at an output_index, or a change to an
// item (item_id, output_index) at a content or summary index.
const event = (must, may) => shape({ sequence_number: int, ...must }, may);
const inItem = (must, may) => event({ item_id: str, output_index: int, ...must }, may);
const inContent = (must, may) => inItem({ content_index: int, ...must }, may);
const inSummary = (must, may) => inItem({ summary_index: int, ...must }, may);
const withLogprobs = { logprobs: arrayOf(ref('Logprob')) };
const obfuscation = { obfuscation: str };

const snapshot = event({ response: ref('Response') });
const itemEvent = event({ output_index: int, item: orNull(ref('Item')) });

/** eventShapes are the events a responses route may send, by type. */
const eventShapes = {
  'response.created': snapshot,
  'response.queued': snapshot,
  'response.in_progress': snapshot,
  'response.completed': snapshot,
  'response.failed': snapshot,
  'response.incomplete': snapshot,
  'response.output_item.added': itemEvent,
  'response.output_item.done': itemEvent,
  'response.content_part.added': inContent({ part: ref('Part') }),
  'response.content_part.done': inContent({ part: ref('Part') }),
  'response.output_text.delta': inContent({ delta: str }, { ...withLogprobs, ...obfuscation }),
  'response.output_text.done': inContent({ text: str }, withLogprobs),
  'response.output_text.annotation.added': inContent({ annotation_index: int, annotation: orNull(ref('Annotation')) }),
  'response.refusal.delta': inContent({ delta: str }),
  'response.refusal.done': inContent({ refusal: str }),
  // Raw reasoning, under the names the SDKs parse (the spec's
  // response.reasoning.delta / .done carry the same members).
  'response.reasoning_text.delta': inContent({ delta: str }, obfuscation),
  'response.reasoning_text.done': inContent({ text: str }),
  'response.reasoning_summary_part.added': inSummary({ part: ref('Part') }),
  'response.reasoning_summary_part.done': inSummary({ part: ref('Part') }),
  'response.reasoning_summary_text.delta': inSummary({ delta: str }, obfuscation),
  'response.reasoning_summary_text.done': inSummary({ text: str }),
  'response.function_call_arguments.delta': inItem({ delta: str }, obfuscation),
  'response.function_call_arguments.done': inItem({ arguments: str }),
  // OpenAI's events of an mcp_call item.
  'response.mcp_call_arguments.delta': inItem({ delta: str }),
  'response.mcp_call_arguments.done': inItem({ arguments: str }),
  'response.mcp_call.in_progress': inItem({}),
  'response.mcp_call.completed': inItem({}),
  'response.mcp_call.failed': inItem({}),
  error: event({
    error: shape({ type: str, code: orNull(str), message: str, param: orNull(str) }, { headers: { type: 'object', additionalProperties: str } }),
  }),
};

/** eventTypes are the event types the schemas know. */
export const eventTypes = Object.freeze(Object.keys(eventShapes));

// One document: $defs, and each event under Event/<type>. strict refuses
// a keyword ajv does not know (a typo would check nothing); strictTypes is
// off because a discriminator's `if` names members without a type.
const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
ajv.addSchema({
  $id: 'llmstream:openresponses',
  $defs: {
    ...$defs,
    Event: Object.fromEntries(Object.entries(eventShapes).map(([type, s]) => [type, { ...s, required: ['type', ...s.required], properties: { type: { const: type }, ...s.properties } }])),
  },
});

const validators = new Map();
/** validator returns the compiled schema at a $defs path ('Response', 'Event/error'). */
function validator(path) {
  let v = validators.get(path);
  if (!v) {
    const pointer = path.split('/').map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
    v = ajv.getSchema(`llmstream:openresponses#/$defs/${pointer}`);
    if (!v) throw new Error(`no schema ${path}`);
    validators.set(path, v);
  }
  return v;
}

/**
 * check validates value against the schema named (a $defs name, or
 * Event/<type>) and returns what is wrong, one line each, or [].
 * A union's "must match then" line is left out: the lines under it say
 * what is wrong.
 */
export function check(name, value) {
  const v = validator(name);
  if (v(value)) return [];
  return v.errors
    .filter((e) => e.keyword !== 'if')
    .map((e) => `${name}${e.instancePath}: ${e.message} ${JSON.stringify(e.params)}`);
}

/** hasEventShape says whether type is an event the schemas know. */
export const hasEventShape = (type) => Object.hasOwn(eventShapes, type);
