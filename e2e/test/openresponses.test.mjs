// What the Open Responses specification (version 2026-04-24) asks of a
// server, checked against a route configured like the default Caddyfile's
// /v1/responses (e2e/Caddyfile, /openresponses/v1/responses) in front of
// the deterministic mock /m/openresponses/13, which answers text, calls
// the first tool it is offered, and records what it was sent.
//
// The specification repository has a compliance runner of 17 tests; this
// file covers the same 17 behaviours (their ids are in the test names),
// with requests and assertions of our own: every Response, SSE event and
// WebSocket frame is checked with our schemas (openresponses.mjs), the
// spec's framing rules are checked on the wire (Content-Type, `event:`
// naming the type, `[DONE]` last, sequence numbers), and where a behaviour
// is about what reaches the model (a system prompt, an image, the earlier
// turns) the mock's record of the upstream request is read too.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { deflateSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { createParser } from 'eventsource-parser';
import WebSocket from 'ws';

import { BASE } from './expected.mjs';
import { assertCompacted, assertEvent, assertResponse, requestErrors, responseErrors } from './openresponses.mjs';

const ROUTE = `${BASE}/openresponses/v1`;
const MOCK = `${process.env.LLMSTREAM_E2E_MOCKS ?? 'http://127.0.0.1:18100'}/m/openresponses/13/llm_mock/requests`;
const HEADERS = { 'Content-Type': 'application/json', Authorization: 'Bearer sk-openresponses-e2e' };
const MODEL = 'e2e-model';
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

/**
 * user is a user message item. Each test's text starts with its id, so
 * that the mock's record of its upstream request can be found.
 */
const user = (content) => ({ type: 'message', role: 'user', content });

