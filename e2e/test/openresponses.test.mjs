// The Open Responses compliance suite, ported: the 17 tests of the
// specification repository's runner (openresponses/openresponses,
// src/lib/compliance-tests.ts with bin/compliance-test.ts, release
// 2026-04-24: HTTP, streaming, WebSocket and compaction), run against a
// route configured as the default Caddyfile's /v1/responses
// (e2e/Caddyfile, /openresponses/v1/responses) in front of a
// deterministic llm_mock.
//
// Why a port: the runner is TypeScript for Bun (Bun's WebSocket sets
// request headers; Node's does not), it is not published on npm, and its
// schemas are zod code generated from the OpenAPI document by kubb at
// build time. This file keeps its tests one for one (same requests, same
// checks: the schema of every Response, streamed event and WebSocket
// frame, then the same semantic validators), validates with ajv against
// the spec's OpenAPI document itself (e2e/testdata/openresponses), and
// uses the `ws` package for WebSocket headers. It prints the runner's
// summary line.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import WebSocket from 'ws';

import { BASE } from './expected.mjs';
import { errorsOf, eventErrors, responseErrors } from './openresponses.mjs';

const BASE_URL = `${BASE}/openresponses/v1`;
const MODEL = 'gpt-4o-mini'; // the runner's default model
const AUTH = { Authorization: 'Bearer openresponses-e2e' };
const results = [];

// The runner's semantic validators.
const hasOutput = (r) => (!r.output || r.output.length === 0 ? ['Response has no output items'] : []);
const hasOutputType = (type) => (r) =>
  r.output?.some((i) => i.type === type) ? [] : [`Expected output item of type "${type}" but none found`];
const completedStatus = (r) =>
  !('status' in r) ? ['Expected a standard response object with a "status" field']
  : r.status !== 'completed' ? [`Expected status "completed" but got "${r.status}"`] : [];
const compactObject = (r) => (r.object !== 'response.compaction' ? [`Expected object "response.compaction" but got "${r.object}"`] : []);
const hasPhase = (phase) => (r) =>
  r.output?.some((i) => i.type === 'message' && i.role === 'assistant' && i.phase === phase)
    ? [] : [`Expected assistant output message with phase "${phase}" but none found`];
const streamingEvents = (_, ctx) => (ctx.streaming && !ctx.events?.length ? ['No streaming events received'] : []);
const streamingSchema = (_, ctx) => (ctx.streaming ? ctx.errors ?? [] : []);

