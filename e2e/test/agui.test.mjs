// AG-UI (protocol agui, request_format agui; CONTRACT.md §16), consumed
// with @ag-ui/client's HttpAgent as CopilotKit and every AG-UI page do:
// runAgent() posts the RunAgentInput, parses the SSE, validates every event
// against the schemas, verifies the run (verifyEvents: RUN_STARTED first,
// messages and tool calls opened before their content and closed before
// RUN_FINISHED, one run) and assembles the messages. Both the current
// release (1.0.0) and the version @copilotkit/runtime pins (0.0.59, as
// the alias ag-ui-client-0059) run every case. Anything either client
// warns about (a field it strips, an event it drops) fails the test.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';

import { HttpAgent as HttpAgent1 } from '@ag-ui/client';
import { HttpAgent as HttpAgent0059 } from 'ag-ui-client-0059';

import { CHUNKS, CUT_CHUNKS, CUTS, MOCKS, url } from './expected.mjs';
import { matchesPartial, partialAnswer } from './expected_cut.mjs';

const CLIENTS = { '1.0.0': HttpAgent1, '0.0.59': HttpAgent0059 };

const QUESTION = '三分化训练怎么安排？';
const user = (text = QUESTION) => ({ id: 'u1', role: 'user', content: text });

// Every warning or error either client logs while a test runs: a field
// it stripped, an event it dropped, a failed verification.
const logged = [];
const saved = {};
before(() => {
  for (const level of ['warn', 'error']) {
    saved[level] = console[level];
    console[level] = (...args) => logged.push(`${level}: ${args.map(String).join(' ')}`);
  }
});
after(() => Object.assign(console, saved));

/**
 * run runs an HttpAgent of version against api with messages and the
 * run's tools and context, as a page does; it returns the agent, the
 * events the subscriber saw, the messages the run added, the RUN_ERROR
 * (if any) and what the client logged.
 */
async function run(version, api, { messages = [user()], tools = [], context = [], agent } = {}) {
  agent ??= new CLIENTS[version]({ url: api, threadId: 'thread-e2e', initialMessages: messages });
  const events = [];
  let runError;
  const mark = logged.length;
  const runId = `run-${Math.random().toString(36).slice(2)}`;
  const { newMessages } = await agent.runAgent({ runId, tools, context }, {
    onEvent: ({ event }) => void events.push(event),
    onRunErrorEvent: ({ event }) => void (runError = event),
  });
  return { agent, events, newMessages, runError, runId, logs: logged.slice(mark) };
}

/** the reasoning messages a mock's reply makes: free reasoning, then each phase under its title. */
function wantReasoning(want) {
  const phases = (want.phases ?? []).map((p) => `**${p.title}**\n\n${p.text}`);
  return [...want.reasoning.slice(0, want.reasoning.length - phases.length), ...phases];
}

const customs = (events, name) => events.filter((e) => e.type === 'CUSTOM' && e.name === `llmstream.${name}`).map((e) => e.value);

/** checkRun asserts one finished run against the mock's fixture. */
function checkRun(r, want) {
  assert.deepEqual(r.logs, [], 'the client logged nothing');
  assert.equal(r.runError, undefined);
  const types = r.events.map((e) => e.type);
  assert.equal(types[0], 'RUN_STARTED');
  assert.equal(types.at(-1), 'RUN_FINISHED');
  assert.equal(types.filter((t) => t === 'RUN_FINISHED' || t === 'RUN_ERROR').length, 1);
  assert.ok(!types.some((t) => t.startsWith('THINKING_')), 'no deprecated THINKING_* events');
  const [started, finished] = [r.events[0], r.events.at(-1)];
  assert.equal(started.threadId, 'thread-e2e');
  assert.equal(started.runId, r.runId);
  assert.equal(finished.threadId, 'thread-e2e');
  assert.equal(finished.runId, r.runId);
  assert.equal(finished.metadata.llmstream.finishReason, want.finish);
  assert.ok(finished.usage[0].totalTokens > 0, `usage ${JSON.stringify(finished.usage)}`);

  const assistant = r.newMessages.filter((m) => m.role === 'assistant');
  assert.equal(assistant.length, 1, 'one assistant message: the answer and the calls of the round');
  assert.equal(assistant[0].content ?? null, want.answer === null ? null : want.answer, 'the answer, exactly');
  assert.deepEqual(r.newMessages.filter((m) => m.role === 'reasoning').map((m) => m.content), wantReasoning(want), 'reasoning messages');
  assert.deepEqual(
    (assistant[0].toolCalls ?? []).map((c) => ({ name: c.function.name, input: JSON.parse(c.function.arguments) })),
    want.toolCalls,
    'tool calls (name, arguments)',
  );
  assert.deepEqual(customs(r.events, 'serp_summary'), want.summary ? [{ text: want.summary }] : []);
  assert.deepEqual(customs(r.events, 'serp_queries'), want.queries ? [{ queries: want.queries }] : []);
  assert.deepEqual(customs(r.events, 'clarify'), want.clarify ? [want.clarify] : []);
  assert.deepEqual(customs(r.events, 'artifacts'), want.artifacts?.length ? [{ items: want.artifacts }] : []);
  assert.deepEqual(customs(r.events, 'violation').map((v) => v.code), want.violations);
}

