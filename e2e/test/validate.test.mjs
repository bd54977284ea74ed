// Validation that acts (CONTRACT.md §10): the /validate routes' upstreams
// answer every request twice, first with a reply that breaks a rule (a
// FinalResult that claims an artifact no tool made; a tool call whose
// arguments break the tool's schema), then with a valid one. useChat's
// machinery (AbstractChat, DefaultChatTransport) and the openai SDK must
// receive only the validated reply, with the retry reported and nothing
// of the refused one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';

import { NodeChat } from './chat.mjs';
import { BASE, read } from './expected.mjs';

const answer = JSON.parse(read('validate_answer.json')).message;
const refused = 'SAID-NOT-DONE';
const route = (protocol, format, mock) => `${BASE}/validate/${protocol}/${format}/${mock}/13`;

describe('validate: useChat gets only the validated FinalResult', () => {
  test('a refused artifact_ready is retried; the chat shows the answer', async () => {
    const chat = new NodeChat({ api: route('aisdk', 'final_result', 'validate_aisdk') });
    for (const text of ['make slides for class 3', 'and again']) {
      await chat.sendMessage({ text });
      assert.deepEqual(chat.calls.errors, []);
      assert.equal(chat.status, 'ready');
      const reply = chat.messages.at(-1);
      assert.equal(reply.role, 'assistant');
      const texts = reply.parts.filter((p) => p.type === 'text');
      assert.equal(texts.length, 1, 'one text part');
      assert.equal(texts[0].text, answer);
      assert.ok(!JSON.stringify(chat.messages).includes(refused), 'nothing of the refused reply reached the chat');
      // The retry is reported with the first attempt's violations.
      const violations = reply.parts.filter((p) => p.type === 'data-violations').flatMap((p) => p.data.violations);
      assert.deepEqual(violations.map((v) => v.code), ['artifact_without_evidence', 'retried']);
    }
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(chat.calls.finishes.length, 2);
    assert.ok(chat.calls.finishes.every((f) => !f.isError && f.finishReason === 'stop'));
  });
});

const client = (format, mock) =>
  new OpenAI({ baseURL: `${route('openai', format, mock)}/v1`, apiKey: 'sk-e2e', maxRetries: 0, timeout: 30_000 });

const params = { model: 'gpt-e2e', messages: [{ role: 'user', content: 'make slides for class 3' }] };

describe('validate: the openai SDK gets only the validated reply', () => {
  test('create({stream: true}): the answer, once', async () => {
    const stream = await client('final_result', 'validate_openai').chat.completions.create({ ...params, stream: true });
    let content = '';
    let finish = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        content += choice.delta.content ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(content, answer);
    assert.equal(finish, 'stop');
  });

  test('.stream() finalChatCompletion()', async () => {
    const final = await client('final_result', 'validate_openai').chat.completions.stream(params).finalChatCompletion();
    assert.equal(final.choices[0].message.content, answer);
  });

  test('create({stream: false}): one completion with the answer', async () => {
    const c = await client('final_result', 'validate_openai').chat.completions.create({ ...params, stream: false });
    assert.equal(c.choices[0].message.content, answer);
    assert.ok(!JSON.stringify(c).includes(refused));
  });

  test('a tool call that breaks its schema is retried; the client gets the valid calls only', async () => {
    const before = await recorded('validate_tools');
    const stream = await client('text', 'validate_tools').chat.completions.create({ ...params, stream: true });
    const calls = [];
    let content = '';
    let finish = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        content += choice.delta.content ?? '';
        for (const tc of choice.delta.tool_calls ?? []) {
          const c = (calls[tc.index] ??= { name: '', arguments: '' });
          c.name += tc.function?.name ?? '';
          c.arguments += tc.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(content, read('tool_intro.txt'));
    assert.deepEqual(
      calls.map((c) => ({ name: c.name, input: JSON.parse(c.arguments) })),
      JSON.parse(read('search_call.json')).map((c) => ({
        name: c.name,
        input: typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments,
      })),
    );
    assert.equal(finish, 'tool_calls');
    // The upstream was asked twice: the retry carries the refused call,
    // answered by a tool message that names the failing path.
    const sent = (await recorded('validate_tools')).slice(before.length);
    assert.equal(sent.length, 2);
    const added = sent[1].messages.slice(sent[0].messages.length);
    assert.equal(added[0].role, 'assistant');
    assert.equal(added[0].tool_calls[0].function.name, 'search_knowledge');
    assert.equal(added[1].role, 'tool');
    assert.equal(added[1].tool_call_id, added[0].tool_calls[0].id);
    assert.match(added[1].content, /at \/query: got number, want string/);
    assert.deepEqual({ ...sent[1], messages: sent[0].messages }, sent[0], 'nothing else changed');
  });
});

/** recorded returns what a mock with `record` was sent, oldest first. */
async function recorded(mock) {
  const upstream = BASE.replace(/:\d+$/, ':18100');
  const res = await fetch(`${upstream}/m/${mock}/13/llm_mock/requests`);
  assert.equal(res.status, 200);
  return res.json();
}
