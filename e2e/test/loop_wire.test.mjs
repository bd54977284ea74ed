// The agent loop's rounds (CONTRACT.md §12) as each protocol's encoder
// writes them, fed to the real client libraries before the loop runs in
// Caddy: the goldens of transform/<protocol>/testdata for the scenarios of
// transform/encodertest (server_tools: two calls to the gateway's tools,
// progress, results, a second round; mixed_turn: a server call and a
// client call; error_while_tool_runs: the stream fails while a call runs)
// are served by a canned fetch, so that "a client that follows its
// protocol's spec must accept it" is checked with the libraries
// themselves. No Caddy is needed.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import { DefaultChatTransport, isToolUIPart, lastAssistantMessageIsCompleteWithToolCalls, readUIMessageStream } from 'ai';
import OpenAI from 'openai';

import { NodeChat } from './chat.mjs';
import { assertEvent, assertResponse } from './openresponses.mjs';

/** golden reads what protocol's encoder wrote for scenario. */
const golden = (protocol, scenario) =>
  readFile(new URL(`../../transform/${protocol}/testdata/${scenario}.golden`, import.meta.url));

/** canned is a fetch that answers every request with body. */
const canned = (body, headers = { 'content-type': 'text/event-stream' }) => async () =>
  new Response(body, { status: 200, headers });

