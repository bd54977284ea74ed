// The playground page (caddymodule/playground, CONTRACT.md §15) in a real
// headless Chromium, driven by playwright-core, against the repository's
// default Caddyfile served by the built ./caddy (e2e/run.sh starts it on
// :8080 with its llm_mock upstreams). For a route of every protocol a
// prompt is typed and sent as a user would, and the rendered reply is
// checked: the answer rendered from Markdown to HTML, the reasoning in its
// collapsible panel, the tool round of the /agent routes with its result
// (and progress where the protocol carries it), the violations of the one
// route whose reply has some, none on the others, and the timings. A
// screenshot of each is kept in $PLAYGROUND_SHOTS (e2e/run.sh: .ci/artifacts/playground).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

const BASE = process.env.PLAYGROUND_BASE || 'http://127.0.0.1:8080';
const SHOTS = process.env.PLAYGROUND_SHOTS || '';
const executablePath = [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((b) => b && existsSync(b));
const required = process.env.PLAYGROUND_REQUIRE_CHROMIUM === '1';

/**
 * The cases: a route of the default Caddyfile, what the reply must show.
 * answer: text in the rendered answer and the HTML elements it must have;
 * reasoning: text in a reasoning panel; tools: a tool the gateway ran,
 * completed, and whether its progress shows; round2: a second round
 * marker; violations: the codes listed ([] = no violation panel at all).
 */
const cases = [
  { endpoint: '/gymbro', protocol: 'gymbro', answer: '三分化训练方案', html: ['h1', 'li', 'strong', 'code'], reasoning: '目标=增肌', queries: 3, violations: [] },
  { endpoint: '/jsonseq', protocol: 'jsonseq', answer: '三分化训练方案', html: ['h1', 'li', 'strong'], reasoning: '目标=增肌', queries: 3, violations: [] },
  { endpoint: '/skillpet/stream', protocol: 'skillpet', answer: '三分化训练方案', html: ['h1', 'li'], reasoning: '目标=增肌', askUser: true, violations: [] },
  { endpoint: '/api/chat', protocol: 'aisdk', answer: '三分化训练方案', html: ['h1', 'li'], reasoning: '目标=增肌', queries: 3, violations: [] },
  { endpoint: '/v1/chat/completions', protocol: 'openai', answer: '三分化训练方案', html: ['h1', 'li'], reasoning: 'The user asked a simple question', violations: [], tokens: true },
  { endpoint: '/v1/responses', protocol: 'responses', answer: '三分化训练方案', html: ['h1', 'li'], reasoning: '目标=增肌', violations: [], tokens: true },
  { endpoint: '/v1/messages', protocol: 'anthropic', answer: '三分化训练方案', html: ['h1', 'li'], reasoning: 'The user asked a simple question', violations: [], tokens: true },
  { endpoint: '/agui', protocol: 'agui', answer: '三分化训练方案', html: ['h1', 'li', 'strong'], reasoning: '目标=增肌', queries: 3, violations: [], tokens: true },
  { endpoint: '/formats/violations', protocol: 'jsonseq', answer: 'on purpose', html: ['strong', 'em'], reasoning: 'Phase ids count up', queries: 2,
    // The literal tag; the id that skips one (reported, and renumbered).
    violations: ['literal_final_tag', 'phase_order', 'phase_renumbered'] },
  { endpoint: '/agent/chat', protocol: 'aisdk', answer: 'Here is what the knowledge base says', html: ['p'], tools: 'search_knowledge', progress: true, round2: true, violations: [] },
  { endpoint: '/agent/v1/responses', protocol: 'responses', answer: 'Here is what the knowledge base says', html: ['p'], tools: 'search_knowledge', round2: true, violations: [] },
  { endpoint: '/agent/v1/messages', protocol: 'anthropic', answer: 'Here is what the knowledge base says', html: ['p'], tools: 'search_knowledge', round2: true, violations: [] },
  { endpoint: '/agent/agui', protocol: 'agui', answer: 'Here is what the knowledge base says', html: ['p'], tools: 'search_knowledge', progress: true, round2: true, violations: [] },
  { endpoint: '/agent/skillpet/stream', protocol: 'skillpet', answer: 'Here is what the knowledge base says', html: ['p'], tools: 'search_knowledge', progress: true, round2: true, violations: [] },
];

describe('the playground in headless Chromium, against the default Caddyfile', { skip: executablePath || required ? false : 'no chromium (apt-get install chromium)' }, () => {
  let browser;
  let page;
  const consoleErrors = [];

  before(async () => {
    assert.ok(executablePath, 'PLAYGROUND_REQUIRE_CHROMIUM=1 but no chromium is installed');
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    // Playwright gives the browser a new, empty profile of its own. The flags machines/go.md lists as known to work here: a closed
    // network refuses Chromium's own background connections.
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    await page.goto(`${BASE}/playground/`);
    await page.waitForSelector('button.route');
  });

  after(async () => {
    await browser?.close();
  });

  test('lists the routes of the running config with their protocols, and no secret', async () => {
    const routes = await page.$$eval('button.route', (bs) => bs.map((b) => [b.dataset.endpoint, b.querySelector('.proto').textContent]));
    const byPath = Object.fromEntries(routes);
    for (const c of cases) assert.equal(byPath[c.endpoint], c.protocol, `route ${c.endpoint}`);
    // routes.json carries the routes' facts only: no prompt, header or key.
    const json = await (await fetch(`${BASE}/playground/routes.json`)).text();
    for (const secret of ['system_prompt', 'Authorization', 'LLM_API_KEY', 'header_up', 'Bearer', 'prompts/']) {
      assert.ok(!json.includes(secret), `routes.json mentions ${secret}`);
    }
    const csp = (await fetch(`${BASE}/playground/`)).headers.get('content-security-policy');
    assert.match(csp, /connect-src 'self'/);
  });

  for (const c of cases) {
    test(`${c.endpoint} (${c.protocol}): a prompt sent, the reply rendered as it arrives`, async () => {
      await page.click(`button.route[data-endpoint="${c.endpoint}"]`);
      await page.click('#new');
      await page.fill('#prompt', c.endpoint.startsWith('/agent') ? 'what is llmstream?' : '三分化训练怎么安排？');
      await page.click('#send');
      await page.waitForSelector('#state[data-state="done"], #state[data-state="error"]', { timeout: 30_000 });
      const turn = page.locator('.turn').last();
      if ((await page.getAttribute('#state', 'data-state')) !== 'done') {
        assert.fail(`the reply ended in an error: ${await turn.locator('.error').textContent()}`);
      }

      // The answer, rendered from Markdown: the text, in HTML elements.
      const answer = turn.locator('.answer');
      assert.ok((await answer.allTextContents()).join('').includes(c.answer), `answer ${c.answer}`);
      for (const tag of c.html) assert.ok((await answer.locator(tag).count()) > 0, `the answer has <${tag}>`);
      assert.equal(await answer.locator('script, iframe, img').count(), 0);

      // Reasoning in its panel, collapsed until opened.
      if (c.reasoning) {
        const panel = turn.locator('details.reasoning', { hasText: c.reasoning }).first();
        assert.equal(await panel.count(), 1, `a reasoning panel holds ${c.reasoning}`);
        assert.equal(await panel.evaluate((d) => d.open), false);
        await panel.locator('summary').click();
        assert.equal(await panel.evaluate((d) => d.open), true);
        assert.ok(await panel.locator('.reasoning-text').isVisible());
      }

      if (c.tools) {
        const call = turn.locator('.tools .call', { hasText: c.tools }).first();
        assert.equal(await call.getAttribute('data-status'), 'completed', 'the tool call completed');
        assert.match(await call.textContent(), /run by the gateway/);
        assert.match(await call.locator('details.output pre').textContent(), /snippet/);
        if (c.progress) assert.ok((await call.locator('.progress').count()) > 0, 'its progress shows');
      }
      if (c.round2) assert.equal(await turn.locator('.round', { hasText: 'Round 2' }).count(), 1, 'round 2 marked');
      if (c.queries) assert.equal(await turn.locator('.queries li').count(), c.queries, 'serp queries');
      if (c.askUser) assert.ok((await turn.locator('.ask-user .option').count()) >= 3, 'the ask_user form');

      const codes = await turn.locator('.violations li code').allTextContents();
      assert.deepEqual(codes, c.violations, 'violations listed');
      if (!c.violations.length) assert.equal(await turn.locator('.violations').count(), 0, 'no violation panel');

      // Timings: first byte, first token, total; tokens where the protocol reports usage.
      for (const k of ['first byte', 'first token', 'total']) {
        assert.equal(await turn.locator(`.timing[data-k="${k}"]`).count(), 1, `timing ${k}`);
      }
      if (c.round2) assert.equal(await turn.locator('.timing[data-k="rounds"] .v').textContent(), '2');
      if (c.tokens) assert.match(await turn.locator('.timing[data-k="tokens"] .v').textContent(), /^\d+ in · \d+ out$/);

      // Raw events on demand.
      const raw = turn.locator('details.raw');
      await raw.locator('summary').click();
      assert.ok((await raw.locator('pre').textContent()).length > 100, 'the raw events');
      await raw.locator('summary').click();

      if (SHOTS) await page.screenshot({ path: join(SHOTS, `${c.endpoint.replace(/^\//, '').replace(/[^\w]+/g, '_')}.png`), fullPage: true });
    });
  }

  test('/formats/final_result (skillpet): an answer, then a clarify shown as the ask_user form, in one conversation', async () => {
    // The route's mock alternates an answer and a clarify_needed reply.
    await page.click('button.route[data-endpoint="/formats/final_result"]');
    await page.click('#new');
    for (const q of ['make a quiz', 'for my class']) {
      await page.fill('#prompt', q);
      await page.click('#send');
      await page.waitForSelector('#state[data-state="done"]', { timeout: 30_000 });
    }
    const [first, second] = [page.locator('.turn').nth(0), page.locator('.turn').nth(1)];
    assert.equal(await first.locator('.answer ol li').count(), 2, 'the answer, its list rendered');
    assert.match(await second.locator('.answer').textContent(), /Which class is this lesson for\?/);
    const options = await second.locator('.ask-user .option').allTextContents();
    assert.deepEqual(options, ['Class 7A', 'Class 7B', 'Both']);
    assert.match(await second.locator('.ask-user .question').first().textContent(), /Which class should the quiz target\?/);
    // An option fills the prompt, for the next turn.
    await second.locator('.ask-user .option', { hasText: 'Class 7B' }).click();
    assert.equal(await page.inputValue('#prompt'), 'Class 7B');
    await page.fill('#prompt', '');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'formats_final_result.png'), fullPage: true });
  });

  test('no script error on the page', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
