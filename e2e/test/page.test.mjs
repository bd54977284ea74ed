// The example page, examples/aisdk-page: its chat logic (the `ai`
// package's AbstractChat + DefaultChatTransport) runs headless against the
// aisdk routes and its renderer turns the result into HTML; the bundle
// e2e/run.sh built is served beside the routes; and, where a Chromium is
// installed, a real browser loads the page, chats and renders.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { createChat } from '../../examples/aisdk-page/src/chat.js';
import { escape, renderMessage, renderStatus } from '../../examples/aisdk-page/src/render.js';
import { BASE, MOCKS, url } from './expected.mjs';
import { pageDOM } from './browser.mjs';
import { loopURL, notes } from './loop.mjs';

const page = fileURLToPath(new URL('../../examples/aisdk-page/', import.meta.url));

/** chatOnce sends one message and returns the chat and every state seen. */
async function chatOnce(api, text = 'hi') {
  const renders = [];
  const errors = [];
  const chat = createChat({
    api,
    onChange: (s) => renders.push({ status: s.status, html: s.messages.map(renderMessage).join('') }),
    onError: (e) => errors.push(e),
  });
  await chat.sendMessage({ text });
  return { chat, renders, errors };
}

describe('examples/aisdk-page: the chat logic, headless', () => {
  test('thinkingml: reasoning, phases, summary, answer, queries, violations rendered', async () => {
    const want = MOCKS.thinkingml;
    const { chat, renders, errors } = await chatOnce(url('aisdk', 'auto', 'thinkingml', 13), '三分化训练怎么安排？');
    assert.deepEqual(errors, []);
    assert.equal(chat.status, 'ready');
    // The user message shows at once (still ready), then submitted, the
    // reply streams, and the chat is ready again.
    const statuses = renders.map((r) => r.status).filter((s, i, all) => s !== all[i - 1]);
    assert.deepEqual(statuses, ['ready', 'submitted', 'streaming', 'ready']);
    assert.ok(renders.length > 10, 'the page re-renders while the reply streams');
    const html = renderMessage(chat.messages[1]);
    assert.ok(html.includes(`<div class="part text">${escape(want.answer)}</div>`), 'the answer');
    for (const r of want.reasoning) assert.ok(html.includes(`<div>${escape(r)}</div>`), `reasoning ${r.slice(0, 20)}`);
    for (const p of want.phases) assert.ok(html.includes(`Phase ${p.id}: ${escape(p.title)}</h4>`));
    assert.ok(html.includes(`<div class="part summary">${escape(want.summary)}</div>`));
    for (const q of want.queries) assert.ok(html.includes(`<li>${escape(q)}</li>`));
    assert.ok(html.includes('<code>literal_final_tag</code>'));
    // Escaped, not interpreted: the literal <final> in the reasoning.
    assert.ok(html.includes('mention that &lt;final&gt; tags'));
    // In the order the model wrote them.
    const at = (s) => html.indexOf(s);
    assert.ok(at('Phase 1:') < at('Phase 2:') && at('Phase 2:') < at('class="part text"') && at('class="part text"') < at('class="part queries"'));
    assert.equal(renderStatus(chat.status, chat.error), '<span class="status" data-status="ready">ready</span>');
  });

  test('tool calls and clarify/artifacts data parts rendered', async () => {
    const tools = await chatOnce(url('aisdk', 'text', 'native_tools', 1));
    const html = renderMessage(tools.chat.messages[1]);
    for (const c of MOCKS.native_tools.toolCalls) {
      assert.ok(html.includes(`tool call: <code>${c.name}</code> (input-available)`));
      assert.ok(html.includes(`<pre class="input">${escape(JSON.stringify(c.input, null, 2))}</pre>`));
    }
    const clarify = await chatOnce(url('aisdk', 'final_result', 'final_result_clarify', 13));
    const c = MOCKS.final_result_clarify.clarify;
    const chtml = renderMessage(clarify.chat.messages[1]);
    assert.ok(chtml.includes(`<div class="question">${escape(c.question)}</div>`));
    assert.ok(chtml.includes(c.options.map((o) => `<button type="button">${escape(o)}</button>`).join('')));
    const artifacts = await chatOnce(url('aisdk', 'final_result', 'final_result_artifacts', 13));
    assert.ok(renderMessage(artifacts.chat.messages[1]).includes(escape(JSON.stringify(MOCKS.final_result_artifacts.artifacts, null, 2))));
  });

  test('a truncated upstream shows the error in the status line', async () => {
    const { chat, errors } = await chatOnce(url('aisdk', 'text', 'text_cut', 13));
    assert.equal(chat.status, 'error');
    assert.equal(errors.length, 1);
    assert.equal(
      renderStatus(chat.status, chat.error),
      '<span class="status" data-status="error">error</span> <span class="error">upstream: the connection broke off mid-reply</span>',
    );
  });
});

