// GymBro SSE (protocol gymbro, specs/000 §6) read with eventsource-parser:
// status queued → working → routed, the raw reply as content_delta, one
// terminal completed or error.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { CHUNKS, CUT_CHUNKS, CUTS, MOCKS, MOCK_MODEL, cutPrefix, gymbroEscape, upstreamFinish, url } from './expected.mjs';
import { chars, checkSSEHeaders, names, only, postSSE } from './sse.mjs';

const body = { model: 'gpt-e2e', messages: [{ role: 'user', content: '三分化训练怎么安排？' }] };

/** checkHead asserts the status events and the ids every event carries. */
function checkHead(events, requestID) {
  assert.deepEqual(names(events.slice(0, 3)), ['status', 'status', 'status']);
  assert.deepEqual(events.slice(0, 3).map((e) => e.data.state), ['queued', 'working', 'routed']);
  const routed = events[2].data;
  assert.equal(routed.provider, 'openai');
  assert.equal(routed.resolved_model, MOCK_MODEL);
  assert.equal(routed.endpoint_id, 0);
  assert.match(routed.upstream_request_id, /^mockreq_\d+$/, "the upstream's x-request-id");
  const messageID = events[0].data.message_id;
  assert.match(messageID, /\S/);
  for (const e of events) {
    assert.equal(e.data.message_id, messageID, `${e.event} carries the message_id`);
    assert.equal(e.data.request_id, requestID, `${e.event} carries the request_id`);
  }
  return routed;
}

/** deltas checks the content_delta seq numbers and joins the deltas. */
function deltas(events) {
  const cd = only(events, 'content_delta');
  assert.deepEqual(cd.map((e) => e.data.seq), cd.map((_, i) => i + 1), 'seq counts from 1');
  return cd.map((e) => e.data.delta).join('');
}

describe('gymbro via eventsource-parser', () => {
  for (const [mock, want] of Object.entries(MOCKS)) {
    for (const chunk of CHUNKS) {
      test(`${want.format}/${mock}/${chunk}`, async () => {
        const requestID = `e2e-gymbro-${mock}-${chunk}`;
        const { res, events, errors } = await postSSE(url('gymbro', want.format, mock, chunk), body, { 'x-request-id': requestID });
        checkSSEHeaders(res, requestID);
        assert.deepEqual(errors, [], 'eventsource-parser reports no error');
        const routed = checkHead(events, requestID);
        assert.deepEqual([...new Set(names(events.slice(3, -1)))], ['content_delta'], 'only content_delta between status and the end');

        // The model's raw reply, with <final> inside thinking escaped.
        const reply = deltas(events);
        const wantReply = want.format === 'thinkingml' ? gymbroEscape(want.raw) : want.raw;
        assert.equal(reply, wantReply);
        if (mock === 'thinkingml') assert.match(reply, /mention that &lt;final&gt; tags/);

        const end = events.at(-1);
        assert.equal(end.event, 'completed');
        assert.equal(only(events, 'completed', 'error').length, 1);
        const c = end.data;
        assert.equal(c.reply_len, chars(reply), 'reply_len counts the characters of the deltas');
        for (const k of ['provider', 'resolved_model', 'endpoint_id', 'upstream_request_id']) assert.equal(c[k], routed[k], k);
        assert.equal(c.metadata.finish_reason, upstreamFinish(mock));
        assert.ok(c.metadata.usage.prompt_tokens > 0);
        assert.equal(c.metadata.usage.total_tokens, c.metadata.usage.prompt_tokens + c.metadata.usage.completion_tokens);
        assert.deepEqual(c.metadata.violations.map((v) => v.code), want.violations);
        for (const v of c.metadata.violations) assert.equal(typeof v.offset, 'number');
      });
    }
  }

  test('a generated X-Request-Id when the client sends none', async () => {
    const { res, events } = await postSSE(url('gymbro', 'text', 'text', 13), body);
    const id = res.headers.get('x-request-id');
    assert.match(id, /\S/);
    checkHead(events, id);
  });

  for (const cut of Object.keys(CUTS)) {
    for (const chunk of CUT_CHUNKS) {
      const format = MOCKS[CUTS[cut].full].format;
      test(`truncated upstream ${format}/${cut}/${chunk}: the text so far, then error last`, async () => {
        const { events } = await postSSE(url('gymbro', format, cut, chunk), body, { 'x-request-id': 'e2e-cut' });
        checkHead(events, 'e2e-cut');
        const end = events.at(-1);
        assert.equal(end.event, 'error');
        assert.equal(only(events, 'completed').length, 0);
        assert.equal(end.data.code, 'upstream_error');
        assert.equal(end.data.message, 'upstream: the connection broke off mid-reply');
        assert.equal(end.data.error, end.data.message, 'the legacy error field');
        assert.equal(end.data.provider, 'openai');
        assert.equal(end.data.resolved_model, MOCK_MODEL);
        assert.equal(end.data.endpoint_id, 0);
        // Every byte the model wrote before the cut was delivered.
        const sent = cutPrefix(CUTS[cut], chunk);
        const wantReply = format === 'thinkingml' ? gymbroEscape(sent) : sent;
        assert.equal(deltas(events), wantReply);
      });
    }
  }
});
