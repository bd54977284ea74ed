// The Anthropic Messages API (request_format and protocol anthropic),
// consumed with the official `@anthropic-ai/sdk`: the messages.stream()
// helper's finalMessage(), messages.create({stream: true}) event by event,
// create({stream: false}), countTokens(), and a broken upstream.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic, { APIError } from '@anthropic-ai/sdk';

import { BASE, CHUNKS, CUT_CHUNKS, CUTS, MOCKS, MOCK_MODEL } from './expected.mjs';
import { matchesPartial, partialAnswer } from './expected_cut.mjs';

const client = (format, mock, chunk) =>
  new Anthropic({ baseURL: `${BASE}/anthropic/${format}/${mock}/${chunk}`, apiKey: 'sk-ant-e2e', maxRetries: 0, timeout: 30_000 });

const params = {
  model: 'claude-e2e',
  max_tokens: 4096,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: '三分化训练怎么安排？' }],
  thinking: { type: 'enabled', budget_tokens: 2048 },
};

/**
 * blocks is the content a client must assemble from a mock, in the order
 * the model wrote it: its reasoning as one thinking block (phases as
 * "**title**\n\ntext", as the openai protocol writes reasoning_content),
 * its answer as one text block, then a tool_use block per call.
 */
function blocks(want, thinking = true) {
  const out = [];
  if (thinking && want.reasoningText) out.push({ type: 'thinking', thinking: want.reasoningText });
  if (want.answer) out.push({ type: 'text', text: want.answer });
  for (const c of want.toolCalls) out.push({ type: 'tool_use', name: c.name, input: c.input });
  return out;
}

const stopReason = (want) => (want.finish === 'tool_calls' ? 'tool_use' : 'end_turn');

/** simplify keeps what blocks() compares, and checks the tool ids. */
function simplify(content) {
  const ids = new Set();
  return content.map((b) => {
    switch (b.type) {
      case 'thinking':
        assert.equal(typeof b.signature, 'string');
        return { type: b.type, thinking: b.thinking };
      case 'text':
        return { type: b.type, text: b.text };
      case 'tool_use':
        assert.match(b.id, /\S/);
        assert.ok(!ids.has(b.id), 'tool_use ids are unique');
        ids.add(b.id);
        return { type: b.type, name: b.name, input: b.input };
    }
    assert.fail(`block type ${b.type}`);
  });
}

function checkUsage(usage) {
  assert.ok(usage.input_tokens > 0, `input_tokens ${usage.input_tokens}`);
  assert.ok(usage.output_tokens > 0, `output_tokens ${usage.output_tokens}`);
}

const cases = [];
for (const [mock, want] of Object.entries(MOCKS)) {
  for (const chunk of CHUNKS) cases.push({ mock, want, chunk, format: want.format });
  cases.push({ mock, want, chunk: 13, format: 'auto' });
}

describe('anthropic: messages.stream() + finalMessage()', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const stream = client(format, mock, chunk).messages.stream(params);
      let text = '';
      let thinking = '';
      const finished = [];
      stream.on('text', (delta) => (text += delta));
      stream.on('thinking', (delta) => (thinking += delta));
      stream.on('contentBlock', (block) => finished.push(block.type));
      const message = await stream.finalMessage();
      assert.deepEqual(simplify(message.content), blocks(want));
      assert.equal(text, want.answer ?? '', 'the text events are the answer, exactly');
      assert.equal(thinking, want.reasoningText ?? '', 'the thinking events are the reasoning');
      assert.deepEqual(finished, message.content.map((b) => b.type), 'every block stopped, in order');
      assert.equal(message.stop_reason, stopReason(want));
      assert.equal(message.stop_sequence, null);
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, MOCK_MODEL, 'the upstream model');
      assert.match(message.id, /^msg_/);
      checkUsage(message.usage);
    });
  }
});

describe('anthropic: messages.create({stream: true})', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const stream = await client(format, mock, chunk).messages.create({ ...params, stream: true });
      const content = [];
      const json = [];
      let open = -1;
      let events = 0;
      let start;
      let delta;
      let stopped = false;
      for await (const ev of stream) {
        events++;
        assert.ok(!stopped, 'nothing after message_stop');
        switch (ev.type) {
          case 'message_start':
            assert.equal(start, undefined, 'one message_start');
            assert.equal(events, 1, 'message_start first');
            start = ev.message;
            break;
          case 'content_block_start':
            assert.equal(open, -1, 'one block open at a time');
            assert.equal(ev.index, content.length, 'contiguous indices');
            open = ev.index;
            content.push(ev.content_block);
            json.push('');
            break;
          case 'content_block_delta': {
            assert.equal(ev.index, open, 'deltas go to the open block');
            const b = content[open];
            switch (ev.delta.type) {
              case 'text_delta':
                assert.equal(b.type, 'text');
                b.text += ev.delta.text;
                break;
              case 'thinking_delta':
                assert.equal(b.type, 'thinking');
                b.thinking += ev.delta.thinking;
                break;
              case 'input_json_delta':
                assert.equal(b.type, 'tool_use');
                json[open] += ev.delta.partial_json;
                break;
              default:
                assert.fail(`delta ${ev.delta.type}`);
            }
            break;
          }
          case 'content_block_stop':
            assert.equal(ev.index, open);
            if (content[open].type === 'tool_use') content[open].input = JSON.parse(json[open]);
            open = -1;
            break;
          case 'message_delta':
            assert.equal(open, -1, 'every block stopped before message_delta');
            delta = ev;
            break;
          case 'message_stop':
            stopped = true;
            break;
          default:
            assert.fail(`event ${ev.type}`);
        }
      }
      assert.ok(stopped, 'message_stop ends the stream');
      assert.equal(start.model, MOCK_MODEL);
      assert.ok(start.usage.input_tokens > 0, 'message_start estimates the input tokens');
      assert.deepEqual(simplify(content), blocks(want));
      assert.equal(delta.delta.stop_reason, stopReason(want));
      checkUsage(delta.usage);
    });
  }
});

