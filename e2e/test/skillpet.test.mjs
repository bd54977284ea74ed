// The skillpet chat protocol (request_format and protocol skillpet,
// specs/002 §2.3 and §3) read with eventsource-parser: thinking, token,
// ask_user with normalised questions, tool_start, resource, done last.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { BASE, CHUNKS, CUT_CHUNKS, CUTS, MOCKS, url } from './expected.mjs';
import { matchesPartial, partialAnswer } from './expected_cut.mjs';
import { checkSSEHeaders, names, only, postSSE } from './sse.mjs';

const body = { projectId: 'p-e2e', message: '帮我写个故事', enableThinking: true };

/**
 * normalizeAskUserQuestions is the reference implementation of specs/002
 * §5, transcribed: what the gateway must send in ask_user.
 */
export function normalizeAskUserQuestions(raw) {
  const result = [];
  for (let i = 0; i < raw.length; i++) {
    const q = raw[i];
    if (!q || typeof q !== 'object') continue;
    const prompt = String(q.prompt || q.question || q.text || q.title || '');
    if (!prompt) continue;
    const id = String(q.id || `q-${i}`);
    const allowFreeText = !!(q.allowFreeText || q.allow_free_text || q.freeText);
    let rawOpts = q.options || q.choices || [];
    if (!Array.isArray(rawOpts)) rawOpts = [];
    const options = rawOpts
      .map((o, j) => {
        if (typeof o === 'string') return { id: `opt-${j}`, label: o };
        if (o && typeof o === 'object') {
          const label = String(o.label || o.text || o.name || o.title || '');
          return label ? { id: String(o.id || o.value || `opt-${j}`), label } : null;
        }
        return null;
      })
      .filter((o) => o !== null);
    if (options.length === 0 && !allowFreeText) continue;
    result.push({
      id,
      prompt,
      options,
      ...(q.allowMultiple || q.allow_multiple ? { allowMultiple: true } : {}),
      ...(allowFreeText ? { allowFreeText: true } : {}),
      ...(q.freeTextPlaceholder || q.free_text_placeholder
        ? { freeTextPlaceholder: String(q.freeTextPlaceholder || q.free_text_placeholder) }
        : {}),
    });
  }
  return result;
}

const join = (events, name) => only(events, name).map((e) => e.data.content).join('');

/** wantAskUser is the ask_user questions a mock must produce, if any. */
function wantAskUser(want) {
  const call = want.toolCalls.find((c) => c.name === 'ask_user');
  if (call) return [normalizeAskUserQuestions(call.input.questions)];
  if (want.clarify) {
    return [
      [
        {
          id: 'clarify',
          prompt: want.clarify.question,
          options: want.clarify.options.map((label, j) => ({ id: `opt-${j}`, label })),
          allowFreeText: true,
          // specs/004 §7.2 ClarifyPayload.hint, when the clarify has one.
          ...(want.clarify.hint ? { hint: want.clarify.hint } : {}),
        },
      ],
    ];
  }
  return [];
}

