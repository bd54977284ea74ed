// The OpenAI Responses API (request_format and protocol responses),
// consumed with the official `openai` npm SDK: responses.create({stream:
// true}) event by event, the responses.stream() helper's finalResponse(),
// and create({stream: false}); a broken upstream, and the requests the
// route refuses.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI, { APIError, BadRequestError } from 'openai';

import { BASE, CHUNKS, CUT_CHUNKS, CUTS, MOCKS, MOCK_MODEL } from './expected.mjs';
import { matchesPartial, partialAnswer } from './expected_cut.mjs';
import { assertCompacted, assertEvent, assertResponse } from './openresponses.mjs';

const client = (format, mock, chunk) =>
  new OpenAI({ baseURL: `${BASE}/responses/${format}/${mock}/${chunk}/v1`, apiKey: 'sk-e2e', maxRetries: 0, timeout: 30_000 });

const params = {
  model: 'gpt-e2e',
  instructions: 'Be brief.',
  input: [
    { role: 'developer', content: 'Answer in the format you were told.' },
    { role: 'user', content: [{ type: 'input_text', text: '三分化训练怎么安排？' }] },
  ],
  // A hosted tool, as Codex sends web_search on every request: left out
  // of the upstream request, not refused.
  tools: [{ type: 'web_search' }],
};

/**
 * expected is what a Responses client must assemble from a mock: the
 * answer as output text, the reasoning parts (raw reasoning as
 * reasoning_text, phases as summary_text) whose texts, joined, are what
 * the openai protocol sends as reasoning_content, and the function calls.
 */
function expected(want) {
  return { answer: want.answer ?? '', reasoning: want.reasoningText ?? '', toolCalls: want.toolCalls };
}

/** outputOf reads a Response's output items as a client uses them. */
function outputOf(output) {
  const got = { answer: '', reasoningParts: [], summaries: [], calls: [], types: [] };
  for (const item of output) {
    got.types.push(item.type);
    assert.equal(item.status, 'completed', `${item.type} item completed`);
    switch (item.type) {
      case 'message':
        assert.equal(item.role, 'assistant');
        assert.match(item.id, /^msg_/);
        for (const part of item.content) {
          assert.equal(part.type, 'output_text');
          got.answer += part.text;
        }
        break;
      case 'reasoning':
        assert.match(item.id, /^rs_/);
        for (const s of item.summary) {
          assert.equal(s.type, 'summary_text');
          got.reasoningParts.push(s.text);
          got.summaries.push(s.text);
        }
        for (const c of item.content ?? []) {
          assert.equal(c.type, 'reasoning_text');
          got.reasoningParts.push(c.text);
        }
        break;
      case 'function_call':
        assert.match(item.id, /^fc_/);
        assert.match(item.call_id, /\S/);
        got.calls.push({ name: item.name, input: JSON.parse(item.arguments), call_id: item.call_id });
        break;
      default:
        assert.fail(`unexpected output item ${item.type}`);
    }
  }
  assert.equal(new Set(got.calls.map((c) => c.call_id)).size, got.calls.length, 'call ids are unique');
  got.calls = got.calls.map(({ name, input }) => ({ name, input }));
  return got;
}

/** checkResponse checks a completed Response against the mock's reply. */
function checkResponse(response, want) {
  const exp = expected(want);
  assertResponse(response);
  assert.equal(response.object, 'response');
  assert.match(response.id, /^resp_/);
  assert.equal(response.status, 'completed');
  assert.equal(response.model, MOCK_MODEL);
  assert.equal(response.error, null);
  const got = outputOf(response.output);
  assert.equal(got.answer, exp.answer, 'the output text is the answer, exactly');
  // The SDK adds output_text to the Responses it returns (not to the
  // events' raw responses).
  if ('output_text' in response) assert.equal(response.output_text, exp.answer, 'the SDK output_text is the answer');
  assert.ok(!got.answer.includes('<think>'), 'no reasoning in the answer');
  assert.equal(got.reasoningParts.join('\n\n'), exp.reasoning, 'the reasoning parts');
  for (const s of got.summaries) assert.match(s, /^\*\*.+\*\*\n\n/s, 'a summary part is a titled phase');
  assert.deepEqual(got.calls, exp.toolCalls);
  const u = response.usage;
  assert.ok(u.input_tokens > 0 && u.output_tokens > 0, `usage ${JSON.stringify(u)}`);
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
  assert.equal(u.input_tokens_details.cached_tokens, 0);
  assert.equal(u.output_tokens_details.reasoning_tokens, 0);
  // The request's parameters come back (the hosted web_search tool, which
  // no chat upstream runs, is not among the tools offered), and the
  // response is stored: the client sent a key, so it has a scope.
  assert.equal(response.instructions, 'Be brief.');
  assert.deepEqual(response.tools, []);
  assert.equal(response.store, true);
  return got;
}

