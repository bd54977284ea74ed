// The AI SDK UI message stream (protocol aisdk, request_format aisdk),
// consumed with the `ai` package as useChat does: DefaultChatTransport's
// sendMessages (which posts useChat's body, checks the response and parses
// every chunk against the SDK's schema) with readUIMessageStream, and a
// whole Chat (AbstractChat) round trip.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DefaultChatTransport, getToolName, isToolUIPart, readUIMessageStream } from 'ai';

import { NodeChat } from './chat.mjs';
import { BASE, CHUNKS, CUT_CHUNKS, CUTS, MOCKS, RAW_MOCKS, url } from './expected.mjs';
import { matchesPartial, partialAnswer } from './expected_cut.mjs';

const aisdkFinish = { stop: 'stop', tool_calls: 'tool-calls' };

const userMessage = (text) => ({ id: 'u1', role: 'user', parts: [{ type: 'text', text }] });

/**
 * stream posts one user message with DefaultChatTransport and reads the
 * reply with readUIMessageStream. It returns the last UIMessage snapshot,
 * the raw chunks (a tee of the same stream) and the errors reported.
 */
async function stream(api) {
  const transport = new DefaultChatTransport({ api });
  const chunks = await transport.sendMessages({
    chatId: 'chat-e2e',
    messages: [userMessage('三分化训练怎么安排？')],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: AbortSignal.timeout(30_000),
  });
  const [forUI, forLog] = chunks.tee();
  const raw = [];
  const logged = (async () => {
    for await (const c of forLog) raw.push(c);
  })();
  const errors = [];
  let message;
  let snapshots = 0;
  for await (const m of readUIMessageStream({ stream: forUI, onError: (e) => errors.push(e) })) {
    message = m;
    snapshots++;
  }
  await logged;
  return { message, chunks: raw, errors, snapshots };
}

const partsOf = (message, type) => message.parts.filter((p) => p.type === type);
const dataOf = (message, type) => partsOf(message, type).map((p) => p.data);

/** checkMessage asserts the assembled assistant message against the fixture. */
function checkMessage(message, want) {
  assert.equal(message.role, 'assistant');
  assert.ok(message.id, 'the message has the id of the start chunk');

  const reasoning = partsOf(message, 'reasoning');
  assert.deepEqual(reasoning.map((p) => p.text), want.reasoning, 'reasoning parts');
  for (const p of reasoning) assert.equal(p.state, 'done');

  const text = partsOf(message, 'text');
  if (want.answer === null) {
    assert.deepEqual(text, [], 'no text part when the model wrote no answer');
  } else {
    assert.equal(text.length, 1, 'one text part');
    assert.equal(text[0].text, want.answer, 'the answer, exactly');
    assert.equal(text[0].state, 'done');
  }

  assert.deepEqual(dataOf(message, 'data-phase'), (want.phases ?? []).map(({ id, title }) => ({ id, title })), 'data-phase parts');
  assert.deepEqual(dataOf(message, 'data-serp-summary'), want.summary ? [{ text: want.summary }] : [], 'data-serp-summary');
  assert.deepEqual(dataOf(message, 'data-serp-queries'), want.queries ? [{ queries: want.queries }] : [], 'data-serp-queries');
  assert.deepEqual(dataOf(message, 'data-clarify'), want.clarify ? [want.clarify] : [], 'data-clarify');
  assert.deepEqual(dataOf(message, 'data-artifacts'), want.artifacts?.length ? [{ items: want.artifacts }] : [], 'data-artifacts');
  const violations = dataOf(message, 'data-violations');
  if (want.violations.length) {
    assert.equal(violations.length, 1, 'one data-violations part');
    assert.deepEqual(violations[0].violations.map((v) => v.code), want.violations);
  } else {
    assert.deepEqual(violations, [], 'no violations');
  }

  const tools = message.parts.filter(isToolUIPart);
  assert.deepEqual(
    tools.map((p) => ({ name: getToolName(p), input: p.input })),
    want.toolCalls,
    'tool parts (name, input)',
  );
  for (const p of tools) {
    assert.equal(p.state, 'input-available');
    assert.match(p.toolCallId, /\S/);
  }
  assert.equal(new Set(tools.map((p) => p.toolCallId)).size, tools.length, 'tool call ids are unique');

  // The parts come in the order the model wrote them: reasoning, then the
  // answer, then the tool calls.
  const idx = (pred) => message.parts.findIndex(pred);
  const lastIdx = (pred) => message.parts.findLastIndex(pred);
  if (reasoning.length && text.length) assert.ok(lastIdx((p) => p.type === 'reasoning') < idx((p) => p.type === 'text'));
  if (text.length && tools.length) assert.ok(idx((p) => p.type === 'text') < idx(isToolUIPart));
}