describe('skillpet via eventsource-parser', () => {
  for (const [mock, want] of Object.entries(MOCKS)) {
    for (const chunk of CHUNKS) {
      test(`${want.format}/${mock}/${chunk}`, async () => {
        const { res, events, errors } = await postSSE(url('skillpet', want.format, mock, chunk), body, { 'x-request-id': 'e2e-sp' });
        checkSSEHeaders(res, 'e2e-sp');
        assert.deepEqual(errors, []);

        // Reasoning: thinking events, then one thinking_done before the answer.
        assert.equal(join(events, 'thinking'), want.reasoningText ?? '', 'thinking is the reasoning');
        const n = names(events);
        if (want.reasoningText) {
          assert.equal(only(events, 'thinking_done').length, 1);
          assert.ok(n.lastIndexOf('thinking') < n.indexOf('thinking_done'));
          if (n.includes('token')) assert.ok(n.indexOf('thinking_done') < n.indexOf('token'));
          assert.deepEqual(only(events, 'thinking_done')[0].data, {});
        } else {
          assert.equal(only(events, 'thinking_done').length, 0, 'no thinking_done without thinking');
        }

        assert.equal(join(events, 'token'), want.answer ?? '', 'token text is the answer, exactly');

        // ask_user (normalised as specs/002 §5), never a tool_start for it.
        assert.deepEqual(only(events, 'ask_user').map((e) => e.data.questions), wantAskUser(want));
        const starts = only(events, 'tool_start');
        assert.deepEqual(
          starts.map((e) => ({ name: e.data.name, input: e.data.args })),
          want.toolCalls.filter((c) => c.name !== 'ask_user'),
        );
        for (const s of starts) {
          assert.match(s.data.id, /\S/);
          assert.match(s.data.label, /\S/);
        }
        if (want.toolCalls.length) assert.ok(n.includes('tool_args_heartbeat'));
        for (const h of only(events, 'tool_args_heartbeat')) assert.deepEqual(h.data, { status: 'generating_tool_args' });

        const resources = only(events, 'resource').map((e) => e.data);
        const serp = resources.filter((r) => r.resourceType === 'serp_queries');
        assert.deepEqual(serp.map((r) => r.data), want.queries ? [want.queries] : []);
        for (const r of serp) for (const q of r.data) assert.ok(r.fallbackText.includes(q), 'fallbackText names the queries');
        assert.deepEqual(
          resources.filter((r) => r.resourceType === 'artifacts').map((r) => r.data),
          want.artifacts?.length ? [want.artifacts] : [],
        );

        assert.equal(n.at(-1), 'done');
        assert.deepEqual(events.at(-1).data, { conversationId: 'p-e2e' });
        assert.equal(only(events, 'done', 'error').length, 1);
      });
    }
  }

  test('enableThinking false: no thinking events, the same answer', async () => {
    const { events } = await postSSE(url('skillpet', 'thinkingml', 'thinkingml', 13), { ...body, enableThinking: false });
    assert.deepEqual(only(events, 'thinking', 'thinking_done'), []);
    assert.equal(join(events, 'token'), MOCKS.thinkingml.answer);
    assert.equal(names(events).at(-1), 'done');
  });

  test('conversationId from the request', async () => {
    const { events } = await postSSE(url('skillpet', 'text', 'text', 1), { ...body, conversationId: 'conv-7' });
    assert.deepEqual(events.at(-1), { event: 'done', raw: '{"conversationId":"conv-7"}', data: { conversationId: 'conv-7' } });
  });

  test('missing projectId: 400 MISSING_PARAMS before any stream', async () => {
    const res = await fetch(url('skillpet', 'text', 'text', 13), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hi' }),
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, 'MISSING_PARAMS');
  });

  for (const cut of Object.keys(CUTS)) {
    for (const chunk of CUT_CHUNKS) {
      const format = MOCKS[CUTS[cut].full].format;
      test(`truncated upstream ${format}/${cut}/${chunk}: the answer so far, then error last`, async () => {
        const { events } = await postSSE(url('skillpet', format, cut, chunk), body);
        assert.equal(names(events).at(-1), 'error');
        assert.deepEqual(events.at(-1).data, { message: 'upstream: the connection broke off mid-reply' });
        assert.equal(only(events, 'done').length, 0);
        const got = join(events, 'token');
        assert.ok(matchesPartial(got, partialAnswer(cut, chunk)), `got ${JSON.stringify(got)}`);
      });
    }
  }

  test('an unknown mock: the upstream 404 becomes CHAT_FAILED 502', async () => {
    const res = await fetch(`${BASE}/skillpet/text/no_such_mock/13`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 502);
    const got = await res.json();
    assert.equal(got.error, 'CHAT_FAILED');
    assert.match(got.message, /no such mock/);
  });
});
