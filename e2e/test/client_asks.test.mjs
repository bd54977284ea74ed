// Clients get only what they asked for (CONTRACT §7, issue 9), seen with the
// `openai` npm SDK and the other request formats:
// - "n" other than 1 is refused with a 400 naming n (code unsupported_n)
//   before anything goes upstream: create({stream: true}), create({stream:
//   false}) and the .stream() helper throw BadRequestError; jsonseq and
//   gymbro clients (fetch) get the same 400; n: 1 is served. The other
//   request formats (aisdk, responses, anthropic, skillpet) have no n, and
//   one put in their body never reaches the upstream.
// - the usage chunk (choices: []) only for a client that sent
//   stream_options.include_usage: true, while the upstream is always asked.
//   A client that did not ask runs the common unguarded loop over
//   chunk.choices[0].delta, which would throw on a usage chunk.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI, { APIError, BadRequestError } from 'openai';

import { BASE, CHUNKS, url } from './expected.mjs';
import { EXPECTED, PROVIDER_NAMES } from './providers.mjs';

const MOCKS_BASE = process.env.LLMSTREAM_E2E_MOCKS ?? 'http://127.0.0.1:18100';
/** The recorded mock (e2e/Caddyfile prov_asks): DashScope's stream. */
const RECORDED = `${MOCKS_BASE}/m/prov_asks/13/llm_mock/requests`;
const asks = EXPECTED.dashscope_qwen;

const client = (protocol, name, chunk) =>
  new OpenAI({ baseURL: `${BASE}/${protocol}/text/${name}/${chunk}/v1`, apiKey: 'sk-e2e', maxRetries: 0, timeout: 30_000 });
const params = { model: 'gpt-e2e', messages: [{ role: 'user', content: '三分化训练怎么安排？' }] };

/** upstream is the request bodies the recorded mock received since clear(). */
const upstream = async () => (await fetch(RECORDED)).json();
const clear = async () => assert.equal((await fetch(RECORDED, { method: 'DELETE' })).status, 204, 'the mock records requests');

/** refusesN checks the error of a request with "n": 2. */
const refusesN = (err) => {
  assert.ok(err instanceof BadRequestError, `a BadRequestError, got ${err}`);
  assert.equal(err.status, 400);
  assert.equal(err.code, 'unsupported_n');
  assert.match(err.message, /"n"/, 'the message names n');
  return true;
};