for (const version of Object.keys(CLIENTS)) {
  describe(`agui: @ag-ui/client ${version} HttpAgent.runAgent()`, () => {
    for (const [mock, want] of Object.entries(MOCKS)) {
      for (const chunk of CHUNKS) {
        test(`${want.format}/${mock}/${chunk}`, async () => {
          checkRun(await run(version, url('agui', want.format, mock, chunk)), want);
        });
      }
      test(`auto/${mock}/13`, async () => {
        checkRun(await run(version, url('agui', 'auto', mock, 13)), want);
      });
    }

    test('a frontend tool round trip: the call, then a second run carrying its result', async () => {
      const tools = [{
        name: 'show_weather', description: 'Shows the weather card on the page',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      }];
      const first = await run(version, url('agui', 'text', 'agui_tools', 13), { tools, context: [{ description: 'Page', value: 'weather' }] });
      assert.deepEqual(first.logs, []);
      assert.equal(first.events.at(-1).metadata.llmstream.finishReason, 'tool_calls');
      const [assistant] = first.newMessages;
      assert.equal(assistant.content, 'Let me ask the page.');
      assert.equal(assistant.toolCalls.length, 1);
      const call = assistant.toolCalls[0];
      assert.equal(call.function.name, 'show_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
      // The page runs its tool and the next run carries the result, with
      // the history the client assembled (reasoning messages too).
      first.agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: call.id, content: 'Sunny, 21°C' });
      const second = await run(version, undefined, { agent: first.agent, tools });
      assert.deepEqual(second.logs, []);
      assert.equal(second.runError, undefined);
      assert.equal(second.events.at(-1).type, 'RUN_FINISHED');
      assert.equal(second.events.at(-1).metadata.llmstream.finishReason, 'stop');
      assert.deepEqual(second.newMessages.map((m) => [m.role, m.content]), [['assistant', 'The page says: Sunny, 21°C']]);
      assert.deepEqual(second.agent.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    });

    for (const cut of Object.keys(CUTS)) {
      for (const chunk of CUT_CHUNKS) {
        const format = MOCKS[CUTS[cut].full].format;
        test(`truncated upstream ${format}/${cut}/${chunk}: RUN_ERROR last, the text so far`, async () => {
          const r = await run(version, url('agui', format, cut, chunk));
          // runAgent resolves either way: the terminal event says how the run ended.
          assert.deepEqual(r.logs, []);
          assert.equal(r.events.at(-1).type, 'RUN_ERROR');
          assert.equal(r.runError.code, 'upstream_error');
          assert.equal(r.runError.message, 'upstream: the connection broke off mid-reply');
          assert.ok(!r.events.some((e) => e.type === 'RUN_FINISHED'));
          const text = r.newMessages.filter((m) => m.role === 'assistant').map((m) => m.content ?? '').join('');
          const want = partialAnswer(cut, chunk);
          assert.ok(want.length > 0, 'the cut falls inside the answer');
          assert.ok(matchesPartial(text, want), `the answer up to the cut: got ${JSON.stringify(text)}, want ${JSON.stringify(want)}`);
        });
      }
    }

    test('an upstream that refuses: RUN_ERROR provider_error with its message', async () => {
      const r = await run(version, url('agui', 'text', 'no_such_mock', 13));
      assert.deepEqual(r.logs, []);
      assert.deepEqual(r.events.map((e) => e.type), ['RUN_STARTED', 'RUN_ERROR']);
      assert.equal(r.runError.code, 'provider_error');
      assert.match(r.runError.message, /no such mock/);
    });

    test('a request the route refuses: HTTP 400 naming the problem, runAgent rejects', async () => {
      const agent = new CLIENTS[version]({ url: url('agui', 'text', 'text', 13), initialMessages: [user()] });
      const mark = logged.length;
      await assert.rejects(
        agent.runAgent({ tools: [{ name: 'show_weather', description: 'd', parameters: ['not a schema'] }] }),
        /HTTP 400: .*invalid_tools.*tools\[0\]\.parameters/,
      );
      logged.length = mark; // HttpAgent logs the failure it rethrows
    });
  });
}