const aisdkHeaders = { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' };
const userMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is Caddy?' }] };

/** uiMessage reads an aisdk golden as useChat's transport and reader do. */
async function uiMessage(scenario) {
  const transport = new DefaultChatTransport({ api: 'http://canned/chat', fetch: canned(await golden('aisdk', scenario), aisdkHeaders) });
  const stream = await transport.sendMessages({
    chatId: 'c', messages: [userMessage], trigger: 'submit-message', messageId: undefined, abortSignal: undefined,
  });
  const errors = [];
  let message;
  for await (const m of readUIMessageStream({ stream, onError: (e) => errors.push(e) })) message = m;
  return { message, errors };
}

describe('aisdk: the rounds in useChat', () => {
  test('server_tools: providerExecuted dynamic tool parts with their output, progress in place, a step per round', async () => {
    const { message, errors } = await uiMessage('server_tools');
    assert.deepEqual(errors, []);
    assert.deepEqual(message.parts.map((p) => p.type), [
      'reasoning', 'text', 'dynamic-tool', 'dynamic-tool', 'data-tool-progress', 'step-start', 'reasoning', 'text',
    ]);
    const [search, weather] = message.parts.filter(isToolUIPart);
    assert.equal(search.toolCallId, 'call_1');
    assert.equal(search.toolName, 'search_knowledge');
    assert.equal(search.title, '知识检索');
    assert.equal(search.providerExecuted, true);
    assert.equal(search.state, 'output-available');
    assert.deepEqual(search.input, { query: 'caddy' });
    assert.equal(search.output, 'Caddy is a web server.');
    assert.equal(weather.state, 'output-available');
    assert.equal(weather.output, '18°C, sunny');
    const progress = message.parts.filter((p) => p.type === 'data-tool-progress');
    assert.equal(progress.length, 1, 'the second progress replaced the first');
    assert.deepEqual(progress[0].data, { toolCallId: 'call_1', toolName: 'search_knowledge', progress: 2, total: 3, message: 'reading' });
    assert.deepEqual(message.parts.filter((p) => p.type === 'text').map((p) => [p.text, p.state]),
      [['Let me look.', 'done'], ['Caddy is a web server.', 'done']]);
  });

  test('mixed_turn: the server call failed, the client call waits for the page', async () => {
    const { message, errors } = await uiMessage('mixed_turn');
    assert.deepEqual(errors, []);
    const [server, client] = message.parts.filter(isToolUIPart);
    assert.equal(server.type, 'dynamic-tool');
    assert.equal(server.state, 'output-error');
    assert.equal(server.errorText, 'get_weather timed out after 30s');
    assert.equal(client.type, 'tool-client_fn');
    assert.equal(client.state, 'input-available');
    assert.equal(client.providerExecuted, undefined);
    // The page's automatic resubmission waits for its own call only.
    assert.equal(lastAssistantMessageIsCompleteWithToolCalls({ messages: [message] }), false);
    client.state = 'output-available';
    client.output = { ok: true };
    assert.equal(lastAssistantMessageIsCompleteWithToolCalls({ messages: [message] }), true);
  });

  test('error_while_tool_runs: the running call ends in output-error, then the error', async () => {
    const { message, errors } = await uiMessage('error_while_tool_runs');
    assert.equal(errors.length, 1);
    const [call] = message.parts.filter(isToolUIPart);
    assert.equal(call.state, 'output-error');
  });

  test('a Chat runs onToolCall for the client call only and ends ready', async () => {
    const chat = new NodeChat({ api: 'http://canned/chat', fetch: canned(await golden('aisdk', 'mixed_turn'), aisdkHeaders) });
    await chat.sendMessage({ text: 'both' });
    assert.deepEqual(chat.calls.errors, []);
    assert.equal(chat.status, 'ready');
    assert.deepEqual(chat.calls.toolCalls.map((c) => c.toolName), ['client_fn']);
    assert.equal(chat.calls.finishes[0].finishReason, 'tool-calls');
  });
});

describe('responses: the rounds in openai-node', () => {
  const client = async (scenario, headers) =>
    new OpenAI({ apiKey: 'k', baseURL: 'http://canned/v1', fetch: canned(await golden('responses', scenario), headers), maxRetries: 0 });

  test('server_tools: responses.stream() accumulates the mcp_call items and both rounds', async () => {
    const stream = (await client('server_tools')).responses.stream({ model: 'm', input: 'What is Caddy?' });
    const types = [];
    for await (const ev of stream) {
      assertEvent(ev);
      types.push(ev.type);
    }
    const r = await stream.finalResponse();
    assertResponse(r);
    assert.equal(r.status, 'completed');
    assert.deepEqual(r.output.map((o) => o.type), ['reasoning', 'message', 'mcp_call', 'mcp_call', 'reasoning', 'message']);
    const calls = r.output.filter((o) => o.type === 'mcp_call');
    assert.deepEqual(calls.map((c) => [c.name, c.server_label, c.arguments, c.status, c.output]), [
      ['search_knowledge', 'demo', '{"query":"caddy"}', 'completed', 'Caddy is a web server.'],
      ['get_weather', 'demo', '{"city":"Paris"}', 'completed', '18°C, sunny'],
    ]);
    assert.equal(r.output_text, 'Let me look.Caddy is a web server.');
    assert.equal(r.usage.total_tokens, 42);
    for (const t of ['response.mcp_call_arguments.delta', 'response.mcp_call_arguments.done', 'response.mcp_call.in_progress', 'response.mcp_call.completed']) {
      assert.ok(types.includes(t), t);
    }
    assert.equal(types.filter((t) => t === 'response.created').length, 1, 'one lifecycle for the turn');
  });

  test('mixed_turn: a failed mcp_call beside the function_call the client runs', async () => {
    const stream = (await client('mixed_turn')).responses.stream({ model: 'm', input: 'both' });
    const r = await stream.finalResponse();
    assertResponse(r);
    const mcp = r.output.find((o) => o.type === 'mcp_call');
    assert.equal(mcp.status, 'failed');
    assert.equal(mcp.output, null);
    assert.equal(mcp.error.content[0].text, 'get_weather timed out after 30s');
    assert.deepEqual(r.output.filter((o) => o.type === 'function_call').map((o) => o.call_id), ['call_c']);
  });

  test('server_tools, stream false: one Response with the items', async () => {
    const r = await (await client('server_tools_whole', { 'content-type': 'application/json' })).responses.create({ model: 'm', input: 'q' });
    assertResponse(r);
    assert.deepEqual(r.output.map((o) => o.type), ['reasoning', 'message', 'mcp_call', 'mcp_call', 'reasoning', 'message']);
  });

  test('error_while_tool_runs: the stream raises after the call failed', async () => {
    const stream = (await client('error_while_tool_runs')).responses.stream({ model: 'm', input: 'q' });
    const seen = [];
    await assert.rejects(async () => {
      for await (const ev of stream) {
        assertEvent(ev);
        seen.push(ev.type);
      }
    }, (err) => !(err instanceof assert.AssertionError));
    assert.ok(seen.includes('response.mcp_call.failed'));
  });
});

describe('anthropic: the rounds in @anthropic-ai/sdk', () => {
  const client = async (name) =>
    new Anthropic({ apiKey: 'k', baseURL: 'http://canned', fetch: canned(await golden('anthropic', name)), maxRetries: 0 });
  const params = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'What is Caddy?' }] };

  test('server_tools, mcp-client beta: MCP blocks with their input and results, contiguous', async () => {
    const stream = (await client('server_tools')).beta.messages.stream({ ...params, betas: ['mcp-client-2025-11-20'] });
    const m = await stream.finalMessage();
    assert.deepEqual(m.content.map((b) => b.type), [
      'thinking', 'text', 'mcp_tool_use', 'mcp_tool_use', 'mcp_tool_result', 'mcp_tool_result', 'thinking', 'text',
    ]);
    const uses = m.content.filter((b) => b.type === 'mcp_tool_use');
    assert.deepEqual(uses.map((b) => [b.id, b.name, b.server_name, b.input]), [
      ['call_1', 'search_knowledge', 'demo', { query: 'caddy' }],
      ['call_2', 'get_weather', 'demo', { city: 'Paris' }],
    ]);
    const results = m.content.filter((b) => b.type === 'mcp_tool_result');
    assert.deepEqual(results.map((b) => [b.tool_use_id, b.is_error, b.content[0].text]), [
      ['call_2', false, '18°C, sunny'], ['call_1', false, 'Caddy is a web server.'],
    ]);
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(m.usage.output_tokens, 12);
  });

  test('why the beta matters: the plain MessageStream keeps an mcp_tool_use without its input', async () => {
    const m = await (await client('server_tools')).messages.stream(params).finalMessage();
    const use = m.content.find((b) => b.type === 'mcp_tool_use');
    assert.deepEqual(use.input, {}, 'input_json_delta is tracked for tool_use and server_tool_use only');
  });

  test('server_tools without the beta: text and thinking only, as a plain client knows them', async () => {
    const m = await (await client('server_tools_no_mcp')).messages.stream(params).finalMessage();
    assert.deepEqual(m.content.map((b) => b.type), ['thinking', 'text', 'thinking', 'text']);
    assert.deepEqual(m.content.filter((b) => b.type === 'text').map((b) => b.text), ['Let me look.', 'Caddy is a web server.']);
  });

  test('mixed_turn, mcp-client beta: stop_reason tool_use for the client call', async () => {
    const m = await (await client('mixed_turn')).beta.messages.stream({ ...params, betas: ['mcp-client-2025-04-04'] }).finalMessage();
    assert.equal(m.stop_reason, 'tool_use');
    assert.deepEqual(m.content.map((b) => b.type), ['text', 'mcp_tool_use', 'tool_use', 'mcp_tool_result']);
    assert.equal(m.content[3].is_error, true);
  });
});

describe('openai: the rounds in chat.completions', () => {
  const client = async (scenario) =>
    new OpenAI({ apiKey: 'k', baseURL: 'http://canned/v1', fetch: canned(await golden('openai', scenario)), maxRetries: 0 });

  test('server_tools: one message, the rounds as paragraphs, no tool calls', async () => {
    const stream = (await client('server_tools')).chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
    const c = await stream.finalChatCompletion();
    assert.equal(c.choices[0].message.content, 'Let me look.\n\nCaddy is a web server.');
    assert.equal(c.choices[0].message.tool_calls, undefined);
    assert.equal(c.choices[0].finish_reason, 'stop');
  });

  test('mixed_turn: the client call alone, at index 0', async () => {
    const stream = (await client('mixed_turn')).chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
    const c = await stream.finalChatCompletion();
    assert.deepEqual(c.choices[0].message.tool_calls.map((t) => [t.id, t.function.name, t.function.arguments]), [['call_c', 'client_fn', '{"x":1}']]);
    assert.equal(c.choices[0].finish_reason, 'tool_calls');
  });
});
