// Real clients see every round of the agent loop natively and accept it
// (CONTRACT.md §12, issue 18 "How we will know"), through Caddy, with real
// MCP servers: the /loop/<protocol>/clients routes of e2e/Caddyfile, whose
// scripted model calls, in round 1, server-everything's long-running
// operation (stdio, with progress) and server-filesystem's read_text_file
// in parallel; in round 2, a server-everything tool over streamable HTTP
// that fails; and in round 3 answers with the error it read. Each client
// library assembles the turn its own way; the test checks what it ends
// up with. (The page in a real browser: page.test.mjs. The Go SDKs:
// go/loop_caddy_test.go.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import { isToolUIPart } from 'ai';
import OpenAI from 'openai';

import { NodeChat } from './chat.mjs';
import { loopURL, notes, streamSSE } from './loop.mjs';
import { checkSkillpet } from './skillpet_order.mjs';

const PROMPT = 'Look it up.';
const LONG = 'Long running operation completed. Duration: 1 seconds, Steps: 2.';
const FAILED = /Invalid resourceId: 0\. Must be a finite positive integer\./;

describe('aisdk: useChat (AbstractChat + DefaultChatTransport) on /loop/aisdk/clients', () => {
  test('server-run dynamic tool parts with their output, progress, a step per round, nothing run by the page', async () => {
    const chat = new NodeChat({ api: loopURL('aisdk', 'clients') });
    await chat.sendMessage({ text: PROMPT });
    assert.deepEqual(chat.calls.errors, []);
    assert.equal(chat.status, 'ready');
    assert.deepEqual(chat.calls.toolCalls, [], 'onToolCall is not called for the gateway’s tools');
    const m = chat.messages[1];
    const types = m.parts.map((p) => p.type);
    assert.deepEqual(
      types.filter((t) => t !== 'data-tool-progress'),
      ['text', 'dynamic-tool', 'dynamic-tool', 'step-start', 'text', 'dynamic-tool', 'step-start', 'text'],
      types.join(' '),
    );
    const [long, read, failed] = m.parts.filter(isToolUIPart);
    assert.equal(long.toolName, 'ev_trigger-long-running-operation');
    assert.equal(long.title, 'Trigger Long Running Operation Tool');
    assert.equal(long.providerExecuted, true);
    assert.equal(long.state, 'output-available');
    assert.deepEqual(long.input, { duration: 1, steps: 2 });
    assert.equal(long.output, LONG);
    assert.equal(read.toolName, 'fs_read_text_file');
    assert.equal(read.title, 'Read a file');
    assert.equal(read.output, notes());
    assert.equal(failed.toolName, 'evh_get-resource-reference');
    assert.equal(failed.state, 'output-error');
    assert.match(failed.errorText, FAILED);
    const progress = m.parts.filter((p) => p.type === 'data-tool-progress');
    assert.equal(progress.length, 1, 'one progress part for the one call that reports progress, replaced in place');
    assert.equal(progress[0].id, long.toolCallId);
    assert.equal(progress[0].data.toolName, long.toolName);
    assert.equal(progress[0].data.total, 2);
    const texts = m.parts.filter((p) => p.type === 'text').map((p) => p.text);
    assert.equal(texts[0], 'Let me look.');
    assert.equal(texts[1], 'One more.');
    assert.match(texts[2], /^Done: /);
    assert.match(texts[2], FAILED);
    assert.equal(chat.calls.finishes.length, 1, 'one turn');
  });
});

describe('responses: openai-node responses.stream() on /loop/responses/clients', () => {
  test('mcp_call items for every server call, in progress then done, one response', async () => {
    const client = new OpenAI({ apiKey: 'sk-e2e', baseURL: loopURL('responses', 'clients', '/v1'), maxRetries: 0 });
    const stream = client.responses.stream({ model: 'm', input: PROMPT });
    const types = [];
    for await (const ev of stream) types.push(ev.type);
    const r = await stream.finalResponse();
    assert.equal(r.status, 'completed');
    assert.deepEqual(r.output.map((o) => o.type), ['message', 'mcp_call', 'mcp_call', 'message', 'mcp_call', 'message']);
    const calls = r.output.filter((o) => o.type === 'mcp_call');
    assert.deepEqual(calls.map((c) => [c.name, c.server_label, c.status]), [
      ['ev_trigger-long-running-operation', 'everything', 'completed'],
      ['fs_read_text_file', 'files', 'completed'],
      ['evh_get-resource-reference', 'everything_http', 'failed'],
    ]);
    assert.deepEqual(JSON.parse(calls[0].arguments), { duration: 1, steps: 2 });
    assert.equal(calls[0].output, LONG);
    assert.equal(calls[1].output, notes());
    assert.match(calls[2].error.content[0].text, FAILED);
    assert.equal(types.filter((t) => t === 'response.created').length, 1, 'one lifecycle for the turn');
    assert.equal(types.filter((t) => t === 'response.completed').length, 1);
    for (const t of ['response.mcp_call_arguments.delta', 'response.mcp_call_arguments.done', 'response.mcp_call.in_progress', 'response.mcp_call.completed', 'response.mcp_call.failed']) {
      assert.ok(types.includes(t), `${t} in ${[...new Set(types)].join(' ')}`);
    }
    assert.match(r.output_text, /^Let me look\.One more\.Done: /);
    assert.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0);
  });
});