const cases = [];
for (const [mock, want] of Object.entries(MOCKS)) {
  for (const chunk of CHUNKS) cases.push({ mock, want, chunk, format: want.format });
  cases.push({ mock, want, chunk: 13, format: 'auto' });
}

describe('responses: create({stream: true})', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const stream = await client(format, mock, chunk).responses.create({ ...params, stream: true });
      const exp = expected(want);
      let answer = '';
      // The reasoning parts, by item and part, in the order they opened.
      const parts = new Map();
      let seq = 0;
      const types = [];
      let completed;
      for await (const event of stream) {
        types.push(event.type);
        assertEvent(event);
        assert.equal(event.sequence_number, seq++, 'sequence numbers count from 0');
        switch (event.type) {
          case 'response.output_text.delta':
            answer += event.delta;
            break;
          case 'response.reasoning_text.delta':
          case 'response.reasoning_summary_text.delta': {
            const key = `${event.output_index}/${event.type}/${event.content_index ?? event.summary_index}`;
            parts.set(key, (parts.get(key) ?? '') + event.delta);
            break;
          }
          case 'response.completed':
            completed = event.response;
            break;
        }
      }
      assert.equal(types[0], 'response.created');
      assert.equal(types[1], 'response.in_progress');
      assert.equal(types.at(-1), 'response.completed');
      assert.equal(answer, exp.answer, 'the output_text deltas are the answer, exactly');
      assert.equal([...parts.values()].join('\n\n'), exp.reasoning, 'the reasoning deltas, part by part');
      checkResponse(completed, want);
    });
  }
});

describe('responses: responses.stream() helper', () => {
  for (const { mock, want, chunk, format } of cases.filter((c) => c.format !== 'auto')) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const runner = client(format, mock, chunk).responses.stream(params);
      let deltas = '';
      let lastSnapshot = '';
      const argsDone = [];
      runner.on('response.output_text.delta', (e) => {
        deltas += e.delta;
        lastSnapshot = e.snapshot;
      });
      runner.on('response.function_call_arguments.done', (e) => argsDone.push({ name: e.name, input: JSON.parse(e.arguments) }));
      const response = await runner.finalResponse();
      const exp = expected(want);
      assert.equal(deltas, exp.answer);
      assert.equal(lastSnapshot, exp.answer, "the helper's snapshot is the whole text (one message per reply)");
      assert.deepEqual(argsDone, exp.toolCalls, 'the helper saw each call complete');
      checkResponse(response, want);
      assert.equal(response.output_text, exp.answer, 'the helper adds output_text');
    });
  }
});

describe('responses: create({stream: false})', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const { data: response, response: raw } = await client(format, mock, chunk)
        .responses.create({ ...params, stream: false })
        .withResponse();
      assert.equal(raw.status, 200);
      assert.match(raw.headers.get('content-type'), /^application\/json/);
      checkResponse(response, want);
      assert.equal(response.output_text, expected(want).answer, 'the SDK adds output_text');
    });
  }
});

describe('responses: a second turn', () => {
  test('function_call and function_call_output go back as tool calls and results', async () => {
    const c = client('text', 'native_tools', 13);
    const first = await c.responses.create({ ...params, stream: false });
    const calls = first.output.filter((o) => o.type === 'function_call');
    assert.ok(calls.length > 0);
    // The client replays the output and answers the calls: the next
    // request must be accepted as it is.
    const next = await c.responses.create({
      ...params,
      stream: false,
      input: [...params.input, ...first.output, ...calls.map((call) => ({ type: 'function_call_output', call_id: call.call_id, output: 'no results' }))],
    });
    assert.equal(next.status, 'completed');
  });
});

