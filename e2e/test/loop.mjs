// Helpers of the agent loop's end-to-end tests (CONTRACT.md §12): the
// /loop routes of e2e/Caddyfile, whose tools are real MCP servers
// (server-everything over stdio and streamable HTTP, server-filesystem),
// and reading a skillpet stream as it arrives.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { createParser } from 'eventsource-parser';

import { BASE } from './expected.mjs';

/** loopURL is a /loop route's URL for a protocol and a mock (e2e/Caddyfile). */
export const loopURL = (protocol, mock, rest = '') => `${BASE}/loop/${protocol}/${mock}${rest}`;

/** FS_ROOT is the directory server-filesystem serves (run.sh makes it). */
export const FS_ROOT = process.env.E2E_FS_ROOT;

/** notes is the file the files script reads through the loop. */
export const notes = () => readFileSync(join(FS_ROOT, 'notes.txt'), 'utf8');

/**
 * streamSSE posts body to url and reads the SSE reply as it comes, with
 * eventsource-parser: onEvent(ev) sees each {event, data, at} the moment
 * it is parsed (at: ms since the request). It resolves with every event
 * once the stream ends.
 */
export async function streamSSE(url, body, { onEvent, headers = {}, timeout = 60_000 } = {}) {
  const start = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeout),
  });
  const events = [];
  const errors = [];
  const parser = createParser({
    onEvent: (e) => {
      const ev = { event: e.event, raw: e.data, data: JSON.parse(e.data), at: performance.now() - start };
      events.push(ev);
      onEvent?.(ev);
    },
    onError: (err) => errors.push(err),
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  if (errors.length) throw new Error(`the SSE parser refused the stream: ${errors.map(String).join('; ')}`);
  return { res, events };
}

/** roundText joins the skillpet tokens of each round: [round 1, round 2, …]. */
export function roundTexts(events) {
  const rounds = [''];
  for (const e of events) {
    if (e.event === 'round_start') rounds.push('');
    if (e.event === 'token') rounds[rounds.length - 1] += e.data.content;
  }
  return rounds;
}

/**
 * serverPIDs returns the pids of the running server-everything processes
 * whose environment has LLMSTREAM_E2E_SERVER=<tag> (the mcp block's env
 * line): Caddy's stdio server of one route.
 */
export function serverPIDs(tag) {
  const pids = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const env = readFileSync(`/proc/${d}/environ`, 'latin1').split('\0');
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'latin1');
      if (env.includes(`LLMSTREAM_E2E_SERVER=${tag}`) && cmd.includes('mcp-server-everything')) pids.push(Number(d));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** waitFor polls check every 200ms until it returns a truthy value or ms pass. */
export async function waitFor(what, check, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
