// The checks of openresponses.mjs (our schemas of the Open Responses wire,
// 2026-04-24, and the spec's state rules) against llmstream's own output
// and against broken copies of it. No Caddy is needed: the fixtures are
// the responses encoder's goldens (transform/responses/testdata: every
// scenario of transform/encodertest, streamed and whole: text, reasoning,
// tool calls, the agent loop's mcp_call items, failures, cut replies),
// which must pass, and each broken copy must be caught, with a message
// that names what is wrong. A check that cannot fail checks nothing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { compactedErrors, eventErrors, requestErrors, responseErrors } from './openresponses.mjs';
import { eventTypes } from './openresponses_schema.mjs';

const dir = new URL('../../transform/responses/testdata/', import.meta.url);

/**
 * wire reads a golden: its SSE events, or what it holds whole (a
 * Response, or the error body of a request that failed before it had
 * one).
 */
function wire(name) {
  const text = readFileSync(new URL(name, dir), 'utf8');
  if (text.trimStart().startsWith('{')) {
    const body = JSON.parse(text);
    return body.object === 'response' ? { events: [], responses: [body] } : { events: [], responses: [], errorBody: body };
  }
  const events = text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)));
  return { events, responses: events.filter((e) => e.response).map((e) => e.response) };
}

const goldens = readdirSync(dir).filter((f) => f.endsWith('.golden'));
const all = goldens.map((g) => ({ name: g, ...wire(g) }));
const events = all.flatMap((g) => g.events);

/** find returns a deep copy of the first golden event that matches. */
function find(pred) {
  const ev = events.find(pred);
  assert.ok(ev, 'the goldens hold such an event');
  return structuredClone(ev);
}

/** completed is a completed Response with usage and a function call. */
const completed = () =>
  find((e) => e.type === 'response.completed' && e.response.usage && e.response.output.some((i) => i.type === 'function_call')).response;
const itemDone = (type) => find((e) => e.type === 'response.output_item.done' && e.item.type === type);