/** until waits for cond, polling, at most ms. */
async function until(cond, ms = 20_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('examples/aisdk-page: tools the gateway runs (CONTRACT §13)', () => {
  test('progress updated in place, the file, the approval request; the approval runs the call', async () => {
    const renders = [];
    const statuses = [];
    const errors = [];
    const chat = createChat({
      api: `${BASE}/page_agent/chat`,
      onChange: (s) => {
        renders.push(s.messages.map(renderMessage).join(''));
        if (statuses.at(-1) !== s.status) statuses.push(s.status);
      },
      onError: (e) => errors.push(e),
    });
    await chat.sendMessage({ text: 'search, report, weather' });
    assert.deepEqual(errors, []);
    assert.equal(chat.status, 'ready');
    const msg = chat.messages[1];
    // search_knowledge's progress: one part, replaced as it goes; the page
    // showed it rising, never two at once.
    const progress = msg.parts.filter((p) => p.type === 'data-tool-progress');
    assert.equal(progress.length, 1);
    assert.equal(progress[0].data.toolName, 'search_knowledge');
    const seen = renders.map((h) => [...h.matchAll(/<div class="part progress" data-tool="[^"]+">search_knowledge: (\d+)/g)].map((m) => Number(m[1])));
    assert.ok(seen.every((v) => v.length <= 1), 'one progress line per call');
    const values = seen.flat().filter((v, i, all) => v !== all[i - 1]);
    assert.ok(values.length >= 2 && values.every((v, i) => i === 0 || v > values[i - 1]), `progress rose in place: ${values}`);
    const html = renderMessage(msg);
    // make_report's file: a link llmstream serves.
    const file = html.match(/<div class="part file"><a href="([^"]+)" download="([^"]+)">/);
    assert.ok(file, 'the file-ready part');
    assert.match(file[2], /\.md$/);
    const served = await fetch(new URL(file[1].replaceAll('&amp;', '&'), BASE));
    assert.equal(served.status, 200);
    assert.match(await served.text(), /^# Caddy/);
    // get_weather waits for the user's approval.
    const ask = msg.parts.find((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool' ? p.state === 'approval-requested' : false);
    assert.ok(ask, `an approval request: ${msg.parts.map((p) => p.type + ':' + p.state).join(' ')}`);
    assert.ok(html.includes(`data-approval-id="${ask.approval.id}" data-approved="true">Approve</button>`));
    assert.ok(html.includes('tool call: <code>get_weather</code> (approval-requested) <span class="title">Weather</span>'));
    // Approved: the answer goes back at once, the call runs, round 2 answers.
    statuses.length = 0;
    await chat.addToolApprovalResponse({ id: ask.approval.id, approved: true });
    await until(() => statuses.includes('streaming') && chat.status === 'ready');
    assert.deepEqual(errors, []);
    assert.equal(chat.messages.length, 2, 'the continuation extends the answered message');
    const last = renderMessage(chat.messages.at(-1));
    assert.ok(last.includes('tool call: <code>get_weather</code> (output-available)'), last);
    assert.match(last, /Paris: \d+°C/);
    assert.match(last, /Done: Paris/);
  });
});

describe('examples/aisdk-page: the agent loop, headless', () => {
  test('the tools the gateway ran are rendered with their output, and every round’s text', async () => {
    const { chat, errors } = await chatOnce(loopURL('aisdk', 'clients'), 'Look it up.');
    assert.deepEqual(errors, []);
    assert.equal(chat.status, 'ready');
    const html = renderMessage(chat.messages[1]);
    assert.ok(html.includes('<div class="part tool" data-state="output-available" data-run-by="gateway"><div class="label">tool call: <code>ev_trigger-long-running-operation</code> (output-available) <span class="title">Trigger Long Running Operation Tool</span></div>'), html);
    assert.ok(html.includes('<pre class="output">Long running operation completed. Duration: 1 seconds, Steps: 2.</pre>'));
    assert.ok(html.includes(`<pre class="output">${escape(notes())}</pre>`));
    assert.ok(html.includes('tool call: <code>evh_get-resource-reference</code> (output-error)'));
    assert.ok(html.includes('<div class="part progress" data-tool="'));
    assert.ok(html.includes('<div class="part text">One more.</div>'));
    assert.match(html, /<div class="part text">Done: [^<]*Invalid resourceId: 0/);
  });
});

describe('examples/aisdk-page: the built page, served', () => {
  test('index.html and the bundle are served at /page/', async () => {
    assert.ok(existsSync(page + 'dist/app.js'), 'run `npm run build` in examples/aisdk-page (e2e/run.sh does)');
    const res = await fetch(`${BASE}/page/`);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /<script type="module" src="dist\/app.js"><\/script>/);
    const js = await fetch(`${BASE}/page/dist/app.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type'), /javascript/);
    const body = await js.text();
    assert.equal(body, readFileSync(page + 'dist/app.js', 'utf8'));
    // The bundle holds the SDK's transport and stream processing.
    assert.match(body, /x-vercel-ai-ui-message-stream|DefaultChatTransport|text-delta/);
  });
});

const chromium = [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((b) => b && existsSync(b));

/** chromiumArgs load a page headless and print its DOM once it settled. */
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  // A closed network refuses Chromium's own background connections,
  // many at a time: keep it to the page.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--virtual-time-budget=15000',
  '--dump-dom',
];

// How a browser serialises a text node: only &, < and > are escaped.
const domText = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

describe('examples/aisdk-page: in a headless Chromium', { skip: chromium ? false : 'no chromium installed (optional: apt-get install chromium)' }, () => {
  test('tools the gateway runs (CONTRACT §13): progress in place, the file, the approval request; Approve clicked runs the call', async () => {
    // The condition clicks Approve once the turn ended waiting for it,
    // keeping the list as it was then, and holds once round 2 answered.
    const until = `(() => {
      const ready = document.querySelector('#status [data-status="ready"]');
      const b = document.querySelector('button[data-approval-id][data-approved="true"]');
      if (ready && b && !window.atApproval) { window.atApproval = document.getElementById('messages').innerHTML; b.click(); }
      return Boolean(window.atApproval && ready && document.getElementById('messages').innerHTML.includes('Done: Paris'));
    })()`;
    const { dom, result } = await pageDOM(
      chromium,
      `${BASE}/page/?api=${encodeURIComponent('/page_agent/chat')}&q=${encodeURIComponent('search, report, weather')}`,
      until,
      {
        init: `window.renders = []; new MutationObserver(() => { const m = document.getElementById('messages'); if (m) window.renders.push(m.innerHTML); }).observe(document, { subtree: true, childList: true });`,
        result: '({ renders: window.renders, atApproval: window.atApproval })',
      },
    );
    const { renders, atApproval } = result;
    // The progress line rose in place: one at a time, its count going up.
    const seen = renders.map((h) => [...h.matchAll(/<div class="part progress" data-tool="[^"]+">search_knowledge: (\d+)/g)].map((m) => Number(m[1])));
    assert.ok(seen.every((v) => v.length <= 1), `one progress line per call: ${JSON.stringify(seen.filter((v) => v.length > 1))} ${JSON.stringify(renders.find((h, i) => seen[i].length > 1))}`);
    const values = seen.flat().filter((v, i, all) => v !== all[i - 1]);
    assert.ok(values.length >= 2 && values.every((v, i) => i === 0 || v > values[i - 1]), `progress rose in place: ${values}`);
    // When the turn ended: the approval request with its buttons, the file.
    assert.match(atApproval, /tool call: <code>get_weather<\/code> \(approval-requested\) <span class="title">Weather<\/span>/);
    assert.match(atApproval, /<button type="button" data-approval-id="apr_[^"]+" data-approved="false">Deny<\/button>/);
    assert.match(atApproval, /<div class="part file"><a href="\/page_agent\/chat\?llmstream_file=[^"]+" download="[^"]+\.md">/);
    // After the click: the call ran and round 2 answered with its result.
    assert.match(dom, /tool call: <code>get_weather<\/code> \(output-available\)/);
    assert.match(dom, /Done: Paris: \d+°C/);
    assert.equal([...dom.matchAll(/<article class="message assistant"/g)].length, 1, 'the continuation extends the answered message');
  });

  test('the page chats with the aisdk route and renders every part', async () => {
    const want = MOCKS.ask_user;
    const api = encodeURIComponent('/aisdk/auto/ask_user/13');
    const { stdout } = await promisify(execFile)(
      chromium,
      [...chromiumArgs, `${BASE}/page/?api=${api}&q=${encodeURIComponent('三分化训练怎么安排？')}`],
      { timeout: 60_000, maxBuffer: 16 << 20 },
    );
    assert.match(stdout, /data-status="ready"/, 'the chat ended ready');
    assert.ok(stdout.includes(`<div class="part text">${domText(want.answer)}</div>`), 'the answer, rendered');
    assert.ok(stdout.includes('tool call: <code>ask_user</code> (input-available)'));
    for (const p of want.phases) assert.ok(stdout.includes(`Phase ${p.id}: ${domText(p.title)}</h4>`));
    for (const q of want.queries) assert.ok(stdout.includes(`<li>${domText(q)}</li>`));
  });

  test('the page chats with a route whose tools the gateway runs (real MCP servers) and renders every round', async () => {
    // Driven over the DevTools protocol: the tools run for a second of
    // real time, which --dump-dom's virtual time does not wait for.
    // Every render of the message list is kept, to see what the page
    // showed while the tools ran.
    const api = encodeURIComponent('/loop/aisdk/clients');
    const { dom: stdout, result: renders } = await pageDOM(
      chromium,
      `${BASE}/page/?api=${api}&q=${encodeURIComponent('Look it up.')}`,
      `document.querySelector('#status [data-status="ready"], #status [data-status="error"]')`,
      {
        init: `window.renders = []; new MutationObserver(() => { const m = document.getElementById('messages'); if (m) window.renders.push(m.innerHTML); }).observe(document, { subtree: true, childList: true });`,
        result: 'window.renders',
      },
    );
    assert.match(stdout, /data-status="ready"/, 'the chat ended ready');
    assert.ok(
      renders.some((h) => h.includes('<div class="part progress"') && h.includes('data-state="input-available" data-run-by="gateway"><div class="label">tool call: <code>ev_trigger-long-running-operation</code>')),
      'the progress was shown while the operation ran',
    );
    // The server-run tool parts, with their output, as the browser's DOM
    // has them.
    assert.ok(stdout.includes('data-run-by="gateway"><div class="label">tool call: <code>ev_trigger-long-running-operation</code> (output-available)'), stdout);
    assert.ok(stdout.includes('<pre class="output">Long running operation completed. Duration: 1 seconds, Steps: 2.</pre>'));
    assert.ok(stdout.includes(`<pre class="output">${domText(notes())}</pre>`), 'the file server-filesystem read');
    assert.ok(stdout.includes('tool call: <code>evh_get-resource-reference</code> (output-error)'));
    // Every round's text.
    assert.ok(stdout.includes('<div class="part text">Let me look.</div>'));
    assert.ok(stdout.includes('<div class="part text">One more.</div>'));
    assert.match(stdout, /<div class="part text">Done: [^<]*Invalid resourceId: 0/);
  });
});