/** post sends body to path on the route. */
const post = (path, body) =>
  fetch(`${ROUTE}${path}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });

/**
 * create sends a request without streaming and returns its Response: a
 * 200 in application/json (the spec: "When not streaming, servers MUST
 * return data only as application/json") that passes the schema.
 */
async function create(body) {
  const res = await post('/responses', body);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  const r = JSON.parse(text);
  assertResponse(r);
  return r;
}

/**
 * stream sends a request with stream: true and reads the reply as an SSE
 * client does. The spec's streaming rules: Content-Type text/event-stream,
 * each event's `event:` field equal to its data's type, the last data the
 * literal [DONE]; and each event passes the schema, sequence numbers count
 * up from 0, response.created comes first and one terminal event last.
 */
async function stream(body) {
  const res = await post('/responses', { ...body, stream: true });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const frames = [];
  const parser = createParser({ onEvent: (e) => frames.push(e) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
  assert.equal(frames.at(-1)?.data, '[DONE]', 'the stream ends with [DONE]');
  const events = frames.slice(0, -1).map((f) => {
    const ev = JSON.parse(f.data);
    assert.equal(f.event, ev.type, 'the event field names the type');
    assertEvent(ev, 'http');
    return ev;
  });
  checkOrder(events);
  return { events, response: events.at(-1).response };
}

/** checkOrder checks the lifecycle of one turn's events. */
function checkOrder(events) {
  assert.ok(events.length >= 3, `a turn has events: ${events.map((e) => e.type)}`);
  assert.equal(events[0].type, 'response.created');
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i), 'sequence numbers count up from 0');
  assert.deepEqual(events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type), [events.at(-1).type], 'one terminal event, last');
}

/**
 * Socket is one WebSocket connection to the route (the spec's
 * x-openresponses-websocket: response.create frames in, the streaming
 * events out). turn sends one response.create and reads frames until its
 * terminal event or an error frame.
 */
class Socket {
  static async open() {
    const ws = new WebSocket(ROUTE.replace(/^http/, 'ws') + '/responses', { headers: HEADERS });
    const s = new Socket(ws);
    await once(ws, 'open');
    return s;
  }

  constructor(ws) {
    this.ws = ws;
    this.frames = [];
    this.wake = null;
    this.closed = false;
    ws.on('message', (data) => this.#arrive(data.toString()));
    ws.on('close', () => {
      this.closed = true;
      this.#arrive(null);
    });
  }

  #arrive(frame) {
    if (frame !== null) this.frames.push(frame);
    this.wake?.();
  }

  /** next returns the next frame, waiting up to 30s for it. */
  #next() {
    if (this.frames.length > 0) return Promise.resolve(this.frames.shift());
    if (this.closed) return Promise.reject(new Error('the socket closed in the middle of a turn'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.wake = null;
        reject(new Error('no frame for 30s'));
      }, 30_000);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        if (this.frames.length > 0) resolve(this.frames.shift());
        else reject(new Error('the socket closed in the middle of a turn'));
      };
    });
  }

  /**
   * turn returns { events, response } for a turn that ran (events checked
   * like an SSE stream's, every frame against the schema) or { error } for
   * one refused with an error frame.
   */
  async turn(body) {
    assert.deepEqual(requestErrors(body), [], 'the test sends a valid response.create');
    this.ws.send(JSON.stringify(body));
    const events = [];
    for (;;) {
      const ev = JSON.parse(await this.#next());
      assertEvent(ev, 'websocket');
      if (ev.type === 'error' && 'status' in ev) {
        assert.equal(events.length, 0, 'an error frame only before the turn began');
        return { error: ev };
      }
      events.push(ev);
      if (TERMINAL.has(ev.type)) {
        checkOrder(events);
        return { events, response: ev.response };
      }
    }
  }

  close() {
    this.ws.close();
  }
}

/** ws runs fn with a fresh socket and closes it after. */
async function ws(fn) {
  const s = await Socket.open();
  try {
    return await fn(s);
  } finally {
    s.close();
  }
}

/** upstream returns the last chat request the mock got that mentions marker. */
async function upstream(marker) {
  const res = await fetch(MOCK);
  assert.equal(res.status, 200, 'the openresponses mock records');
  const found = (await res.json()).filter((b) => JSON.stringify(b.messages).includes(marker));
  assert.ok(found.length > 0, `a request upstream mentions ${marker}`);
  return found.at(-1);
}

/** text is a chat message's text, whether a string or parts. */
const text = (m) => (typeof m.content === 'string' ? m.content : m.content.filter((p) => p.type === 'text').map((p) => p.text).join(''));

/** answered asserts a completed Response with an assistant text answer. */
function answered(r) {
  assert.equal(r.status, 'completed');
  const messages = r.output.filter((i) => i.type === 'message');
  assert.ok(messages.length > 0, `an output message in ${r.output.map((i) => i.type)}`);
  for (const m of messages) {
    assert.equal(m.role, 'assistant');
    assert.ok(m.content.every((p) => p.type === 'output_text'), 'the answer is output_text');
  }
  assert.ok(messages.flatMap((m) => m.content).some((p) => p.text.length > 0), 'the answer has text');
}

/** png encodes a w×h RGB image whose pixel (x, y) is color(x, y). */
function png(w, h, color) {
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = table[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(w, 0);
  header.writeUInt32BE(h, 4);
  header[8] = 8; // bits per channel
  header[9] = 2; // RGB
  const rows = [];
  for (let y = 0; y < h; y++) {
    rows.push(0); // no filter
    for (let x = 0; x < w; x++) rows.push(...color(x, y));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// A 16×16 blue and yellow checkerboard.
const checkerboard = `data:image/png;base64,${png(16, 16, (x, y) => ((x >> 2) + (y >> 2)) % 2 ? [255, 214, 0] : [0, 87, 183]).toString('base64')}`;

const lookupTool = {
  type: 'function',
  name: 'lookup_order',
  description: 'Look an order up by its number',
  parameters: { type: 'object', properties: { order: { type: 'string', description: 'The order number' } }, required: ['order'] },
};

describe('Open Responses (2026-04-24): the spec runner\'s 17 behaviours, our checks', () => {
  test('basic-response: a message in, a completed Response with an assistant answer out', async () => {
    const r = await create({ model: MODEL, input: [user('basic-response: name three colours.')] });
    answered(r);
    assert.match(r.id, /^resp_/);
    assert.equal(r.object, 'response');
  });

  test('assistant-phase: assistant messages with a phase are accepted as input', async () => {
    const r = await create({
      model: MODEL,
      input: [
        user('assistant-phase: what did you find?'),
        { type: 'message', role: 'assistant', phase: 'commentary', content: 'Checking the ledger first.' },
        { type: 'message', role: 'assistant', phase: 'final_answer', content: 'The ledger balances.' },
        user('Say it once more.'),
      ],
    });
    answered(r);
    const sent = await upstream('assistant-phase: what did you find?');
    assert.deepEqual(sent.messages.filter((m) => m.role === 'assistant').map(text), ['Checking the ledger first.', 'The ledger balances.'], 'both assistant messages reached the model');
  });

  test('response-output-phase-schema: output messages may carry a phase, and only a known one', async () => {
    // A real Response, its answer labelled commentary then final_answer.
    const r = await create({ model: MODEL, input: 'response-output-phase-schema: hello' });
    const message = r.output.find((i) => i.type === 'message');
    const labelled = {
      ...r,
      output: [
        { ...message, id: `${message.id}_c`, phase: 'commentary' },
        { ...message, phase: 'final_answer' },
      ],
    };
    assertResponse(labelled);
    assert.deepEqual(labelled.output.map((i) => i.phase), ['commentary', 'final_answer']);
    const wrong = { ...labelled, output: [{ ...message, phase: 'draft' }] };
    assert.ok(responseErrors(wrong).some((e) => /phase/.test(e)), 'a phase outside the spec is caught');
  });

  test('streaming-response: SSE events, then the completed Response', async () => {
    const { events, response } = await stream({ model: MODEL, input: [user('streaming-response: count to five.')] });
    answered(response);
    assert.equal(events[1].type, 'response.in_progress');
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    const final = response.output.filter((i) => i.type === 'message').flatMap((m) => m.content).map((p) => p.text).join('');
    assert.equal(deltas, final, 'the deltas add up to the final text');
  });

  test('websocket-response: one turn over a WebSocket', async () => {
    const t = await ws((s) => s.turn({ type: 'response.create', model: MODEL, input: [user('websocket-response: count to three.')] }));
    assert.ok(t.response, `the turn ran: ${JSON.stringify(t.error)}`);
    answered(t.response);
  });

  test('websocket-sequential-responses: two turns, one after the other, on one socket', async () => {
    const [a, b] = await ws(async (s) => [
      await s.turn({ type: 'response.create', model: MODEL, store: false, input: 'websocket-sequential-responses: one' }),
      await s.turn({ type: 'response.create', model: MODEL, store: false, input: 'websocket-sequential-responses: two' }),
    ]);
    answered(a.response);
    answered(b.response);
    assert.notEqual(a.response.id, b.response.id);
  });

  test('websocket-continuation: previous_response_id continues the socket\'s last response, store false', async () => {
    const second = await ws(async (s) => {
      const first = await s.turn({ type: 'response.create', model: MODEL, store: false, input: 'websocket-continuation: the word is teal.' });
      answered(first.response);
      return s.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: first.response.id, input: 'websocket-continuation: which word?' });
    });
    answered(second.response);
    const sent = await upstream('websocket-continuation: which word?');
    assert.ok(sent.messages.some((m) => text(m).includes('the word is teal')), 'the first turn went upstream with the second');
  });

  test('websocket-reconnect-store-false-recovery: a store false chain is gone on a new socket, and the socket goes on', async () => {
    const first = await ws((s) => s.turn({ type: 'response.create', model: MODEL, store: false, input: 'websocket-reconnect: the word is amber.' }));
    answered(first.response);
    const [missed, fresh] = await ws(async (s) => [
      await s.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: first.response.id, input: 'continue' }),
      await s.turn({ type: 'response.create', model: MODEL, store: false, input: [user('websocket-reconnect: start over.')] }),
    ]);
    assert.equal(missed.error?.error.code, 'previous_response_not_found', JSON.stringify(missed));
    answered(fresh.response);
  });

  test('websocket-previous-response-not-found: an unknown previous_response_id is an error frame', async () => {
    const id = `resp_never_${process.pid}_${Date.now()}`;
    const t = await ws((s) => s.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: id, input: 'continue' }));
    assert.equal(t.error?.error.code, 'previous_response_not_found', JSON.stringify(t));
    assert.ok(t.error.status >= 400 && t.error.status < 500, `a 4xx status: ${t.error.status}`);
  });

  test('websocket-failed-continuation-evicts-cache: after a failed continuation, the response it continued is gone', async () => {
    const [first, failed, again] = await ws(async (s) => {
      const a = await s.turn({ type: 'response.create', model: MODEL, store: false, input: 'websocket-evict: the word is slate.' });
      answered(a.response);
      const continueFrom = (input) => ({ type: 'response.create', model: MODEL, store: false, previous_response_id: a.response.id, input });
      // A result for a call the response never made.
      const b = await s.turn(continueFrom([{ type: 'function_call_output', call_id: 'call_nobody_made', output: '42' }]));
      return [a, b, await s.turn(continueFrom('websocket-evict: and now?'))];
    });
    assert.ok(first.response);
    assert.ok(failed.error || failed.response?.status === 'failed', `the continuation failed: ${JSON.stringify(failed.error ?? failed.response?.status)}`);
    assert.equal(again.error?.error.code, 'previous_response_not_found', JSON.stringify(again));
  });

  test('websocket-compact-new-chain: a compaction\'s output starts a new chain over a WebSocket', async () => {
    const res = await post('/responses/compact', {
      model: MODEL,
      input: [
        user([{ type: 'input_text', text: 'websocket-compact: the launch is on Friday.' }]),
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Friday it is.' }] },
      ],
    });
    assert.equal(res.status, 200);
    const compacted = await res.json();
    assertCompacted(compacted);
    const t = await ws((s) =>
      s.turn({ type: 'response.create', model: MODEL, store: false, tools: [], input: [...compacted.output, user('websocket-compact: when is it?')] }),
    );
    answered(t.response);
    const sent = await upstream('websocket-compact: when is it?');
    assert.ok(sent.messages.some((m) => text(m).includes('Summary of the earlier conversation')), 'the compaction went upstream as its summary');
  });

  test('system-prompt: a system message in the input reaches the model first', async () => {
    const r = await create({
      model: MODEL,
      input: [{ type: 'message', role: 'system', content: 'system-prompt: answer like a sea captain.' }, user('Good morning.')],
    });
    answered(r);
    const sent = await upstream('system-prompt: answer like a sea captain.');
    assert.equal(sent.messages[0].role, 'system');
    assert.match(text(sent.messages[0]), /answer like a sea captain/);
  });

  test('tool-calling: an offered function comes back as a function_call item, whole and streamed', async () => {
    const body = { model: MODEL, input: [user('tool-calling: where is order 1234?')], tools: [lookupTool] };
    const r = await create(body);
    const call = r.output.find((i) => i.type === 'function_call');
    assert.ok(call, `a function_call in ${r.output.map((i) => i.type)}`);
    assert.equal(call.name, 'lookup_order');
    assert.match(call.call_id, /\S/);
    JSON.parse(call.arguments);
    assert.equal(r.tools[0].name, 'lookup_order', 'the tools offered are repeated');

    const { events, response } = await stream(body);
    const types = events.map((e) => e.type);
    const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'function_call');
    assert.ok(added, `a function_call item added: ${types}`);
    const args = events.filter((e) => e.type === 'response.function_call_arguments.delta' && e.item_id === added.item.id).map((e) => e.delta).join('');
    const done = events.find((e) => e.type === 'response.function_call_arguments.done' && e.item_id === added.item.id);
    assert.ok(done, 'its arguments are done');
    assert.equal(args, done.arguments, 'the argument deltas add up');
    const itemDone = events.find((e) => e.type === 'response.output_item.done' && e.item.id === added.item.id);
    assert.equal(itemDone?.item.status, 'completed');
    assert.deepEqual(response.output.find((i) => i.type === 'function_call'), itemDone.item);
  });

  test('image-input: an input_image reaches the model as an image', async () => {
    const r = await create({
      model: MODEL,
      input: [user([{ type: 'input_text', text: 'image-input: what pattern is this?' }, { type: 'input_image', image_url: checkerboard }])],
    });
    answered(r);
    const sent = await upstream('image-input: what pattern is this?');
    const parts = sent.messages.at(-1).content;
    assert.ok(Array.isArray(parts), 'the user message went up as parts');
    assert.deepEqual(parts.filter((p) => p.type === 'image_url').map((p) => p.image_url.url), [checkerboard]);
  });

  test('multi-turn: earlier user and assistant messages reach the model in order', async () => {
    const r = await create({
      model: MODEL,
      input: [
        user('multi-turn: I am Maren.'),
        { type: 'message', role: 'assistant', content: 'Hello Maren.' },
        user('multi-turn: who am I?'),
      ],
    });
    answered(r);
    const sent = await upstream('multi-turn: who am I?');
    assert.deepEqual(sent.messages.filter((m) => m.role !== 'system').map((m) => [m.role, text(m)]), [
      ['user', 'multi-turn: I am Maren.'],
      ['assistant', 'Hello Maren.'],
      ['user', 'multi-turn: who am I?'],
    ]);
  });

  test('compact-response: POST /responses/compact answers a response.compaction with a compaction item', async () => {
    const res = await post('/responses/compact', {
      model: MODEL,
      prompt_cache_key: 'compact-response',
      input: [user('compact-response: ship on Monday, tell sales first.'), { type: 'message', role: 'assistant', content: 'Monday, sales first.' }],
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    const c = await res.json();
    assertCompacted(c);
    assert.equal(c.object, 'response.compaction');
    assert.deepEqual(c.output.map((i) => i.type), ['compaction']);
    assert.ok(c.output[0].encrypted_content.length > 0);
  });

  test('compact-missing-model: a compaction without a model is refused with a 4xx naming it', async () => {
    const res = await post('/responses/compact', { input: [user('compact-missing-model')] });
    assert.ok([400, 422].includes(res.status), `status ${res.status}`);
    const body = await res.json();
    assert.match(`${body.error?.param} ${body.error?.message}`, /model/, JSON.stringify(body));
  });
});
