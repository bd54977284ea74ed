// Claude Code (npm @anthropic-ai/claude-code, pinned in package.json) runs
// `claude -p` against the anthropic route in front of a scripted llm_mock:
// the model calls Bash, Claude Code runs it and sends the result back, and
// the model answers. This is the whole agent loop through llmstream's
// Messages API: tool definitions, a streamed tool_use block, a tool_result
// converted into a tool message, and the final text.
//
// Claude Code is proprietary ("© Anthropic PBC. All rights reserved. Use is
// subject to the Legal Agreements", LICENSE.md in its package): it is not
// vendored, only installed from the npm registry, whose platform package
// carries the native binary (no download from Anthropic's servers). Its
// documentation describes this use: headless `claude -p`, in CI, behind
// an LLM gateway (ANTHROPIC_BASE_URL). The test runs it with a throwaway
// HOME and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no telemetry, error
// reports or update checks). Set LLMSTREAM_E2E_CLAUDE_CODE=0 to skip it; it
// skips by itself, saying why, when the binary is not installed (npm ci
// --omit=optional, or a platform without a package).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BASE, read } from './expected.mjs';

const modules = fileURLToPath(new URL('../node_modules/', import.meta.url));
/** The mock's recorded requests (llm_mock record), on the fake upstream. */
const RECORDED = 'http://127.0.0.1:18100/m/claude_code/13/llm_mock/requests';

/**
 * claudeBinary finds the claude executable: the package's bin, which its
 * postinstall replaces with the native binary, or else (a package manager
 * that did not run the postinstall) the binary in the platform package.
 */
function claudeBinary() {
  const candidates = [join(modules, '.bin', 'claude')];
  const scope = join(modules, '@anthropic-ai');
  if (existsSync(scope)) {
    for (const dir of readdirSync(scope)) if (dir.startsWith('claude-code-')) candidates.push(join(scope, dir, 'claude'));
  }
  let why = 'not installed';
  for (const bin of candidates) {
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH, HOME: tmpdir() } });
    if (r.status === 0 && /Claude Code/.test(r.stdout)) return { bin };
    why = (r.error?.message ?? r.stderr ?? '').trim().split('\n')[0] || why;
  }
  return { skip: `Claude Code cannot run from e2e/node_modules (its native binary comes from the optional dependency @anthropic-ai/claude-code-<platform>): ${why}` };
}

const claude = process.env.LLMSTREAM_E2E_CLAUDE_CODE === '0' ? { skip: 'LLMSTREAM_E2E_CLAUDE_CODE=0' } : claudeBinary();

/** run runs a command and collects its output. */
function run(cmd, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

test('claude -p completes a tool round trip through the anthropic route', { skip: claude.skip ?? false, timeout: 180_000 }, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'llmstream-claude-home-'));
  const work = mkdtempSync(join(tmpdir(), 'llmstream-claude-work-'));
  t.after(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  assert.equal((await fetch(RECORDED, { method: 'DELETE' })).status, 204, 'the mock records requests');

  const env = {
    PATH: process.env.PATH,
    SHELL: process.env.SHELL ?? '/bin/sh',
    HOME: home,
    TMPDIR: tmpdir(),
    ANTHROPIC_BASE_URL: `${BASE}/anthropic/text/claude_code/13`,
    ANTHROPIC_API_KEY: 'sk-ant-e2e',
    ANTHROPIC_MODEL: 'e2e-upstream-model',
    ANTHROPIC_SMALL_FAST_MODEL: 'e2e-small-model',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  const { code, signal, stdout, stderr } = await run(
    claude.bin,
    ['-p', 'Print the llmstream marker.', '--allowedTools', 'Bash(echo:*)', '--output-format', 'json'],
    { cwd: work, env, timeout: 150_000 },
  );
  assert.equal(code, 0, `claude exited with ${code ?? signal}\nstdout: ${stdout}\nstderr: ${stderr}`);
  // The result is the one JSON line of stdout (a warning about the
  // unknown model name may precede it).
  const line = stdout.split('\n').find((l) => l.startsWith('{'));
  assert.ok(line, `no JSON result in ${stdout}`);
  const result = JSON.parse(line);
  assert.equal(result.is_error, false, line);
  assert.equal(result.subtype, 'success');
  assert.equal(result.result, read('claude_code_turn2.txt'), 'the model’s answer after the tool ran');
  assert.equal(result.num_turns, 2, 'one tool round trip');
  assert.deepEqual(result.permission_denials, []);

  // What llm_stream sent upstream: the first request offers Claude Code's
  // tools; the second carries the Bash call and its output, which only a
  // shell could have computed, as a tool message answering the call.
  const requests = await (await fetch(RECORDED)).json();
  assert.equal(requests.length, 2, `requests upstream: ${requests.map((r) => JSON.stringify(r).slice(0, 200)).join('\n')}`);
  const [first, second] = requests;
  assert.equal(first.model, 'e2e-model', 'the route’s model overrides ANTHROPIC_MODEL');
  assert.equal(first.stream, true);
  const names = first.tools.map((tool) => tool.function.name);
  assert.ok(names.includes('Bash'), `tools offered: ${names}`);
  const bash = first.tools.find((tool) => tool.function.name === 'Bash');
  assert.equal(bash.type, 'function');
  assert.equal(bash.function.parameters.type, 'object');
  const call = second.messages.findLast((m) => m.role === 'assistant');
  assert.equal(call.content, read('claude_code_turn1.txt'));
  assert.equal(call.tool_calls.length, 1);
  assert.equal(call.tool_calls[0].function.name, 'Bash');
  assert.equal(JSON.parse(call.tool_calls[0].function.arguments).command, 'echo llmstream-marker-$((40+2))');
  const answer = second.messages[second.messages.indexOf(call) + 1];
  assert.equal(answer.role, 'tool');
  assert.equal(answer.tool_call_id, call.tool_calls[0].id);
  assert.match(answer.content, /^llmstream-marker-42(\n|$)/, 'the shell computed the marker');
});