describe('anthropic: @anthropic-ai/sdk on /loop/anthropic/clients', () => {
  const client = () => new Anthropic({ apiKey: 'sk-ant-e2e', baseURL: loopURL('anthropic', 'clients'), maxRetries: 0 });
  const params = { model: 'm', max_tokens: 1000, messages: [{ role: 'user', content: PROMPT }] };

  test('beta MCP namespace (anthropic-beta: mcp-client-2025-04-04): mcp_tool_use and mcp_tool_result blocks with input and results', async () => {
    const stream = client().beta.messages.stream({ ...params, betas: ['mcp-client-2025-04-04'] });
    const events = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const m = await stream.finalMessage();
    assert.deepEqual(m.content.map((b) => b.type), [
      'text', 'mcp_tool_use', 'mcp_tool_use', 'mcp_tool_result', 'mcp_tool_result', 'text', 'mcp_tool_use', 'mcp_tool_result', 'text',
    ]);
    const uses = m.content.filter((b) => b.type === 'mcp_tool_use');
    assert.deepEqual(uses.map((b) => [b.name, b.server_name]), [
      ['ev_trigger-long-running-operation', 'everything'], ['fs_read_text_file', 'files'], ['evh_get-resource-reference', 'everything_http'],
    ]);
    assert.deepEqual(uses[0].input, { duration: 1, steps: 2 });
    assert.deepEqual(uses[1].input, { path: 'notes.txt' });
    const results = Object.fromEntries(m.content.filter((b) => b.type === 'mcp_tool_result').map((b) => [b.tool_use_id, b]));
    assert.equal(results[uses[0].id].is_error, false);
    assert.equal(results[uses[0].id].content[0].text, LONG);
    assert.equal(results[uses[1].id].content[0].text, notes());
    assert.equal(results[uses[2].id].is_error, true);
    assert.match(results[uses[2].id].content[0].text, FAILED);
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(events.filter((t) => t === 'message_start').length, 1, 'one message for the turn');
    assert.equal(events.at(-1), 'message_stop');
  });

  test('plain messages.stream() (no beta header): the rounds’ text only, no block it does not know', async () => {
    const m = await client().messages.stream(params).finalMessage();
    assert.deepEqual(m.content.map((b) => b.type), ['text', 'text', 'text']);
    const [a, b, c] = m.content.map((x) => x.text);
    assert.equal(a, 'Let me look.');
    assert.equal(b, 'One more.');
    assert.match(c, /^Done: /);
    assert.equal(m.stop_reason, 'end_turn');
  });
});

describe('openai: chat.completions.stream() on /loop/openai/clients', () => {
  test('one message, the rounds as paragraphs, no tool call for the client', async () => {
    const client = new OpenAI({ apiKey: 'sk-e2e', baseURL: loopURL('openai', 'clients', '/v1'), maxRetries: 0 });
    const c = await client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: PROMPT }], stream_options: { include_usage: true } }).finalChatCompletion();
    const msg = c.choices[0].message;
    assert.match(msg.content, /^Let me look\.\n\nOne more\.\n\nDone: /);
    assert.equal(msg.tool_calls, undefined);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.ok(c.usage.total_tokens > 0);
  });
});

describe('skillpet: the event sequence on /loop/skillpet/clients follows specs/002 §3.9', () => {
  test('tool cards started and finished, progress as status, round_start 2 and 3, done last', async () => {
    const { events } = await streamSSE(loopURL('skillpet', 'clients', '/stream'), { projectId: 'loop-clients', message: PROMPT });
    assert.deepEqual(checkSkillpet(events), [], events.map((e) => e.event).join(' '));
    const seq = events.map((e) => e.event).filter((n) => !['token', 'tool_args_heartbeat', 'status'].includes(n));
    assert.deepEqual(seq, ['tool_start', 'tool_start', 'tool_result', 'tool_result', 'round_start', 'tool_start', 'tool_result', 'round_start', 'done']);
    assert.ok(events.some((e) => e.event === 'status' && /^Trigger Long Running Operation Tool \(\d\/2\)$/.test(e.data.message)), 'progress');
    const results = events.filter((e) => e.event === 'tool_result').map((e) => [e.data.name, e.data.status]);
    assert.deepEqual(results.sort(), [['ev_trigger-long-running-operation', 'completed'], ['evh_get-resource-reference', 'error'], ['fs_read_text_file', 'completed']]);
    assert.deepEqual(events.filter((e) => e.event === 'round_start').map((e) => e.data.round), [2, 3]);
  });

  test('the checker refuses what §3.9 forbids', () => {
    const e = (event, data) => ({ event, data, raw: JSON.stringify(data) });
    const start = e('tool_start', { id: 'c1', name: 't', label: 'T', args: {} });
    const result = e('tool_result', { id: 'c1', name: 't', label: 'T', mode: 'auto', status: 'completed', message: 'ok' });
    assert.deepEqual(checkSkillpet([start, result, e('round_start', { round: 2 }), e('done', { conversationId: 'c' })]), []);
    for (const [why, events] of [
      ['a card that never finishes', [start, e('done', { conversationId: 'c' })]],
      ['a result without its start', [result, e('done', { conversationId: 'c' })]],
      ['round 3 after round 1', [e('round_start', { round: 3 }), e('done', { conversationId: 'c' })]],
      ['no done', [start, result]],
      ['an event after done', [e('done', { conversationId: 'c' }), e('token', { content: 'x' })]],
      ['thinking_done without thinking', [e('thinking_done', {}), e('done', { conversationId: 'c' })]],
      ['thinking after the reply', [e('token', { content: 'a' }), e('thinking', { content: 'b' }), e('done', { conversationId: 'c' })]],
      ['a bad status', [start, { ...result, data: { ...result.data, status: 'ok' } }, e('done', { conversationId: 'c' })]],
      ['ask_user with a tool_start', [e('tool_start', { id: 'a', name: 'ask_user', label: 'Ask' }), e('done', { conversationId: 'c' })]],
    ]) {
      assert.notDeepEqual(checkSkillpet(events), [], why);
    }
  });
});
