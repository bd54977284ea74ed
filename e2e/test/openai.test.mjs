// Normalised OpenAI chat completions (protocol openai), consumed with the
// official `openai` npm SDK: create({stream: true}) chunk by chunk, the
// .stream() helper's finalChatCompletion(), and create({stream: false}).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI, { APIError } from 'openai';

import { BASE, CHUNKS, CUT_CHUNKS, CUTS, MOCKS, MOCK_MODEL, RAW_MOCKS } from './expected.mjs';
import { matchesPartial, partialAnswer } from './expected_cut.mjs';

const client = (format, mock, chunk) =>
  new OpenAI({ baseURL: `${BASE}/openai/${format}/${mock}/${chunk}/v1`, apiKey: 'sk-e2e', maxRetries: 0, timeout: 30_000 });

const params = {
  model: 'gpt-e2e',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: '三分化训练怎么安排？' },
  ],
};

/** calls turns message tool_calls into {name, input} with checked ids. */
function calls(toolCalls) {
  const list = toolCalls ?? [];
  for (const c of list) {
    assert.equal(c.type, 'function');
    assert.match(c.id, /\S/);
  }
  assert.equal(new Set(list.map((c) => c.id)).size, list.length, 'tool call ids are unique');
  return list.map((c) => ({ name: c.function.name, input: JSON.parse(c.function.arguments) }));
}

/** read iterates a create({stream: true}) and assembles what a client shows. */
async function read(stream) {
  const got = { content: '', reasoning: '', tools: [], finish: null, usage: null, chunks: 0, ids: new Set(), models: new Set() };
  for await (const chunk of stream) {
    got.chunks++;
    got.ids.add(chunk.id);
    got.models.add(chunk.model);
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) got.usage = chunk.usage;
    for (const choice of chunk.choices) {
      assert.equal(choice.index, 0);
      const d = choice.delta;
      if (d.content) got.content += d.content;
      // reasoning_content is not in the SDK's types: read the raw delta.
      if (d.reasoning_content) got.reasoning += d.reasoning_content;
      for (const tc of d.tool_calls ?? []) {
        const t = (got.tools[tc.index] ??= { id: undefined, type: undefined, function: { name: '', arguments: '' } });
        if (tc.id) {
          assert.equal(t.id, undefined, 'a tool call id is sent once');
          t.id = tc.id;
        }
        if (tc.type) t.type = tc.type;
        if (tc.function?.name) t.function.name += tc.function.name;
        if (tc.function?.arguments) t.function.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) {
        assert.equal(got.finish, null, 'one finish_reason');
        got.finish = choice.finish_reason;
      }
    }
  }
  return got;
}

function checkUsage(usage) {
  assert.ok(usage, 'usage is reported');
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
}

const cases = [];
for (const [mock, want] of Object.entries(MOCKS)) {
  for (const chunk of CHUNKS) cases.push({ mock, want, chunk, format: want.format });
  cases.push({ mock, want, chunk: 13, format: 'auto' });
}

describe('openai: chat.completions.create({stream: true})', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const stream = await client(format, mock, chunk).chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
      const got = await read(stream);
      assert.equal(got.content, want.answer ?? '', 'content is the answer, exactly');
      assert.equal(got.reasoning, want.reasoningText ?? '', 'reasoning_content is the reasoning');
      assert.deepEqual(calls(got.tools), want.toolCalls);
      assert.equal(got.finish, want.finish);
      checkUsage(got.usage);
      assert.equal(got.ids.size, 1, 'one completion id');
      assert.deepEqual([...got.models], [MOCK_MODEL], 'the upstream model');
      assert.ok(got.chunks > 3);
    });
  }
});

describe('openai: chat.completions.stream() helper', () => {
  for (const { mock, want, chunk, format } of cases.filter((c) => c.format !== 'auto')) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const runner = client(format, mock, chunk).chat.completions.stream({ ...params, stream_options: { include_usage: true } });
      let deltas = '';
      const argsDone = [];
      runner.on('content.delta', ({ delta }) => (deltas += delta));
      runner.on('tool_calls.function.arguments.done', (e) => argsDone.push({ name: e.name, input: JSON.parse(e.arguments) }));
      const completion = await runner.finalChatCompletion();
      const [choice] = completion.choices;
      assert.equal(choice.message.role, 'assistant');
      assert.equal(choice.message.content ?? null, want.answer === null ? null : want.answer, 'content is the answer, exactly');
      assert.equal(deltas, want.answer ?? '');
      assert.deepEqual(calls(choice.message.tool_calls), want.toolCalls);
      assert.deepEqual(argsDone, want.toolCalls, 'the helper saw each call complete');
      assert.equal(choice.finish_reason, want.finish);
      assert.equal(completion.model, MOCK_MODEL);
      checkUsage(completion.usage);
    });
  }
});

