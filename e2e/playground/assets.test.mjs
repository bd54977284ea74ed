// The playground's page code that needs no browser
// (caddymodule/playground/assets): the Markdown renderer lets no HTML of a
// reply through, and gymbro's ThinkingML splitter shows the same reply
// whatever the deltas were.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { renderMarkdown } from '../../caddymodule/playground/assets/markdown.js';
import { Reply, ThinkingML, buildRequest, Conversation } from '../../caddymodule/playground/assets/protocols.js';

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
  });
});