const cases = [];
for (const [mock, want] of Object.entries(MOCKS)) {
  for (const chunk of CHUNKS) cases.push({ mock, want, chunk, format: want.format });
  // format auto must detect every fixture's format.
  cases.push({ mock, want, chunk: 13, format: 'auto' });
}

describe('aisdk: DefaultChatTransport + readUIMessageStream', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const { message, chunks, errors, snapshots } = await stream(url('aisdk', format, mock, chunk));
      assert.deepEqual(errors, []);
      assert.ok(snapshots > 1, 'the message streams in several updates');
      assert.equal(chunks[0].type, 'start');
      assert.equal(chunks.at(-1).type, 'finish');
      assert.equal(chunks.at(-1).finishReason, aisdkFinish[want.finish]);
      assert.equal(chunks.filter((c) => c.type === 'finish' || c.type === 'error').length, 1);
      assert.equal(message.id, chunks[0].messageId);
      checkMessage(message, want);
    });
  }

  test('the response headers of a UI message stream', async () => {
    const res = await fetch(url('aisdk', 'text', 'text', 13), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'e2e-aisdk-1' },
      body: JSON.stringify({ id: 'c', trigger: 'submit-message', messages: [userMessage('hi')] }),
    });
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(res.headers.get('x-request-id'), 'e2e-aisdk-1');
  });

  for (const cut of Object.keys(CUTS)) {
    for (const chunk of CUT_CHUNKS) {
      const format = MOCKS[CUTS[cut].full].format;
      test(`truncated upstream ${format}/${cut}/${chunk}: an error chunk, the text so far`, async () => {
        const { message, chunks, errors } = await stream(url('aisdk', format, cut, chunk));
        assert.equal(errors.length, 1, 'readUIMessageStream reports one error');
        assert.equal(errors[0].message, 'upstream: the connection broke off mid-reply');
        assert.equal(chunks.at(-1).type, 'error');
        assert.equal(chunks.filter((c) => c.type === 'finish').length, 0, 'no finish after a cut');
        const text = partsOf(message, 'text').map((p) => p.text).join('');
        const want = partialAnswer(cut, chunk);
        assert.ok(want.length > 0, 'the cut falls inside the answer');
        assert.ok(matchesPartial(text, want), `the answer up to the cut: got ${JSON.stringify(text)}, want ${JSON.stringify(want)}`);
        assert.ok(text.length < MOCKS[CUTS[cut].full].answer.length);
      });
    }
  }
});