describe('responses: truncated upstream', () => {
  for (const cut of Object.keys(CUTS)) {
    const format = MOCKS[CUTS[cut].full].format;
    for (const chunk of CUT_CHUNKS) {
      test(`create({stream: true}) ${format}/${cut}/${chunk} ends in response.failed and throws APIError after the text so far`, async () => {
        const stream = await client(format, cut, chunk).responses.create({ ...params, stream: true });
        let answer = '';
        let failed;
        await assert.rejects(
          (async () => {
            for await (const e of stream) {
              assertEvent(e);
              if (e.type === 'response.output_text.delta') answer += e.delta;
              if (e.type === 'response.failed') failed = e.response;
            }
          })(),
          (err) => {
            assert.ok(err instanceof APIError, `an APIError, got ${err}`);
            assert.match(err.message, /upstream: the connection broke off mid-reply/);
            assert.equal(err.code, 'upstream_error');
            return true;
          },
        );
        assert.equal(failed?.status, 'failed', 'response.failed came first');
        assert.equal(failed.error.code, 'upstream_error');
        const want = partialAnswer(cut, chunk);
        assert.ok(want.length > 0);
        assert.ok(matchesPartial(answer, want), `answer up to the cut: got ${JSON.stringify(answer)}, want ${JSON.stringify(want)}`);
      });

      test(`.stream() ${format}/${cut}/${chunk}: finalResponse rejects`, async () => {
        const runner = client(format, cut, chunk).responses.stream(params);
        const errors = [];
        runner.on('error', (e) => errors.push(e));
        await assert.rejects(runner.finalResponse(), APIError);
        assert.equal(errors.length, 1);
      });
    }
  }

  test('create({stream: false}) on a broken upstream throws APIError with a 5xx', async () => {
    await assert.rejects(client('text', 'text_cut', 13).responses.create({ ...params, stream: false }), (err) => {
      assert.ok(err instanceof APIError, `an APIError, got ${err}`);
      assert.equal(err.status, 502);
      assert.equal(err.code, 'upstream_error');
      assert.match(err.message, /upstream: the connection broke off mid-reply/);
      return true;
    });
  });
});

describe('responses: stored responses and compaction (CONTRACT §14)', () => {
  test('previous_response_id chains, retrieve and delete', async () => {
    const c = client('text', 'text', 13);
    const first = await c.responses.create({ model: 'gpt-e2e', input: 'Remember: cobalt.' });
    assertResponse(first);
    assert.equal(first.store, true);
    const second = await c.responses.create({ model: 'gpt-e2e', previous_response_id: first.id, input: 'What was it?' });
    assert.equal(second.previous_response_id, first.id);
    const stream = await c.responses.create({ model: 'gpt-e2e', previous_response_id: second.id, input: 'Again?', stream: true });
    for await (const e of stream) assertEvent(e);
    const got = await c.responses.retrieve(first.id);
    assertResponse(got);
    assert.equal(got.id, first.id);
    assert.equal(got.output_text, first.output_text);
    await c.responses.delete(first.id);
    await assert.rejects(c.responses.retrieve(first.id), (err) => err instanceof APIError && err.status === 404);
    // Another key (scope) sees none of them.
    const other = new OpenAI({ baseURL: `${BASE}/responses/text/text/13/v1`, apiKey: 'sk-other', maxRetries: 0 });
    await assert.rejects(other.responses.retrieve(second.id), (err) => err.status === 404);
  });

  test('compact, then continue from the compaction item', async () => {
    const c = client('text', 'text', 13);
    const compacted = await c.responses.compact({
      model: 'gpt-e2e',
      input: [{ role: 'user', content: 'We launch on Tuesday.' }, { role: 'assistant', content: 'Noted.' }],
    });
    assertCompacted(compacted);
    assert.equal(compacted.output.length, 1);
    assert.equal(compacted.output[0].type, 'compaction');
    const next = await c.responses.create({ model: 'gpt-e2e', input: [...compacted.output, { role: 'user', content: 'When?' }] });
    assert.equal(next.status, 'completed');
    const tampered = { ...compacted.output[0], encrypted_content: compacted.output[0].encrypted_content.slice(0, -4) + 'AAAA' };
    await assert.rejects(c.responses.create({ model: 'gpt-e2e', input: [tampered] }), (err) => {
      assert.ok(err instanceof BadRequestError);
      assert.equal(err.code, 'invalid_encrypted_content');
      return true;
    });
  });
});

describe('responses: refused requests', () => {
  test('previous_response_id names nothing llmstream stored: 400, nothing upstream', async () => {
    await assert.rejects(client('text', 'text', 13).responses.create({ ...params, previous_response_id: 'resp_123' }), (err) => {
      assert.ok(err instanceof BadRequestError, `a BadRequestError, got ${err}`);
      assert.equal(err.code, 'previous_response_not_found');
      assert.equal(err.param, 'previous_response_id');
      assert.match(err.message, /resp_123/);
      return true;
    });
  });

  test('a tool_choice forcing a hosted tool is refused', async () => {
    await assert.rejects(client('text', 'text', 13).responses.create({ ...params, tool_choice: { type: 'web_search_preview' } }), (err) => {
      assert.ok(err instanceof BadRequestError);
      assert.equal(err.param, 'tool_choice');
      return true;
    });
  });
});
