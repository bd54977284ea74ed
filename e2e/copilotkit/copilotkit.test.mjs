// A CopilotKit runtime (@copilotkit/runtime, its v2 API as CopilotKit's
// docs set it up) whose agents are the built ./caddy's agui routes, reached
// through @ag-ui/client's HttpAgent, the version the runtime pins: a
// CopilotKit page in front of a chat-completions model is one route
// (CONTRACT.md §16). The runtime is served on a local port; the page's
// side is played by the same HttpAgent a CopilotKit frontend extends,
// posting to the runtime's agent/<id>/run endpoint, so every event is
// verified twice: by the runtime's agent, then by the "page".
//
// Needs the gateway of e2e/run.sh on LLMSTREAM_E2E_BASE (default
// http://127.0.0.1:18080).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';

import { HttpAgent } from '@ag-ui/client';
import { CopilotRuntime, InMemoryAgentRunner } from '@copilotkit/runtime/v2';
import { createCopilotNodeListener } from '@copilotkit/runtime/v2/node';

import { MOCKS } from '../test/expected.mjs';

const BASE = process.env.LLMSTREAM_E2E_BASE ?? 'http://127.0.0.1:18080';
process.env.COPILOTKIT_TELEMETRY_DISABLED = 'true';

let server;
let runtimeURL;
const logged = [];
const saved = {};

before(async () => {
  for (const level of ['warn', 'error']) {
    saved[level] = console[level];
    console[level] = (...args) => logged.push(`${level}: ${args.map(String).join(' ')}`);
  }
  // The runtime of the docs' quick start, with llmstream's /agui routes as
  // its agents (e2e/Caddyfile: /agui/<format>/<mock>/<chunk>).
  const runtime = new CopilotRuntime({
    agents: {
      default: new HttpAgent({ url: `${BASE}/agui/thinkingml/thinkingml/13` }),
      reasoner: new HttpAgent({ url: `${BASE}/agui/text/text/r` }),
      weather: new HttpAgent({ url: `${BASE}/agui/text/agui_tools/13` }),
      broken: new HttpAgent({ url: `${BASE}/agui/text/text_cut/13` }),
    },
    runner: new InMemoryAgentRunner(),
  });
  const listener = createCopilotNodeListener({ runtime, basePath: '/api/copilotkit', activateChannels: false });
  server = createServer(listener);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  runtimeURL = `http://127.0.0.1:${server.address().port}/api/copilotkit`;
});

after(async () => {
  Object.assign(console, saved);
  server?.closeAllConnections?.();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
});

/** page runs agentId through the runtime as a CopilotKit page does. */
async function page(agentId, { messages = [{ id: 'u1', role: 'user', content: '三分化训练怎么安排？' }], tools = [], agent } = {}) {
  agent ??= new HttpAgent({ url: `${runtimeURL}/agent/${agentId}/run`, threadId: `thread-${agentId}-${Date.now()}`, initialMessages: messages });
  const events = [];
  let runError;
  const mark = logged.length;
  const { newMessages } = await agent.runAgent({ tools }, {
    onEvent: ({ event }) => void events.push(event),
    onRunErrorEvent: ({ event }) => void (runError = event),
  });
  return { agent, events, newMessages, runError, logs: logged.slice(mark) };
}

const text = (messages, role) => messages.filter((m) => m.role === role).map((m) => m.content);

describe('CopilotKit runtime with llmstream as its agent', () => {
  test('GET /info lists the agents', async () => {
    const res = await fetch(`${runtimeURL}/info`);
    assert.equal(res.status, 200);
    const info = await res.json();
    assert.deepEqual(Object.keys(info.agents).sort(), ['broken', 'default', 'reasoner', 'weather']);
  });

  test('a chat request answered end to end: reasoning, phases and the answer', async () => {
    const r = await page('default');
    assert.deepEqual(r.logs, []);
    assert.equal(r.runError, undefined);
    const types = r.events.map((e) => e.type);
    assert.equal(types[0], 'RUN_STARTED');
    assert.equal(types.at(-1), 'RUN_FINISHED');
    assert.ok(!types.some((t) => t.startsWith('THINKING_')));
    const want = MOCKS.thinkingml;
    assert.deepEqual(text(r.newMessages, 'assistant'), [want.answer], 'the answer, exactly, without markup');
    assert.deepEqual(text(r.newMessages, 'reasoning'), [want.reasoning[0], ...want.phases.map((p) => `**${p.title}**\n\n${p.text}`)],
      'the <think> block, then each phase under its title');
    assert.ok(r.events.some((e) => e.type === 'CUSTOM' && e.name === 'llmstream.serp_queries'), 'CUSTOM events pass the runtime');
  });

  test('native reasoning_content as a reasoning message, the answer as text', async () => {
    const r = await page('reasoner');
    assert.deepEqual(r.logs, []);
    assert.equal(r.runError, undefined);
    assert.deepEqual(text(r.newMessages, 'reasoning'), MOCKS.text.reasoning);
    assert.deepEqual(text(r.newMessages, 'assistant'), [MOCKS.text.answer]);
  });

  test('a frontend tool round trip through the runtime', async () => {
    const tools = [{ name: 'show_weather', description: 'Shows the weather card', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const first = await page('weather', { tools, messages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }] });
    assert.deepEqual(first.logs, []);
    const call = first.newMessages.find((m) => m.role === 'assistant').toolCalls[0];
    assert.equal(call.function.name, 'show_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
    first.agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: call.id, content: 'Sunny, 21°C' });
    const second = await page('weather', { tools, agent: first.agent });
    assert.deepEqual(second.logs, []);
    assert.equal(second.runError, undefined);
    assert.deepEqual(text(second.newMessages, 'assistant'), ['The page says: Sunny, 21°C']);
  });

  test('an upstream that breaks off: the page gets RUN_ERROR with the text so far', async () => {
    const r = await page('broken');
    assert.equal(r.events.at(-1).type, 'RUN_ERROR');
    assert.equal(r.runError.message, 'upstream: the connection broke off mid-reply');
    assert.ok(text(r.newMessages, 'assistant').join('').length > 0, 'the text before the cut stays');
  });
});