describe('aisdk: Chat (AbstractChat, what useChat runs)', () => {
  for (const mock of ['thinkingml', 'jsonl', 'aiplan', 'aiplan_tools', 'final_result_clarify', 'final_result_artifacts', 'text', 'native_tools', 'ask_user', 'thinkingml_violation']) {
    for (const chunk of CHUNKS) {
      const want = MOCKS[mock];
      test(`${want.format}/${mock}/${chunk}`, async () => {
        const chat = new NodeChat({ api: url('aisdk', want.format, mock, chunk) });
        await chat.sendMessage({ text: '三分化训练怎么安排？' });
        assert.deepEqual(chat.calls.errors, []);
        assert.equal(chat.status, 'ready');
        assert.equal(chat.error, undefined);
        assert.deepEqual(chat.memory.statuses, ['submitted', 'streaming', 'ready']);
        assert.equal(chat.messages.length, 2);
        assert.equal(chat.messages[0].role, 'user');
        checkMessage(chat.messages[1], want);
        assert.equal(chat.calls.finishes.length, 1);
        const f = chat.calls.finishes[0];
        assert.equal(f.isError, false);
        assert.equal(f.isAbort, false);
        assert.equal(f.finishReason, aisdkFinish[want.finish], 'a finish chunk was received');
        // onData sees every data part as it arrives; onToolCall every call.
        assert.deepEqual(
          chat.calls.data.map((d) => d.type),
          chat.messages[1].parts.filter((p) => p.type.startsWith('data-')).map((p) => p.type),
        );
        assert.deepEqual(chat.calls.toolCalls.map((c) => ({ name: c.toolName, input: c.input })), want.toolCalls);
      });
    }
  }

  test('a second turn sends the history and appends the new reply', async () => {
    const chat = new NodeChat({ api: url('aisdk', 'text', 'text', 13) });
    await chat.sendMessage({ text: 'first' });
    await chat.sendMessage({ text: 'second' });
    assert.equal(chat.status, 'ready');
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(partsOf(chat.messages[3], 'text')[0].text, MOCKS.text.answer);
    assert.notEqual(chat.messages[1].id, chat.messages[3].id);
  });

  for (const cut of Object.keys(CUTS)) {
    for (const chunk of CUT_CHUNKS) {
      const format = MOCKS[CUTS[cut].full].format;
      test(`truncated upstream ${format}/${cut}/${chunk}: status error, onError called`, async () => {
        const chat = new NodeChat({ api: url('aisdk', format, cut, chunk) });
        await chat.sendMessage({ text: 'hi' });
        assert.equal(chat.status, 'error', 'without our error chunk the SDK would end quietly in ready');
        assert.equal(chat.error?.message, 'upstream: the connection broke off mid-reply');
        assert.equal(chat.calls.errors.length, 1);
        assert.equal(chat.calls.finishes.length, 1);
        assert.equal(chat.calls.finishes[0].isError, true);
        // What arrived before the cut stays on screen.
        const text = partsOf(chat.lastMessage, 'text').map((p) => p.text).join('');
        assert.equal(chat.lastMessage.role, 'assistant');
        assert.ok(matchesPartial(text, partialAnswer(cut, chunk)), `got ${JSON.stringify(text)}`);
      });
    }
  }
});

describe('aisdk: models served raw (think_tags, text_tools)', () => {
  for (const [mock, want] of Object.entries(RAW_MOCKS)) {
    for (const format of ['text', 'auto']) {
      for (const chunk of CHUNKS) {
        const api = `${BASE}/${want.prefix}aisdk/${format}/${mock}/${chunk}`;
        test(`readUIMessageStream ${want.prefix}${format}/${mock}/${chunk}`, async () => {
          const { message, chunks, errors } = await stream(api);
          assert.deepEqual(errors, []);
          assert.equal(chunks.at(-1).finishReason, aisdkFinish[want.finish]);
          checkMessage(message, want);
        });
      }
    }
    test(`Chat ${want.prefix}text/${mock}/r`, async () => {
      const chat = new NodeChat({ api: `${BASE}/${want.prefix}aisdk/text/${mock}/r` });
      await chat.sendMessage({ text: '三分化训练怎么安排？' });
      assert.deepEqual(chat.calls.errors, []);
      assert.equal(chat.status, 'ready');
      checkMessage(chat.messages[1], want);
      assert.deepEqual(chat.calls.toolCalls.map((c) => ({ name: c.toolName, input: c.input })), want.toolCalls);
      assert.equal(chat.calls.finishes[0].finishReason, aisdkFinish[want.finish]);
    });
  }
});
