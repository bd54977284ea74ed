// The whole skillpet backend (CONTRACT §9, specs/002 §2 and §4): the
// component's flow through the gateway's conversation route at /chat/ —
// init, a message, the ask_user form, the formatted answers as the next
// message — and the history that init then returns, restored with the
// port of parseHistoryMessages.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';

import { BASE, read, thinkingml } from './expected.mjs';
import { formatAnswers, parseHistoryMessages } from './history.mjs';
import { checkSSEHeaders, names, only, postSSE } from './sse.mjs';

const CHAT = `${BASE}/chat`;
const RECORDED = 'http://127.0.0.1:18100/m/conversation/13/llm_mock/requests';

/** getJSON fetches a URL with the user's token and parses its JSON. */
async function getJSON(url, auth, init = {}) {
  const res = await fetch(url, { ...init, headers: { authorization: auth, ...init.headers }, signal: AbortSignal.timeout(30_000) });
  return { res, body: await res.json() };
}

describe('skillpet conversation backend', () => {
  test('init, ask_user, the answers, the restored history, clear', async () => {
    const auth = `Bearer e2e-${randomUUID()}`;
    const project = 'novel-1';
    const first = thinkingml(read('thinkingml.txt'));
    const second = read('text.txt');

    // init: the agent, the capabilities, no history.
    const { res: initRes, body: init0 } = await getJSON(`${CHAT}/init/${project}`, auth);
    assert.equal(initRes.status, 200);
    assert.equal(init0.agent.name, 'e2e agent');
    assert.deepEqual(init0.capabilities.thinking, { enabled: true, defaultOn: true });
    assert.deepEqual(init0.capabilities.reset, { enabled: true, clearUrl: '/chat/conversation/{projectId}' });
    assert.deepEqual(init0.messages, []);

    // The first message: the answer, a serp_queries resource, the form.
    const message = '帮我写个故事';
    const one = await postSSE(`${CHAT}/stream`, { projectId: project, message, enableThinking: true }, { authorization: auth });
    checkSSEHeaders(one.res);
    assert.equal(names(one.events).at(-1), 'done');
    const answer1 = only(one.events, 'token').map((e) => e.data.content).join('');
    assert.equal(answer1, first.answer);
    const [form] = only(one.events, 'ask_user');
    const resources = only(one.events, 'resource').map((e) => e.data);
    assert.ok(form && resources.length === 1, 'an ask_user form and a serp_queries resource');

    // The component formats the answers and sends them as the next message.
    const answers = formatAnswers(form.data.questions, (q) => q.options[0].label);
    const two = await postSSE(`${CHAT}/stream`, { projectId: project, message: answers }, { authorization: auth });
    assert.equal(names(two.events).at(-1), 'done');
    assert.equal(only(two.events, 'token').map((e) => e.data.content).join(''), second);

    // The upstream saw the questions (the ask_user call) and the answers
    // (its tool message).
    const bodies = await (await fetch(RECORDED)).json();
    const { messages: up } = bodies.at(-1);
    assert.deepEqual(up.map((m) => m.role), ['system', 'user', 'assistant', 'tool']);
    assert.equal(up[1].content, message);
    assert.equal(up[2].content, first.answer);
    const call = up[2].tool_calls[0];
    assert.equal(call.function.name, 'ask_user');
    assert.deepEqual(JSON.parse(call.function.arguments), JSON.parse(read('ask_user_call.json'))[0].arguments);
    assert.deepEqual({ tool_call_id: up[3].tool_call_id, content: up[3].content }, { tool_call_id: call.id, content: answers });

    // init returns both turns, which parseHistoryMessages restores as the
    // component showed them live.
    const { body: init1 } = await getJSON(`${CHAT}/init/${project}`, auth);
    const restored = parseHistoryMessages(init1.messages);
    assert.deepEqual(
      restored.map(({ id, toolCalls, ...m }) => (assert.match(id, /\S/), m)),
      [
        { role: 'user', content: message },
        {
          role: 'assistant',
          content: first.answer,
          parts: [
            { type: 'text', content: first.answer },
            { type: 'resource', resource: resources[0] },
          ],
        },
        { role: 'tool', toolCallId: call.id, askUser: { questions: form.data.questions, status: 'answered' } },
        { role: 'user', content: answers },
        { role: 'assistant', content: second },
      ],
    );
    assert.deepEqual(restored[1].toolCalls.map((c) => c.id), [call.id]);
    assert.equal(new Set(restored.map((m) => m.id)).size, restored.length, 'unique ids');

    // Another user sees none of it.
    const { body: other } = await getJSON(`${CHAT}/init/${project}`, `Bearer e2e-${randomUUID()}`);
    assert.deepEqual(other.messages, []);

    // clear at the clearUrl, then init is empty.
    const clearUrl = BASE + init1.capabilities.reset.clearUrl.replace('{projectId}', project);
    const cleared = await fetch(clearUrl, { method: 'DELETE', headers: { authorization: auth } });
    assert.ok(cleared.ok);
    const { body: init2 } = await getJSON(`${CHAT}/init/${project}`, auth);
    assert.deepEqual(init2.messages, []);
  });

  test('tool-response on a route without tools: nothing waits, a JSON 404', async () => {
    const res = await fetch(`${CHAT}/tool-response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: JSON.stringify({ projectId: 'p', toolCallId: 'c', toolName: 't', optionId: 'o' }),
    });
    assert.equal(res.status, 404);
    assert.equal((await res.json()).error, 'NOT_WAITING');
  });

  test('no Authorization: 403, nothing read', async () => {
    const res = await fetch(`${CHAT}/init/p`);
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error, 'FORBIDDEN');
  });
});

describe('parseHistoryMessages (specs/002 §4)', () => {
  test('every stored shape', () => {
    const q = [{ id: 'g', prompt: '题材？', options: [{ id: 'a', label: 'A' }] }];
    const msgs = parseHistoryMessages([
      { id: '1', role: 'user', content: 'hi' },
      { id: '2', role: 'assistant', content: JSON.stringify({ _t: '_pub_asst', text: 'hello', tool_calls: [{ id: 'c1' }] }) },
      { id: '3', role: 'tool', content: JSON.stringify({ _t: '_pub_tool', toolCallId: 'c1', body: `[ask_user] ${JSON.stringify(q)}` }) },
      { id: '4', role: 'tool', content: JSON.stringify({ _t: '_pub_tool', toolCallId: 'c2', body: '搜索结果：3 条' }) },
      { id: '5', role: 'tool', content: JSON.stringify({ _t: '_pub_tool', toolCallId: 'c3', body: '[等待用户选择] 请确认方向' }) },
      { id: '6', role: 'assistant', content: 'plain, from another backend' },
      { id: '7', role: 'tool', content: JSON.stringify({ _t: '_pub_tool', toolCallId: 'c4', body: '[image_generation] {"id":"img","images":[]}' }) },
    ]);
    assert.deepEqual(msgs, [
      { id: '1', role: 'user', content: 'hi' },
      { id: '2', role: 'assistant', content: 'hello', toolCalls: [{ id: 'c1' }] },
      { id: '3', role: 'tool', toolCallId: 'c1', askUser: { questions: q, status: 'answered' } },
      { id: '4', role: 'tool', toolCallId: 'c2', content: '搜索结果：3 条' },
      { id: '5', role: 'tool', toolCallId: 'c3', content: '请确认方向', awaitingChoice: true },
      { id: '6', role: 'assistant', content: 'plain, from another backend' },
      { id: '7', role: 'tool', toolCallId: 'c4', imageGeneration: { id: 'img', images: [] } },
    ]);
  });
});