// One file's tests run one after another: the recorded mock is not shared.
describe('n: one answer per request', () => {
  const c = client('openai', 'prov_asks', 13).chat.completions;

  test('create({n: 2, stream: true}) throws BadRequestError, nothing goes upstream', async () => {
    await clear();
    await assert.rejects(c.create({ ...params, n: 2, stream: true }), refusesN);
    assert.deepEqual(await upstream(), []);
  });

  test('create({n: 2, stream: false}) throws BadRequestError, nothing goes upstream', async () => {
    await clear();
    await assert.rejects(c.create({ ...params, n: 2, stream: false }), refusesN);
    assert.deepEqual(await upstream(), []);
  });

  test('the .stream() helper with n: 3 rejects with BadRequestError', async () => {
    await clear();
    const runner = c.stream({ ...params, n: 3 });
    const errors = [];
    runner.on('error', (e) => errors.push(e));
    await assert.rejects(runner.finalChatCompletion(), refusesN);
    assert.equal(errors.length, 1);
    assert.deepEqual(await upstream(), []);
  });

  for (const protocol of ['jsonseq', 'gymbro']) {
    test(`${protocol}: n: 2 is a 400 naming n`, async () => {
      const res = await fetch(url(protocol, 'text', 'prov_asks', 13), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...params, n: 2 }),
      });
      assert.equal(res.status, 400);
      assert.match(res.headers.get('content-type'), /^application\/json/);
      const body = await res.json();
      assert.equal(body.error.code, 'unsupported_n');
      assert.match(body.error.message, /"n"/);
    });
  }

  test('n: 1 is served, streamed and not', async () => {
    await clear();
    let text = '';
    for await (const chunk of await c.create({ ...params, n: 1, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, asks.answer);
    const whole = await c.create({ ...params, n: 1, stream: false });
    assert.equal(whole.choices.length, 1);
    assert.equal(whole.choices[0].message.content, asks.answer);
    assert.equal((await upstream()).length, 2);
  });

  test('the other request formats have no n: one in their body never reaches the upstream', async () => {
    await clear();
    const post = (path, body) =>
      fetch(`${BASE}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      });
    const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
    assert.equal(await post('/aisdk/text/prov_asks/13', { id: 'c', trigger: 'submit-message', messages: [user], n: 2 }), 200);
    assert.equal(await post('/responses/text/prov_asks/13/v1/responses', { model: 'gpt-e2e', input: 'hi', n: 2 }), 200);
    assert.equal(await post('/anthropic/text/prov_asks/13/v1/messages', { model: 'claude-e2e', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], n: 2 }), 200);
    assert.equal(await post('/skillpet/text/prov_asks/13', { projectId: 'p', message: 'hi', n: 2 }), 200);
    const bodies = await upstream();
    assert.equal(bodies.length, 4);
    for (const b of bodies) assert.equal(b.n, undefined, `n went upstream: ${JSON.stringify(b).slice(0, 200)}`);
  });
});

describe('include_usage: the usage chunk only for a client that asked', () => {
  const c = client('openai', 'prov_asks', 13).chat.completions;

  test('not asked: no usage chunk, while the upstream was asked', async () => {
    await clear();
    const chunks = [];
    for await (const chunk of await c.create({ ...params, stream: true })) chunks.push(chunk);
    assert.ok(chunks.length > 2);
    for (const chunk of chunks) {
      assert.equal(chunk.choices.length, 1, `a chunk without its choice: ${JSON.stringify(chunk)}`);
      assert.equal(chunk.usage, undefined);
    }
    const [body] = await upstream();
    assert.deepEqual(body.stream_options, { include_usage: true }, 'llmstream always asks the upstream, for its logs and metrics');
  });

  test('asked: one usage chunk, last, with no choices and the upstream usage', async () => {
    const chunks = [];
    for await (const chunk of await c.create({ ...params, stream: true, stream_options: { include_usage: true } })) chunks.push(chunk);
    const withUsage = chunks.filter((ch) => ch.usage);
    assert.equal(withUsage.length, 1);
    assert.equal(chunks.at(-1), withUsage[0], 'the usage chunk is the last');
    assert.deepEqual(withUsage[0].choices, []);
    assert.deepEqual(withUsage[0].usage, asks.usage);
  });

  test('asked with include_usage: false is not asking', async () => {
    const chunks = [];
    for await (const chunk of await c.create({ ...params, stream: true, stream_options: { include_usage: false } })) chunks.push(chunk);
    assert.deepEqual(chunks.filter((ch) => ch.usage || ch.choices.length !== 1), []);
  });

  test('the .stream() helper without include_usage: no usage, the whole answer', async () => {
    const completion = await c.stream(params).finalChatCompletion();
    assert.equal(completion.usage, undefined);
    assert.equal(completion.choices[0].message.content, asks.answer);
  });

  // Every recorded provider stream, some of which send usage in a chunk of
  // its own (DashScope, xAI, Azure, vLLM…), read by the loop most client
  // code runs: chunk.choices[0].delta, unguarded. It must not throw.
  for (const name of PROVIDER_NAMES) {
    const want = EXPECTED[name];
    for (const chunk of CHUNKS) {
      test(`unguarded chunk.choices[0].delta: ${name}/${chunk}`, async () => {
        const stream = await client('openai', `prov_${name}`, chunk).chat.completions.create({ ...params, stream: true });
        let content = '';
        const loop = async () => {
          for await (const ch of stream) content += ch.choices[0].delta.content ?? '';
        };
        if (want.error) {
          await assert.rejects(loop(), (err) => err instanceof APIError, 'the upstream error, not a TypeError');
        } else {
          await loop();
        }
        assert.equal(content, want.answer);
      });
    }
  }
});