describe('agui: the wire', () => {
  test('data-only SSE with LF line endings, the response headers', async () => {
    const res = await fetch(url('agui', 'thinkingml', 'thinkingml', 13), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'e2e-agui-1' },
      body: JSON.stringify({ threadId: 't', runId: 'r', messages: [user()], tools: [], context: [], state: {}, forwardedProps: {} }),
    });
    const body = await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(res.headers.get('x-request-id'), 'e2e-agui-1');
    assert.ok(!body.includes('\r'), 'LF only');
    const blocks = body.trimEnd().split('\n\n');
    for (const b of blocks) assert.match(b, /^data: \{.*\}$/, `one data line per event: ${JSON.stringify(b)}`);
    const types = blocks.map((b) => JSON.parse(b.slice('data: '.length)).type);
    assert.equal(types[0], 'RUN_STARTED');
    assert.equal(types.at(-1), 'RUN_FINISHED');
    assert.ok(types.includes('REASONING_START') && types.includes('TEXT_MESSAGE_CONTENT'));
  });

  test('a body that is no RunAgentInput: 400 with the OpenAI error shape', async () => {
    const res = await fetch(url('agui', 'text', 'text', 13), {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ threadId: 't', runId: 'r' }),
    });
    assert.equal(res.status, 400);
    const err = await res.json();
    assert.equal(err.error.code, 'missing_messages');
    assert.match(err.error.message, /messages/);
  });
});

describe('agui: the agent loop\'s rounds in HttpAgent (the goldens of transform/agui)', () => {
  const golden = (scenario) => readFile(new URL(`../../transform/agui/testdata/${scenario}.golden`, import.meta.url));
  const canned = (body) => async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  for (const version of Object.keys(CLIENTS)) {
    test(`${version}: server_tools: results as tool messages, progress as an activity, round 2 a step`, async () => {
      const agent = new CLIENTS[version]({ url: 'http://canned/agui', fetch: canned(await golden('server_tools')), initialMessages: [user('What is Caddy?')] });
      // The goldens are the encoder's with the fixed ids of encodertest.Meta.
      const r = await run(version, undefined, { agent });
      assert.deepEqual(r.logs, []);
      const roles = agent.messages.map((m) => m.role);
      assert.deepEqual(roles, ['user', 'reasoning', 'assistant', 'tool', 'tool', 'activity', 'reasoning', 'assistant']);
      const [, , round1, weather, search, progress, , round2] = agent.messages;
      assert.equal(round1.content, 'Let me look.');
      assert.deepEqual(round1.toolCalls.map((c) => [c.id, c.function.name, c.metadata?.llmstream?.label]), [
        ['call_1', 'search_knowledge', '知识检索'], ['call_2', 'get_weather', 'get_weather'],
      ]);
      assert.deepEqual([weather.toolCallId, weather.content], ['call_2', '18°C, sunny']);
      assert.deepEqual([search.toolCallId, search.content], ['call_1', 'Caddy is a web server.']);
      assert.equal(progress.activityType, 'llmstream.tool_progress');
      assert.deepEqual(progress.content, { toolCallId: 'call_1', toolName: 'search_knowledge', status: 'completed', progress: 2, total: 3, message: 'reading' });
      assert.equal(round2.content, 'Caddy is a web server.');
      assert.deepEqual(r.events.filter((e) => e.type.startsWith('STEP_')).map((e) => [e.type, e.stepName]), [['STEP_STARTED', 'round 2'], ['STEP_FINISHED', 'round 2']]);
    });

    test(`${version}: mixed_turn: the server call has its result, the client call waits for the page`, async () => {
      const agent = new CLIENTS[version]({ url: 'http://canned/agui', fetch: canned(await golden('mixed_turn')), initialMessages: [user()] });
      const r = await run(version, undefined, { agent });
      assert.deepEqual(r.logs, []);
      const results = new Set(agent.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
      const calls = agent.messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.id);
      assert.deepEqual(calls.filter((id) => !results.has(id)), ['call_c'], 'only the client call is pending');
      assert.equal(agent.messages.find((m) => m.role === 'tool').metadata.llmstream.status, 'error');
    });

    test(`${version}: error_while_tool_runs: the running call gets a failed result, then RUN_ERROR`, async () => {
      const agent = new CLIENTS[version]({ url: 'http://canned/agui', fetch: canned(await golden('error_while_tool_runs')), initialMessages: [user()] });
      const r = await run(version, undefined, { agent });
      assert.deepEqual(r.logs, []);
      assert.equal(r.runError.message, 'the tool call was cancelled');
      const tool = agent.messages.find((m) => m.role === 'tool');
      assert.equal(tool.content, 'the tool call was cancelled');
    });
  }
});