describe('anthropic: messages.create({stream: false})', () => {
  for (const { mock, want, chunk, format } of cases) {
    test(`${format}/${mock}/${chunk}`, async () => {
      const { data: message, response } = await client(format, mock, chunk).messages.create(params).withResponse();
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type'), /^application\/json/);
      assert.equal(message.type, 'message');
      assert.deepEqual(simplify(message.content), blocks(want));
      assert.equal(message.stop_reason, stopReason(want));
      assert.equal(message.model, MOCK_MODEL);
      checkUsage(message.usage);
    });
  }
});

describe('anthropic: thinking off', () => {
  for (const mock of ['thinkingml', 'text', 'aiplan_tools']) {
    test(`${mock}: no thinking blocks, the answer first`, async () => {
      const want = MOCKS[mock];
      const { thinking, ...plain } = params;
      const message = await client(want.format, mock, 13).messages.stream(plain).finalMessage();
      assert.deepEqual(simplify(message.content), blocks(want, false));
      if (want.answer) assert.equal(message.content[0].text, want.answer);
    });
  }
});

describe('anthropic: countTokens and refusals', () => {
  test('countTokens estimates, and grows with the input', async () => {
    const c = client('text', 'text', 13);
    const short = await c.messages.countTokens({ model: params.model, messages: params.messages });
    const long = await c.messages.countTokens({
      model: params.model,
      system: 'x '.repeat(500),
      messages: params.messages,
      tools: [{ name: 'lookup', description: 'Look it up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
    });
    assert.ok(short.input_tokens > 0);
    assert.ok(long.input_tokens > short.input_tokens + 400, `${short.input_tokens} then ${long.input_tokens}`);
  });

  test('a server tool is a 400 invalid_request_error', async () => {
    await assert.rejects(
      client('text', 'text', 13).messages.create({ ...params, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
      (err) => {
        assert.ok(err instanceof Anthropic.BadRequestError, `a BadRequestError, got ${err}`);
        assert.equal(err.type, 'invalid_request_error');
        assert.equal(err.errorCode, 'unsupported');
        assert.match(err.apiMessage, /web_search_20250305/);
        return true;
      },
    );
  });
});

describe('anthropic: truncated upstream', () => {
  for (const cut of Object.keys(CUTS)) {
    const format = MOCKS[CUTS[cut].full].format;
    for (const chunk of CUT_CHUNKS) {
      test(`create({stream: true}) ${format}/${cut}/${chunk} throws APIError after the text so far`, async () => {
        const stream = await client(format, cut, chunk).messages.create({ ...params, stream: true });
        let text = '';
        await assert.rejects(
          (async () => {
            for await (const ev of stream) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
          })(),
          (err) => {
            assert.ok(err instanceof APIError, `an APIError, got ${err}`);
            assert.equal(err.type, 'api_error');
            assert.equal(err.errorCode, 'upstream_error');
            assert.match(err.apiMessage, /upstream: the connection broke off mid-reply/);
            return true;
          },
        );
        const want = partialAnswer(cut, chunk);
        assert.ok(matchesPartial(text, want), `text up to the cut: got ${JSON.stringify(text)}, want ${JSON.stringify(want)}`);
      });

      test(`.stream() ${format}/${cut}/${chunk}: finalMessage rejects`, async () => {
        const stream = client(format, cut, chunk).messages.stream(params);
        const errors = [];
        stream.on('error', (e) => errors.push(e));
        await assert.rejects(stream.finalMessage(), APIError);
        assert.equal(errors.length, 1);
      });
    }
  }

  test('create({stream: false}) on a broken upstream throws a 502 APIError', async () => {
    await assert.rejects(client('text', 'text_cut', 13).messages.create(params), (err) => {
      assert.ok(err instanceof Anthropic.InternalServerError, `a 5xx APIError, got ${err}`);
      assert.equal(err.status, 502);
      assert.equal(err.type, 'api_error');
      assert.match(err.apiMessage, /upstream: the connection broke off mid-reply/);
      return true;
    });
  });
});