// A compaction as POST /responses/compact answers it (transform/responses
// writes it; no golden holds one).
const compaction = () => ({
  id: 'resp_cmp_1',
  object: 'response.compaction',
  created_at: 1735787045,
  output: [{ id: 'cmp_1', type: 'compaction', encrypted_content: 'llmstream.c1.AAAA', created_by: 'llmstream' }],
  usage: { input_tokens: 10, output_tokens: 4, total_tokens: 14, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
});

describe('the Open Responses checks pass llmstream\'s wire', () => {
  test('every event and Response of every responses golden', () => {
    assert.ok(goldens.length >= 30, `goldens: ${goldens.length}`);
    for (const g of all) {
      for (const ev of g.events) assert.deepEqual(eventErrors(ev), [], `${g.name}: ${JSON.stringify(ev)}`);
      for (const r of g.responses) assert.deepEqual(responseErrors(r), [], `${g.name}: ${JSON.stringify(r)}`);
      if (g.errorBody) {
        // The spec's error object: a type, a code, a message, a param.
        const e = g.errorBody.error;
        assert.ok(typeof e?.type === 'string' && typeof e.code === 'string' && typeof e.message === 'string' && 'param' in e, `${g.name}: ${JSON.stringify(g.errorBody)}`);
      }
    }
  });

  test('the goldens use the event types the schemas cover', () => {
    const seen = new Set(events.map((e) => e.type));
    for (const t of seen) assert.ok(eventTypes.includes(t), t);
    for (const t of ['response.created', 'response.output_text.delta', 'response.reasoning_text.delta', 'response.reasoning_summary_part.added',
      'response.function_call_arguments.done', 'response.mcp_call_arguments.delta', 'response.mcp_call.failed', 'response.failed',
      'response.incomplete', 'error']) {
      assert.ok(seen.has(t), `a golden has ${t}`);
    }
  });

  test('a compaction, and a WebSocket error frame', () => {
    assert.deepEqual(compactedErrors(compaction()), []);
    const frame = { type: 'error', status: 400, error: { type: 'invalid_request_error', code: 'previous_response_not_found', message: 'no resp_1', param: 'previous_response_id' } };
    assert.deepEqual(eventErrors(frame, 'websocket'), []);
  });
});

/** The broken copies: what each breaks, how, and what the error names. */
const broken = [
  ['a Response without completed_at', () => {
    const r = completed();
    delete r.completed_at;
    return responseErrors(r);
  }, /required property 'completed_at'/],
  ['a completed Response whose completed_at is null', () => responseErrors({ ...completed(), completed_at: null }), /completed_at null/],
  ['an in-progress Response with completed_at set', () => {
    const ev = find((e) => e.type === 'response.created');
    ev.response.completed_at = 1735787046;
    return eventErrors(ev);
  }, /in_progress response has completed_at/],
  ['a message item without status', () => {
    const ev = itemDone('message');
    delete ev.item.status;
    return eventErrors(ev);
  }, /item: must have required property 'status'/],
  ['a function_call item without call_id', () => {
    const ev = itemDone('function_call');
    delete ev.item.call_id;
    return eventErrors(ev);
  }, /required property 'call_id'/],
  ['an item of an unknown type', () => {
    const r = completed();
    r.output.push({ id: 'x_1', type: 'web_search_call', status: 'completed' });
    return responseErrors(r);
  }, /output\/\d+\/type: must be equal to one of the allowed values/],
  ['an unknown event type', () => eventErrors({ type: 'response.output_text.appended', sequence_number: 4 }), /not an event of the responses wire/],
  ["raw reasoning under the spec's response.reasoning.delta name", () => {
    const ev = find((e) => e.type === 'response.reasoning_text.delta');
    return eventErrors({ ...ev, type: 'response.reasoning.delta' });
  }, /not an event of the responses wire/],
  ['an event without sequence_number', () => {
    const ev = find((e) => e.type === 'response.output_text.delta');
    delete ev.sequence_number;
    return eventErrors(ev);
  }, /required property 'sequence_number'/],
  ['a sequence_number that is a string', () => eventErrors({ ...find((e) => e.type === 'response.output_text.delta'), sequence_number: '7' }), /sequence_number: must be integer/],
  ['a delta event without item_id', () => {
    const ev = find((e) => e.type === 'response.function_call_arguments.delta');
    delete ev.item_id;
    return eventErrors(ev);
  }, /required property 'item_id'/],
  ['truncation outside its enum', () => responseErrors({ ...completed(), truncation: 'sometimes' }), /truncation: must be equal to one of the allowed values/],
  ['reasoning.effort outside its enum', () => responseErrors({ ...completed(), reasoning: { effort: 'minimal', summary: null } }), /reasoning\/effort/],
  ['an output_text part without annotations', () => {
    const ev = find((e) => e.type === 'response.content_part.done' && e.part.type === 'output_text');
    delete ev.part.annotations;
    return eventErrors(ev);
  }, /part: must have required property 'annotations'/],
  ['an input_image without detail', () => {
    const r = completed();
    r.output.unshift({ id: 'msg_u', type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_image', image_url: 'data:,' }] });
    return responseErrors(r);
  }, /required property 'detail'/],
  ['a message role outside its enum', () => {
    const ev = itemDone('message');
    ev.item.role = 'tool';
    return eventErrors(ev);
  }, /item\/role: must be equal to one of the allowed values/],
  ['response.completed carrying an in_progress Response', () => {
    const ev = find((e) => e.type === 'response.completed');
    return eventErrors({ ...ev, response: { ...ev.response, status: 'in_progress', completed_at: null } });
  }, /response.completed carries a in_progress response/],
  ['a failed Response without its error', () => {
    const ev = find((e) => e.type === 'response.failed');
    return eventErrors({ ...ev, response: { ...ev.response, error: null } });
  }, /failed response has error null/],
  ['a completed Response with an item still in progress', () => {
    const r = completed();
    r.output[0].status = 'in_progress';
    return responseErrors(r);
  }, /still in progress in a completed response/],
  ['an item added already completed', () => {
    const ev = find((e) => e.type === 'response.output_item.added' && e.item.type === 'message');
    ev.item.status = 'completed';
    return eventErrors(ev);
  }, /item added completed/],
  ['usage with a fractional token count', () => {
    const r = completed();
    r.usage.input_tokens = 12.5;
    return responseErrors(r);
  }, /usage\/input_tokens: must be integer/],
  ['an mcp_call with a status no lifecycle has', () => {
    const ev = itemDone('mcp_call');
    ev.item.status = 'done';
    return eventErrors(ev);
  }, /item\/status: must be equal to one of the allowed values/],
  ['an mcp_call without server_label', () => {
    const ev = itemDone('mcp_call');
    delete ev.item.server_label;
    return eventErrors(ev);
  }, /required property 'server_label'/],
  ['an error event whose message is missing', () => {
    const ev = find((e) => e.type === 'error');
    delete ev.error.message;
    return eventErrors(ev);
  }, /error: must have required property 'message'/],
  ['a compaction item without encrypted_content', () => {
    const c = compaction();
    delete c.output[0].encrypted_content;
    return compactedErrors(c);
  }, /required property 'encrypted_content'/],
  ['a compaction whose object is response', () => compactedErrors({ ...compaction(), object: 'response' }), /object: must be equal to constant/],
  ['a WebSocket error frame whose status is a string', () =>
    eventErrors({ type: 'error', status: '400', error: { code: 'previous_response_not_found', message: 'x' } }, 'websocket'), /status: must be integer/],
  ['a response.create frame with stream: true', () => requestErrors({ type: 'response.create', model: 'm', input: 'hi', stream: true }), /must NOT be valid/],
  ['a response.create frame without its type', () => requestErrors({ model: 'm', input: 'hi' }), /required property 'type'/],
];

describe('the Open Responses checks catch what breaks the spec', () => {
  for (const [what, errorsOf, names] of broken) {
    test(what, () => {
      const errs = errorsOf();
      assert.ok(errs.length > 0, `${what} passed the checks`);
      assert.ok(errs.some((e) => names.test(e)), `${what}: expected an error matching ${names}, got:\n${errs.join('\n')}`);
    });
  }
});