describe('openai: chat.completions.create({stream: false})', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const { data: completion, response } = await client(format, mock, chunk)
        .chat.completions.create({ ...params, stream: false })
        .withResponse();
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type'), /^application\/json/);
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.model, MOCK_MODEL);
      assert.equal(completion.choices.length, 1);
      const [choice] = completion.choices;
      assert.equal(choice.message.role, 'assistant');
      assert.equal(choice.message.content, want.answer, 'content is the answer, exactly');
      assert.equal(choice.message.reasoning_content, want.reasoningText, 'reasoning_content is the reasoning');
      assert.deepEqual(calls(choice.message.tool_calls), want.toolCalls);
      assert.equal(choice.finish_reason, want.finish);
      checkUsage(completion.usage);
    });
  }
});

describe('openai: truncated upstream', () => {
  for (const cut of Object.keys(CUTS)) {
    const format = MOCKS[CUTS[cut].full].format;
    for (const chunk of CUT_CHUNKS) {
      test(`create({stream: true}) ${format}/${cut}/${chunk} throws APIError after the text so far`, async () => {
        const stream = await client(format, cut, chunk).chat.completions.create({ ...params, stream: true });
        let content = '';
        await assert.rejects(
          (async () => {
            for await (const c of stream) content += c.choices[0]?.delta.content ?? '';
          })(),
          (err) => {
            assert.ok(err instanceof APIError, `an APIError, got ${err}`);
            assert.match(err.message, /upstream: the connection broke off mid-reply/);
            assert.equal(err.code, 'upstream_error');
            return true;
          },
        );
        const want = partialAnswer(cut, chunk);
        assert.ok(want.length > 0);
        assert.ok(matchesPartial(content, want), `content up to the cut: got ${JSON.stringify(content)}, want ${JSON.stringify(want)}`);
      });

      test(`.stream() ${format}/${cut}/${chunk}: finalChatCompletion rejects`, async () => {
        const runner = client(format, cut, chunk).chat.completions.stream(params);
        const errors = [];
        runner.on('error', (e) => errors.push(e));
        await assert.rejects(runner.finalChatCompletion(), APIError);
        assert.equal(errors.length, 1);
      });
    }
  }

  // The SDK only turns a non-2xx status into an APIError (openai
  // src/client.ts), so a broken upstream must be a 5xx, not a 200 with an
  // error body.
  test('create({stream: false}) on a broken upstream throws APIError', async () => {
    await assert.rejects(client('text', 'text_cut', 13).chat.completions.create({ ...params, stream: false }), (err) => {
      assert.ok(err instanceof APIError, `an APIError, got ${err}`);
      assert.ok(err.status >= 500, `a 5xx status, got ${err.status}`);
      assert.match(err.message, /upstream: the connection broke off mid-reply/);
      return true;
    });
  });

  test('create({stream: false}) on a broken upstream still names the error in the body', async () => {
    const res = await fetch(`${BASE}/openai/text/text_cut/13/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, stream: false }),
    });
    const body = await res.json();
    assert.deepEqual(Object.keys(body), ['error']);
    assert.equal(body.error.code, 'upstream_error');
    assert.equal(body.error.message, 'upstream: the connection broke off mid-reply');
  });
});

describe('openai: models served raw (think_tags, text_tools)', () => {
  const rawClient = (prefix, format, mock, chunk) =>
    new OpenAI({ baseURL: `${BASE}/${prefix}openai/${format}/${mock}/${chunk}/v1`, apiKey: 'sk-e2e', maxRetries: 0, timeout: 30_000 });
  for (const [mock, want] of Object.entries(RAW_MOCKS)) {
    for (const format of ['text', 'auto']) {
      for (const chunk of CHUNKS) {
        test(`create({stream: true}) ${want.prefix}${format}/${mock}/${chunk}`, async () => {
          const stream = await rawClient(want.prefix, format, mock, chunk).chat.completions.create({
            ...params,
            stream: true,
            stream_options: { include_usage: true },
          });
          const got = await read(stream);
          assert.equal(got.reasoning, want.reasoningText, 'reasoning_content is the reasoning the model wrote');
          assert.equal(got.content, want.answer, 'content is the answer, without the tags');
          assert.deepEqual(calls(got.tools), want.toolCalls);
          assert.equal(got.finish, want.finish);
          assert.deepEqual([...got.models], [want.model]);
          checkUsage(got.usage);
        });
      }
      test(`create({stream: false}) ${want.prefix}${format}/${mock}/13`, async () => {
        const completion = await rawClient(want.prefix, format, mock, 13).chat.completions.create({ ...params, stream: false });
        const [choice] = completion.choices;
        assert.equal(choice.message.content, want.answer);
        assert.equal(choice.message.reasoning_content, want.reasoningText);
        assert.deepEqual(calls(choice.message.tool_calls), want.toolCalls);
        assert.equal(choice.finish_reason, want.finish);
      });
    }
    test(`.stream() helper ${want.prefix}text/${mock}/r`, async () => {
      const runner = rawClient(want.prefix, 'text', mock, 'r').chat.completions.stream(params);
      const argsDone = [];
      runner.on('tool_calls.function.arguments.done', (e) => argsDone.push({ name: e.name, input: JSON.parse(e.arguments) }));
      const completion = await runner.finalChatCompletion();
      const [choice] = completion.choices;
      assert.equal(choice.message.content, want.answer);
      assert.deepEqual(argsDone, want.toolCalls, 'the helper saw each call complete');
      assert.equal(choice.finish_reason, want.finish);
    });
  }
});