/**
 * claudeOnLoop runs `claude -p` against /loop/anthropic/<mock>, a route
 * whose tools the gateway runs (server-everything's get-sum) beside
 * Claude Code's own, and returns its result and what went upstream.
 */
async function claudeOnLoop(t, mock) {
  const recorded = `http://127.0.0.1:18100/m/${mock}/13/llm_mock/requests`;
  const home = mkdtempSync(join(tmpdir(), 'llmstream-claude-home-'));
  const work = mkdtempSync(join(tmpdir(), 'llmstream-claude-work-'));
  t.after(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  assert.equal((await fetch(recorded, { method: 'DELETE' })).status, 204, 'the mock records requests');
  const env = {
    PATH: process.env.PATH,
    SHELL: process.env.SHELL ?? '/bin/sh',
    HOME: home,
    TMPDIR: tmpdir(),
    ANTHROPIC_BASE_URL: `${BASE}/loop/anthropic/${mock}`,
    ANTHROPIC_API_KEY: 'sk-ant-e2e',
    ANTHROPIC_MODEL: 'e2e-upstream-model',
    ANTHROPIC_SMALL_FAST_MODEL: 'e2e-small-model',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  const { code, signal, stdout, stderr } = await run(
    claude.bin,
    ['-p', 'Add 40 and 2, then print the llmstream marker.', '--allowedTools', 'Bash(echo:*)', '--output-format', 'json'],
    { cwd: work, env, timeout: 150_000 },
  );
  assert.equal(code, 0, `claude exited with ${code ?? signal}\nstdout: ${stdout}\nstderr: ${stderr}`);
  const line = stdout.split('\n').find((l) => l.startsWith('{'));
  assert.ok(line, `no JSON result in ${stdout}`);
  const result = JSON.parse(line);
  assert.equal(result.is_error, false, line);
  assert.equal(result.subtype, 'success');
  assert.equal(result.result, 'The marker is llmstream-marker-42.', 'the answer after its own tool ran');
  assert.equal(result.num_turns, 2, 'one client-tool round trip');
  assert.deepEqual(result.permission_denials, []);
  const requests = await (await fetch(recorded)).json();
  // Claude Code's Bash call and its output, answering it, in its next request.
  const last = requests.at(-1);
  const call = last.messages.findLast((m) => m.role === 'assistant' && m.tool_calls?.some((c) => c.function.name === 'Bash'));
  assert.ok(call, `the Bash call went back upstream: ${JSON.stringify(last.messages.map((m) => m.role))}`);
  const bash = call.tool_calls.find((c) => c.function.name === 'Bash');
  const answer = last.messages.find((m) => m.role === 'tool' && m.tool_call_id === bash.id);
  assert.match(answer?.content ?? '', /^llmstream-marker-42(\n|$)/, 'the shell computed the marker');
  return requests;
}

// Claude Code sends no mcp-client beta: it is shown the rounds' text, not
// the gateway's MCP blocks (docs/protocols.md), and goes on with its own
// tool as on any route.
test('claude -p on a route that also has server tools: a server round, then its own Bash call, then the answer', { skip: claude.skip ?? false, timeout: 180_000 }, async (t) => {
  const requests = await claudeOnLoop(t, 'loop_claude_code_seq');
  assert.equal(requests.length, 3, 'round 1, the gateway’s round 2 with the server result, Claude Code’s next request');
  const names = requests[0].tools.map((tool) => tool.function.name);
  assert.ok(names.includes('Bash') && names.includes('ev_get-sum'), `tools offered: ${names}`);
  const sum = requests[1].messages.find((m) => m.role === 'tool');
  assert.equal(sum.content, 'The sum of 40 and 2 is 42.', 'the server ran the call and the model read its result');
});

test('claude -p on a route that also has server tools: a mixed turn (a server call and its Bash call in one round)', { skip: claude.skip ?? false, timeout: 180_000 }, async (t) => {
  const requests = await claudeOnLoop(t, 'loop_claude_code_mixed');
  assert.equal(requests.length, 2, 'the mixed round, Claude Code’s next request');
});