/** post sends body to endpoint and reads the answer (SSE when streaming). */
async function post(endpoint, body, streaming = false) {
  const res = await fetch(`${BASE_URL}${endpoint}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...AUTH },
    body: JSON.stringify(streaming ? { ...body, stream: true } : body),
    signal: AbortSignal.timeout(30_000),
  });
  if (!streaming) {
    const ct = res.headers.get('content-type') ?? '';
    return { res, data: ct.includes('application/json') ? await res.json() : await res.text() };
  }
  // The runner's SSE reading: event and data lines, [DONE] skipped, each
  // event checked against the spec's event union, the last terminal
  // event's response kept.
  const text = await res.text();
  const events = [];
  const errors = [];
  let final = null;
  for (const block of text.split('\n\n')) {
    const data = block.split('\n').find((l) => l.startsWith('data:'))?.slice(5).trim();
    if (!data || data === '[DONE]') continue;
    try {
      const ev = JSON.parse(data);
      events.push(ev);
      for (const e of eventErrors(ev, 'http')) errors.push(`Event validation failed for ${ev.type}: ${e}`);
      if (['response.completed', 'response.failed', 'response.incomplete'].includes(ev.type)) final = ev.response;
    } catch {
      errors.push(`Failed to parse event data: ${data}`);
    }
  }
  return { res, data: final, events, errors };
}

/**
 * session runs response.create steps on one WebSocket, as the runner's
 * makeWebSocketSession: each step sent after the previous turn's terminal
 * event (or error event), every frame checked against the spec.
 */
function session(steps, { validateRequests = true } = {}) {
  return new Promise((resolve, reject) => {
    const turns = steps.map(() => ({ events: [], errors: [], finalResponse: null, errorCode: null, errorEvent: null }));
    let i = 0;
    const ws = new WebSocket(BASE_URL.replace(/^http/, 'ws') + '/responses', { headers: { 'Content-Type': 'application/json', ...AUTH } });
    let timer = null;
    const finish = () => {
      clearTimeout(timer);
      ws.close();
      resolve(turns);
    };
    const sendNext = () => {
      if (i >= steps.length) return finish();
      let body;
      try {
        body = typeof steps[i] === 'function' ? steps[i](turns.slice(0, i)) : steps[i];
      } catch (err) {
        ws.close();
        return reject(err);
      }
      if (validateRequests) {
        const errs = errorsOf('WebSocketResponseCreateEvent', body);
        if (errs.length) {
          ws.close();
          return reject(new Error(`Request ${i + 1}: WebSocket request ${errs.join('; ')}`));
        }
      }
      turns[i].request = body;
      clearTimeout(timer);
      timer = setTimeout(() => {
        turns[i].errors.push('Timed out waiting for terminal WebSocket response event');
        finish();
      }, 30_000);
      ws.send(JSON.stringify(body));
    };
    const complete = () => {
      i++;
      sendNext();
    };
    ws.on('open', sendNext);
    ws.on('error', (err) => reject(new Error(`WebSocket connection failed: ${err.message}`)));
    ws.on('close', () => {
      if (i < steps.length && !turns[i].finalResponse && !turns[i].errorCode) turns[i].errors.push('WebSocket closed before a terminal response event');
      clearTimeout(timer);
      resolve(turns);
    });
    ws.on('message', (raw) => {
      const turn = turns[i];
      if (!turn) return;
      const data = raw.toString();
      if (data === '[DONE]') {
        if (!turn.finalResponse && !turn.errorCode) turn.errors.push('Received [DONE] before a terminal WebSocket event');
        return complete();
      }
      let ev;
      try {
        ev = JSON.parse(data);
      } catch {
        return turn.errors.push(`Failed to parse WebSocket event data: ${data}`);
      }
      turn.events.push(ev);
      for (const e of eventErrors(ev, 'websocket')) turn.errors.push(`Event validation failed for ${ev.type}: ${e}`);
      if (['response.completed', 'response.failed', 'response.incomplete'].includes(ev.type)) {
        turn.finalResponse = ev.response ?? null;
        return complete();
      }
      const code = typeof ev?.error?.code === 'string' ? ev.error.code : null;
      if (ev.type === 'error' || code) {
        turn.errorCode = code;
        turn.errorEvent = ev;
        if (!code) turn.errors.push(`WebSocket error event: ${JSON.stringify(ev)}`);
        complete();
      }
    });
  });
}

const turnErrorCode = (t) => t?.errorCode ?? t?.finalResponse?.error?.code ?? null;
const failedTurn = (t) => Boolean(t?.errorEvent) || Boolean(turnErrorCode(t)) || t?.finalResponse?.status === 'failed';

/** responseResult is the runner's createResponseResult: schema, then validators. */
function responseResult(raw, ctx, validators) {
  const errs = [...(ctx.errors ?? [])];
  const schemaErrs = raw ? responseErrors(raw) : ['(root): Expected object, received null'];
  if (schemaErrs.length) return [...errs, ...schemaErrs];
  return validators.flatMap((v) => v(raw, ctx));
}

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' } },
    required: ['location'],
  },
};
const heart =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAIAAAD8GO2jAAABmklEQVR42tyWAaTyUBzFew/eG4AHz+MBSAHKBiJRGFKwIgQQJKLUIioBIhCAiCAAEizAQIAECaASqFFJq84nudjnaqvuPnxzgP9xfrq5938csPn7PwHTKSoViCIEAYEAMhmoKsU2mUCWEQqB5xEMIp/HaGQG2G6RSuH9HQ7H34rFrtPbdz4jl6PbwmEsl3QA1mt4vcRKk8dz9eg6IpF7tt9fzGY0gCgafFRFo5Blc5vLhf3eCOj1yNhM5GRMVK0aATxPZoz09YXjkQDmczJgquGQAPp9WwCNBgG027YACgUC6HRsAZRKBDAY2AJoNv/ZnwzA6WScznG3p4UAymXGAEkyXrTFAh8fLAGqagQAyGaZpYsi7bHTNPz8MEj//LxuFPo+UBS8vb0KaLXubrRa7aX0RMLCykwmn0z3+XA4WACcTpCkh9MFAZpmuVXo+mO/w+/HZvNgbblcUCxaSo/Hyck80Yu6XXDcvfVZr79cvMZjuN2U9O9vKAqjZrfbIZ0mV4TUi9Xqz6jddNy//7+e3n8Fhf/Llo2kxi8AQyGRoDkmAhAAAAAASUVORK5CYII=';

/** http runs a single-request test, as the runner's runTest. */
const http = (endpoint, body, validators, { streaming = false, schemaName = 'ResponseResource', expected = [200] } = {}) => async () => {
  const { res, data, events, errors } = await post(endpoint, body, streaming);
  if (!expected.includes(res.status)) return [`HTTP ${res.status}: ${JSON.stringify(data)}`];
  if (!schemaName) return [];
  if (schemaName !== 'ResponseResource') {
    const errs = errorsOf(schemaName, data);
    return errs.length ? errs : validators.flatMap((v) => v(data, { streaming }));
  }
  return responseResult(data, { streaming, events, errors }, validators);
};

const wsCtx = (t) => ({ streaming: true, events: t.events, errors: t.errors });

const tests = [
  ['basic-response', 'Basic Text Response', http('/responses', {
    model: MODEL, input: [{ type: 'message', role: 'user', content: 'Say hello in exactly 3 words.' }],
  }, [hasOutput, completedStatus])],
  ['assistant-phase', 'Assistant Message Phase', http('/responses', {
    model: MODEL,
    input: [
      { type: 'message', role: 'assistant', phase: 'commentary', content: 'I should answer with the saved number.' },
      { type: 'message', role: 'assistant', phase: 'final_answer', content: 'The number is four.' },
      { type: 'message', role: 'user', content: 'Repeat only the number.' },
    ],
  }, [hasOutput, completedStatus])],
  ['response-output-phase-schema', 'Response Output Phase Schema', async () => {
    // The runner's local schema fixture: no request is sent.
    const r = {
      id: 'resp_phase_schema', object: 'response', created_at: 1764967971, completed_at: 1764967972, status: 'completed',
      incomplete_details: null, model: MODEL, previous_response_id: null, instructions: null,
      output: [
        { id: 'msg_phase_commentary', type: 'message', status: 'completed', role: 'assistant', phase: 'commentary', content: [{ type: 'output_text', text: 'I am checking the answer.', annotations: [] }] },
        { id: 'msg_phase_final', type: 'message', status: 'completed', role: 'assistant', phase: 'final_answer', content: [{ type: 'output_text', text: 'The answer is four.', annotations: [] }] },
      ],
      error: null, tools: [], tool_choice: 'auto', truncation: 'disabled', parallel_tool_calls: true, text: { format: { type: 'text' } },
      top_p: 1, presence_penalty: 0, frequency_penalty: 0, top_logprobs: 0, temperature: 1, reasoning: { effort: null, summary: null },
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
      max_output_tokens: null, max_tool_calls: null, store: true, background: false, service_tier: 'default', metadata: {},
      safety_identifier: null, prompt_cache_key: null,
    };
    return responseResult(r, {}, [hasOutput, completedStatus, hasPhase('commentary'), hasPhase('final_answer')]);
  }],
  ['streaming-response', 'Streaming Response', http('/responses', {
    model: MODEL, input: [{ type: 'message', role: 'user', content: 'Count from 1 to 5.' }],
  }, [streamingEvents, streamingSchema, completedStatus], { streaming: true })],
  ['websocket-response', 'WebSocket Response', async () => {
    const [t] = await session([{ type: 'response.create', model: MODEL, input: [{ type: 'message', role: 'user', content: 'Count from 1 to 3.' }] }]);
    return responseResult(t.finalResponse, wsCtx(t), [streamingEvents, streamingSchema, completedStatus]);
  }],
  ['websocket-sequential-responses', 'WebSocket Sequential Responses', async () => {
    const turns = await session([
      { type: 'response.create', model: MODEL, store: false, input: 'Reply with exactly: first' },
      { type: 'response.create', model: MODEL, store: false, input: 'Reply with exactly: second' },
    ]);
    return turns.flatMap((t, n) => responseResult(t.finalResponse, wsCtx(t), [streamingEvents, streamingSchema, completedStatus]).map((e) => `Turn ${n + 1}: ${e}`));
  }],
  ['websocket-continuation', 'WebSocket Continuation', async () => {
    const [first, second] = await session([
      { type: 'response.create', model: MODEL, store: false, input: 'Remember the code word: cobalt. Reply with OK.' },
      (prev) => {
        const id = prev[0]?.finalResponse?.id;
        if (!id) throw new Error('First WebSocket turn did not return a response id');
        return { type: 'response.create', model: MODEL, store: false, previous_response_id: id, input: 'What is the code word? Reply with only the code word.' };
      },
    ]);
    const firstErrs = [...first.errors, ...responseErrors(first.finalResponse)];
    if (firstErrs.length || !second) return firstErrs.length ? firstErrs : ['Second WebSocket continuation turn did not run'];
    return responseResult(second.finalResponse, wsCtx(second), [streamingEvents, streamingSchema, completedStatus]);
  }],
  ['websocket-reconnect-store-false-recovery', 'WebSocket Store False Reconnect Recovery', async () => {
    const [first] = await session([{ type: 'response.create', model: MODEL, store: false, input: 'Remember the code word: copper. Reply with OK.' }]);
    const errs = [...first.errors, ...responseErrors(first.finalResponse)];
    const id = first.finalResponse?.id;
    if (errs.length || !id) return errs;
    const recovery = {
      type: 'response.create', model: MODEL, store: false,
      input: [{ type: 'message', role: 'user', content: 'The previous store:false chain could not continue after reconnect. Start a new response and reply with exactly: recovered' }],
    };
    const [reconnect, recovered] = await session([
      { type: 'response.create', model: MODEL, store: false, previous_response_id: id, input: 'Try to continue after reconnect. Reply with exactly: reconnected' },
      recovery,
    ]);
    const out = [...reconnect.errors];
    const code = turnErrorCode(reconnect);
    if (code !== 'previous_response_not_found') out.push(`Expected previous_response_not_found after reconnecting a store:false chain but got ${code ?? 'no error code'}`);
    if (!recovered) out.push('Recovery WebSocket turn did not run after reconnect miss');
    else out.push(...responseResult(recovered.finalResponse, wsCtx(recovered), []));
    return out;
  }],
  ['websocket-previous-response-not-found', 'WebSocket Missing Previous Response', async () => {
    const [t] = await session([{
      type: 'response.create', model: MODEL, store: false, previous_response_id: `resp_openresponses_missing_${Date.now()}`,
      input: 'This should fail because the previous response is missing.',
    }]);
    const code = turnErrorCode(t);
    return [...(code !== 'previous_response_not_found' ? [`Expected previous_response_not_found but got ${code ?? 'no error code'}`] : []), ...t.errors];
  }],
  ['websocket-failed-continuation-evicts-cache', 'WebSocket Failed Continuation Evicts Cache', async () => {
    const idOf = (prev) => {
      const id = prev[0]?.finalResponse?.id;
      if (!id) throw new Error('First WebSocket turn did not return a response id');
      return id;
    };
    const [first, failed, retry] = await session([
      { type: 'response.create', model: MODEL, store: false, input: 'Remember the code word: ember. Reply with OK.' },
      (prev) => ({
        type: 'response.create', model: MODEL, store: false, previous_response_id: idOf(prev),
        input: [{ type: 'function_call_output', call_id: 'call_openresponses_missing', output: 'No matching tool call exists in the previous response.' }],
      }),
      (prev) => ({ type: 'response.create', model: MODEL, store: false, previous_response_id: idOf(prev), input: 'Try to continue after the failed turn. Reply with exactly: stale' }),
    ]);
    const errs = [...first.errors, ...responseErrors(first.finalResponse)];
    if (!failed) errs.push('Failed WebSocket continuation turn did not run');
    else if (!failedTurn(failed)) errs.push(...failed.errors, `Expected second WebSocket continuation turn to fail but got status ${failed.finalResponse?.status ?? 'no terminal response'}`);
    if (!retry) errs.push('Retry WebSocket continuation turn did not run');
    else {
      errs.push(...retry.errors);
      const code = turnErrorCode(retry);
      if (code !== 'previous_response_not_found') errs.push(`Expected previous_response_not_found after failed continuation eviction but got ${code ?? 'no error code'}`);
    }
    return errs;
  }],
  ['websocket-compact-new-chain', 'WebSocket Compact New Chain', async () => {
    const compactRequest = {
      model: MODEL,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Remember the compaction code word: slate.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'OK.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Compress this conversation for later continuation.' }] },
      ],
    };
    const { res, data } = await post('/responses/compact', compactRequest);
    if (!res.ok) return [`HTTP ${res.status} from /responses/compact: ${JSON.stringify(data)}`];
    if (!Array.isArray(data?.output)) return ['Compaction response did not include an output array'];
    const [t] = await session([{
      type: 'response.create', model: MODEL, store: false,
      input: [...data.output, { type: 'message', role: 'user', content: 'Continue from here. Reply with exactly: compacted' }], tools: [],
    }], { validateRequests: false });
    return responseResult(t.finalResponse, wsCtx(t), [streamingEvents, streamingSchema, completedStatus]);
  }],
  ['system-prompt', 'System Prompt', http('/responses', {
    model: MODEL,
    input: [
      { type: 'message', role: 'system', content: 'You are a pirate. Always respond in pirate speak.' },
      { type: 'message', role: 'user', content: 'Say hello.' },
    ],
  }, [hasOutput, completedStatus])],
  ['tool-calling', 'Tool Calling', http('/responses', {
    model: MODEL, input: [{ type: 'message', role: 'user', content: "What's the weather like in San Francisco?" }], tools: [weatherTool],
  }, [hasOutput, hasOutputType('function_call')])],
  ['image-input', 'Image Input', http('/responses', {
    model: MODEL,
    input: [{ type: 'message', role: 'user', content: [
      { type: 'input_text', text: 'What do you see in this image? Answer in one sentence.' },
      { type: 'input_image', image_url: heart },
    ] }],
  }, [hasOutput, completedStatus])],
  ['multi-turn', 'Multi-turn Conversation', http('/responses', {
    model: MODEL,
    input: [
      { type: 'message', role: 'user', content: 'My name is Alice.' },
      { type: 'message', role: 'assistant', content: 'Hello Alice! Nice to meet you. How can I help you today?' },
      { type: 'message', role: 'user', content: 'What is my name?' },
    ],
  }, [hasOutput, completedStatus])],
  ['compact-response', 'Compaction Endpoint', http('/responses/compact', {
    model: MODEL, prompt_cache_key: 'openresponses-compact-test',
    input: [
      { type: 'message', role: 'user', content: 'We agreed to launch on Tuesday and notify support first.' },
      { type: 'message', role: 'assistant', content: 'Understood. The launch is Tuesday, with support notified beforehand.' },
    ],
  }, [hasOutput, compactObject, hasOutputType('compaction')], { schemaName: 'CompactResource' })],
  ['compact-missing-model', 'Compaction Missing Required Model', http('/responses/compact', {
    input: [{ type: 'message', role: 'user', content: 'Compact this conversation.' }],
  }, [], { schemaName: null, expected: [400, 422] })],
];

describe('Open Responses compliance (the specification runner\'s 17 tests)', () => {
  for (const [id, name, run] of tests) {
    test(`${id}: ${name}`, { timeout: 60_000 }, async () => {
      let errors;
      try {
        errors = await run();
      } catch (err) {
        errors = [err.message];
      }
      results.push({ id, errors });
      assert.deepEqual(errors, [], `${id}:\n${errors.join('\n')}`);
    });
  }
  after(() => {
    const failed = results.filter((r) => r.errors.length);
    console.log(`Open Responses compliance: ${results.length - failed.length} of ${results.length} pass` +
      (failed.length ? ` (failed: ${failed.map((r) => r.id).join(', ')})` : ''));
  });
});
