// The Open Responses specification's own definitions (its OpenAPI
// document, e2e/testdata/openresponses/openapi.json, 2026-04-24), compiled
// with ajv: every Response, streamed event and WebSocket frame the e2e
// tests receive from a responses route is checked against them.
//
// Where the spec and the SDKs disagree llmstream follows the SDKs (README,
// "Where the Open Responses spec and the SDKs disagree"); each such point
// is named here and checked in its SDK shape instead:
//   - raw reasoning streams as response.reasoning_text.delta / .done (what
//     openai-node, openai-go and Codex parse), where the spec names them
//     response.reasoning.delta / .done: the event is checked against the
//     spec's schema of the same event under the spec's name;
//   - a json_schema text format repeats its schema object, where the
//     spec's JsonSchemaResponseFormat says schema is null: a Response
//     carrying one is checked with that member set aside.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';

export const spec = JSON.parse(readFileSync(new URL('../testdata/openresponses/openapi.json', import.meta.url), 'utf8'));

// strict: false, so that the document's annotations (discriminator,
// x-enumDescriptions, example) are read as what they are; every
// constraint keyword is enforced.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ ...spec, $id: 'openresponses.json' });

/** schema returns the compiled validator of components.schemas[name]. */
export function schema(name) {
  const v = ajv.getSchema(`openresponses.json#/components/schemas/${name}`);
  assert.ok(v, `the spec defines ${name}`);
  return v;
}

/** errorsOf returns a validator's errors as one line each, or []. */
export function errorsOf(name, value) {
  const v = schema(name);
  if (v(value)) return [];
  return v.errors.map((e) => `${name}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

// The streamed events the spec defines, by type: the text/event-stream
// union of POST /responses.
const eventSchemas = new Map();
for (const ref of spec.paths['/responses'].post.responses['200'].content['text/event-stream'].schema.oneOf) {
  const name = ref.$ref.split('/').at(-1);
  eventSchemas.set(spec.components.schemas[name].properties.type.enum[0], name);
}

/** The SDKs' names of the spec's raw reasoning events. */
const sdkNames = new Map([
  ['response.reasoning_text.delta', 'response.reasoning.delta'],
  ['response.reasoning_text.done', 'response.reasoning.done'],
]);

/**
 * eventErrors checks one event (transport 'http' for an SSE event,
 * 'websocket' for a frame, where a failure before the response is a
 * WebSocketErrorEvent) and returns what the spec finds wrong with it.
 */
export function eventErrors(ev, transport = 'http') {
  if (transport === 'websocket' && ev?.type === 'error' && 'status' in ev) return errorsOf('WebSocketErrorEvent', ev);
  let type = ev?.type;
  let value = ev;
  if (sdkNames.has(type)) {
    type = sdkNames.get(type);
    value = { ...ev, type };
  }
  const name = eventSchemas.get(type);
  if (!name) return [`${ev?.type}: not an event the spec defines`];
  if (value.response) value = { ...value, response: responseForSchema(value.response) };
  return errorsOf(name, value);
}

/** responseForSchema sets aside a json_schema format's schema (see above). */
function responseForSchema(r) {
  if (r?.text?.format?.type !== 'json_schema') return r;
  return { ...r, text: { ...r.text, format: { ...r.text.format, schema: null } } };
}

/** responseErrors checks a Response object (ResponseResource). */
export function responseErrors(r) {
  return errorsOf('ResponseResource', responseForSchema(r));
}

/** assertEvent and assertResponse fail on what the spec finds wrong. */
export function assertEvent(ev, transport = 'http') {
  const errs = eventErrors(ev, transport);
  assert.deepEqual(errs, [], `${ev?.type} breaks the Open Responses schema:\n${errs.join('\n')}\n${JSON.stringify(ev)}`);
}

export function assertResponse(r) {
  const errs = responseErrors(r);
  assert.deepEqual(errs, [], `the Response breaks the Open Responses schema:\n${errs.join('\n')}\n${JSON.stringify(r)}`);
}
