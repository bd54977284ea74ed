// The playground's page code that needs no browser
// (caddymodule/playground/assets): the Markdown renderer lets no HTML of a
// reply through, gymbro's ThinkingML splitter shows the same reply
// whatever the deltas were, and agui's events become the same view as the
// other protocols'.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { renderMarkdown } from '../../caddymodule/playground/assets/markdown.js';
import { Reply, ThinkingML, buildRequest, Conversation, newReader } from '../../caddymodule/playground/assets/protocols.js';

describe('markdown.js', () => {
  test('renders what models write', () => {
    const html = renderMarkdown('# T\n\n- **a** and *b*\n- `x<y`\n\n1. one\n2. two\n\n```js\nif (a < b) {}\n```\n\n| h | i |\n|---|---|\n| 1 | 2 |\n\n> q\n\n[l](https://example.com/?a=1&b=2)');
    for (const want of ['<h1>T</h1>', '<li><strong>a</strong> and <em>b</em></li>', '<code>x&lt;y</code>', '<ol><li>one</li><li>two</li></ol>',
      '<pre><code class="language-js">if (a &lt; b) {}</code></pre>', '<th>h</th>', '<td>2</td>', '<blockquote><p>q</p></blockquote>',
      '<a href="https://example.com/?a=1&amp;b=2" rel="noopener noreferrer nofollow" target="_blank">l</a>']) {
      assert.ok(html.includes(want), `${want} in ${html}`);
    }
  });

  test('no tag, attribute or script of the reply reaches the HTML', () => {
    const attacks = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '[x](javascript:alert(1))',
      '[x](JaVaScRiPt:alert(1))',
      '[x](\u0001javascript:alert(1))',
      '[x](java\tscript:alert(1))',
      '[x](data:text/html,<script>alert(1)</script>)',
      '[x](vbscript:msgbox)',
      '![x](javascript:alert(1))',
      '[x](https://e.com/"onmouseover="alert(1))',
      '<a href="javascript:alert(1)">x</a>',
      '**<b>bold</b>**',
      '| <i>x</i> |\n|---|\n| y |',
      '```\n</code></pre><script>alert(1)</script>\n```',
      '<!-- a --><script>x</script>',
      '<!-- unclosed <script>',
    ];
    for (const a of attacks) {
      const html = renderMarkdown(a);
      const tags = [...html.matchAll(/<\/?([a-z0-9]+)([^>]*)>/gi)];
      for (const [, name, attrs] of tags) {
        assert.ok(['p', 'br', 'strong', 'em', 'code', 'pre', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'del'].includes(name), `tag <${name}> from ${a}: ${html}`);
        if (name === 'a' && attrs) {
          assert.match(attrs, /^ href="(https?:|\/|#)[^"]*" rel="noopener noreferrer nofollow" target="_blank"$/, `link from ${a}: ${html}`);
        } else if (name !== 'code') {
          assert.equal(attrs, '', `attributes on <${name}> from ${a}: ${html}`);
        }
      }
      assert.ok(!/javascript:|vbscript:|data:text/i.test(html.replace(/&[a-z#0-9]+;/g, '').match(/href="[^"]*"/g)?.join('') || ''), `a script URL from ${a}: ${html}`);
    }
  });
});

describe('protocols.js', () => {
  const fixture = readFileSync(new URL('../../examples/fixtures/thinkingml.txt', import.meta.url), 'utf8');

  /** show splits a raw reply into deltas and returns what the page shows of it. */
  const show = (cuts) => {
    const r = new Reply(0);
    const tml = new ThinkingML(r);
    let at = 0;
    for (const c of [...cuts, fixture.length]) {
      tml.feed(fixture.slice(at, c));
      at = c;
    }
    tml.close();
    return JSON.stringify({ blocks: r.blocks, serp: r.serpSummary, queries: r.queries });
  };

  test("gymbro's ThinkingML: the reasoning, phases, summary, answer and queries of the raw reply", () => {
    const r = JSON.parse(show([]));
    assert.deepEqual(r.blocks.map((b) => [b.kind, b.title ?? '']), [['reasoning', 'Think'], ['reasoning', '理解需求'], ['reasoning', 'Plan the output'], ['answer', '']]);
    assert.match(r.blocks[3].text, /^\s*# 三分化训练方案/);
    assert.equal(r.serp, '用户想要一份三分化训练计划，包含频率与动作选择。');
    assert.deepEqual(r.queries, ['三分化训练计划怎么安排', '三分化训练动作选择', '三分化训练频率与恢复']);
  });

  test('the same for any split of the reply', () => {
    const whole = show([]);
    for (let i = 1; i < fixture.length; i++) assert.equal(show([i]), whole, `split at ${i}`);
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let k = 0; k < 50; k++) {
      const cuts = [];
      for (let at = 0; at < fixture.length; ) {
        at += 1 + Math.floor(rand() * 12);
        if (at < fixture.length) cuts.push(at);
      }
      assert.equal(show(cuts), whole, `random split ${k}`);
    }
  });

  test('each request format gets its own body', () => {
    const shape = (request_format, model = '') => JSON.parse(buildRequest(new Conversation({ request_format, model }), 'hi').body);
    assert.deepEqual(shape('openai').messages, [{ role: 'user', content: 'hi' }]);
    assert.equal(shape('openai').stream, true);
    assert.equal(shape('skillpet').message, 'hi');
    assert.ok(shape('skillpet').projectId);
    assert.deepEqual(shape('aisdk').messages.at(-1).parts, [{ type: 'text', text: 'hi' }]);
    assert.deepEqual(shape('responses').input, [{ role: 'user', content: 'hi' }]);
    assert.equal(shape('anthropic', 'm').model, 'm');
    assert.equal(shape('anthropic').thinking.type, 'enabled');
    const run = shape('agui');
    assert.equal(run.messages.at(-1).role, 'user');
    assert.equal(run.messages.at(-1).content, 'hi');
    assert.ok(run.messages.at(-1).id && run.threadId && run.runId);
    assert.deepEqual([run.tools, run.context], [[], []]);
  });

  test("agui: a phase's title out of its text however it was split, a gateway tool round, the custom events, usage", () => {
    const events = (phaseDeltas) => [
      { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
      { type: 'REASONING_START', messageId: 'm-reasoning-1' },
      { type: 'REASONING_MESSAGE_START', messageId: 'm-thought-1', role: 'reasoning', metadata: { llmstream: { phase: 1, title: '理解需求' } } },
      ...phaseDeltas.map((delta) => ({ type: 'REASONING_MESSAGE_CONTENT', messageId: 'm-thought-1', delta })),
      { type: 'REASONING_MESSAGE_END', messageId: 'm-thought-1' },
      { type: 'REASONING_END', messageId: 'm-reasoning-1' },
      { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Let me search.' },
      { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'search_knowledge', parentMessageId: 'm', metadata: { llmstream: { server: 'demo', label: 'Searching' } } },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"query":' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '"caddy"}' },
      { type: 'TOOL_CALL_END', toolCallId: 'c1' },
      { type: 'TEXT_MESSAGE_END', messageId: 'm' },
      { type: 'ACTIVITY_SNAPSHOT', messageId: 'm-progress-0', activityType: 'llmstream.tool_progress', content: { toolCallId: 'c1', toolName: 'search_knowledge', status: 'running', progress: 1, total: 2, message: 'half' } },
      { type: 'TOOL_CALL_RESULT', messageId: 'm-result-0', toolCallId: 'c1', content: '{"snippet":"x"}', role: 'tool', metadata: { llmstream: { status: 'completed' } } },
      { type: 'STEP_FINISHED', stepName: 'round 1' },
      { type: 'STEP_STARTED', stepName: 'round 2' },
      { type: 'TEXT_MESSAGE_START', messageId: 'm-message-2', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm-message-2', delta: 'Found it.' },
      { type: 'TEXT_MESSAGE_END', messageId: 'm-message-2' },
      { type: 'CUSTOM', name: 'llmstream.serp_queries', value: { queries: ['a', 'b'] } },
      { type: 'CUSTOM', name: 'llmstream.violation', value: { code: 'phase_order', offset: 3, detail: 'd' } },
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r', usage: [{ model: 'llm-mock', inputTokens: 5, outputTokens: 7 }], metadata: { llmstream: { finishReason: 'stop' } } },
    ];
    const view = (phaseDeltas) => {
      const r = new Reply(0);
      const read = newReader('agui', r);
      for (const e of events(phaseDeltas)) read({ event: 'message', data: JSON.stringify(e) });
      return r;
    };
    const text = '**理解需求**\n\n目标=增肌';
    const whole = view([text]);
    assert.deepEqual(whole.blocks.map((b) => [b.kind, b.round, b.title ?? '', b.text ?? '']),
      [['reasoning', 1, '理解需求', '目标=增肌'], ['answer', 1, '', 'Let me search.'], ['tools', 1, '', ''], ['round', 2, '', ''], ['answer', 2, '', 'Found it.']]);
    const call = whole.calls.get('c1');
    assert.deepEqual([call.name, call.server, call.gateway, call.args, call.status, call.output, call.progress.message],
      ['search_knowledge', 'demo', true, '{"query":"caddy"}', 'completed', '{"snippet":"x"}', 'half']);
    assert.deepEqual(whole.queries, ['a', 'b']);
    assert.deepEqual(whole.violations.map((v) => v.code), ['phase_order']);
    assert.deepEqual([whole.usage, whole.model, whole.finish, whole.done], [{ input_tokens: 5, output_tokens: 7 }, 'llm-mock', 'stop', true]);
    // The title's lead-in split anywhere, and a phase whose text does not lead with it.
    for (let i = 1; i < text.length; i++) {
      assert.deepEqual(view([text.slice(0, i), text.slice(i)]).blocks[0].text, '目标=增肌', `split at ${i}`);
    }
    assert.equal(view(['目标']).blocks[0].text, '目标');
  });
});
