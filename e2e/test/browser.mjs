// A headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ended by NUL on fds 3 and 4, as
// puppeteer's pipe mode does), with no npm package: load a page, wait
// until a condition holds in it, read its DOM. --dump-dom alone cannot
// wait for a stream that takes real time: its virtual-time budget runs
// out while the page waits on a streamed body (the agent loop's tools run
// for seconds).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * pageDOM loads url in a new headless Chromium, polls the JavaScript
 * expression until it is truthy (every 100ms, at most timeoutMs), and
 * returns the page's outerHTML then, and the value of the expression
 * result. init, if given, runs in the page before its own scripts (to
 * watch it as it goes). It throws when the condition never holds, with
 * the DOM it had.
 */
export async function pageDOM(chromium, url, until, { init, result = 'null', timeoutMs = 30_000 } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'llmstream-chromium-'));
  const child = spawn(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      '--remote-debugging-pipe',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const waiting = new Map();
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      for (const w of waiting.values()) w.reject(new Error(`chromium exited (${code ?? signal}) before answering ${w.method}:\n${stderr}`));
      waiting.clear();
      resolve();
    }),
  );
  const toBrowser = child.stdio[3];
  const fromBrowser = child.stdio[4];
  let nextID = 1;
  let buf = Buffer.alloc(0);
  fromBrowser.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (let end = buf.indexOf(0); end >= 0; end = buf.indexOf(0)) {
      const msg = JSON.parse(buf.subarray(0, end).toString('utf8'));
      buf = buf.subarray(end + 1);
      const w = waiting.get(msg.id);
      if (!w) continue; // an event
      waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(`${w.method}: ${msg.error.message}`));
      else w.resolve(msg.result);
    }
  });
  const send = (method, params = {}, sessionId) =>
    new Promise((resolve, reject) => {
      const id = nextID++;
      waiting.set(id, { resolve, reject, method });
      toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });
  try {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    await send('Page.enable', {}, sessionId);
    if (init) await send('Page.addScriptToEvaluateOnNewDocument', { source: init }, sessionId);
    await send('Page.navigate', { url }, sessionId);
    const evaluate = async (expression) =>
      (await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result.value;
    const deadline = Date.now() + timeoutMs;
    while (!(await evaluate(`Boolean(${until})`))) {
      if (Date.now() > deadline) {
        throw new Error(`${until} never held in ${url}:\n${await evaluate('document.documentElement.outerHTML')}\n${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return { dom: await evaluate('document.documentElement.outerHTML'), result: await evaluate(result) };
  } finally {
    send('Browser.close').catch(() => {}); // it exits before it answers
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
    rmSync(profile, { recursive: true, force: true });
  }
}
