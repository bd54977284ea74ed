// Codex CLI (npm @openai/codex, pinned in package.json) against a
// chat-completions model behind llmstream: `codex exec` speaks the
// Responses API to the responses route, whose llm_mock answers the first
// request in ThinkingML (a <think> block, a phase, the answer) with an
// exec_command call, and the second with the final answer. Codex must run
// the command, send its output back (a function_call_output, which
// reaches the upstream as a tool message) and finish the turn with the
// answer, reasoning kept out of it: the phase reaches Codex as a
// reasoning summary (exec --json reports it), the <think> text as raw
// reasoning (shown only with show_raw_agent_reasoning, and never in
// --json).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import { BASE, read } from './expected.mjs';

/** The fake upstreams' listener (e2e/Caddyfile). */
const MOCKS_BASE = process.env.LLMSTREAM_E2E_MOCKS ?? 'http://127.0.0.1:18100';
const recorded = (mock) => `${MOCKS_BASE}/m/${mock}/13/llm_mock/requests`;
const CODEX = fileURLToPath(new URL('../node_modules/.bin/codex', import.meta.url));
const MARKER = 'llmstream-codex-e2e';

/**
 * config is Codex's config.toml: a model provider speaking the Responses
 * API (wire_api "responses") at the llmstream route, its key from an
 * environment variable; no approvals and no sandbox for exec (the one
 * command is the test's own, in a temporary directory; Codex's sandboxes
 * need kernel features a container may lack); no retries, so that a
 * protocol error fails the test instead of being retried; no update
 * check, analytics or feedback, so that Codex talks to 127.0.0.1 only.
 */
const config = (baseURL, websockets = false) => `
model = "e2e-model"
model_provider = "llmstream"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.llmstream]
name = "llmstream"
base_url = "${baseURL}"
wire_api = "responses"
env_key = "LLMSTREAM_E2E_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = ${websockets}
`;

/** run runs codex with args and returns its exit code, stdout and stderr. */
function run(args, env, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(CODEX, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`codex did not finish in ${timeoutMs}ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// Over HTTP, and in WebSocket mode (supports_websockets: Codex opens
// ws://…/responses and sends response.create frames; CONTRACT §14).
for (const [mode, mock, websockets] of [['HTTP', 'codex', false], ['WebSocket', 'codex_ws', true]]) {
test(`codex exec runs a tool call and finishes the turn through the responses route (${mode})`, { timeout: 180_000 }, async () => {
  const RECORDED = recorded(mock);
  assert.ok(existsSync(CODEX), `codex is installed (${CODEX}); run npm ci in e2e/`);
  const home = mkdtempSync(join(tmpdir(), 'llmstream-codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'llmstream-codex-work-'));
  try {
    writeFileSync(join(home, 'config.toml'), config(`${BASE}/responses/auto/${mock}/13/v1`, websockets));
    const cleared = await fetch(RECORDED, { method: 'DELETE' });
    assert.equal(cleared.status, 204, 'the codex mock records');

    // Only what Codex needs: no OpenAI key or base URL of the machine's.
    const env = { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, LLMSTREAM_E2E_KEY: 'sk-e2e', TERM: 'dumb' };
    const { code, stdout, stderr } = await run(
      ['exec', '--json', '--skip-git-repo-check', '-C', work, 'Prove that you can run a command here.'],
      env,
      150_000,
    );
    const events = stdout
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => JSON.parse(l));
    const detail = `exit ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`;
    assert.equal(code, 0, detail);

    const completed = events.filter((e) => e.type === 'item.completed').map((e) => e.item);
    const commands = completed.filter((i) => i.type === 'command_execution');
    assert.equal(commands.length, 1, `one command ran\n${detail}`);
    assert.equal(commands[0].exit_code, 0, detail);
    assert.match(commands[0].aggregated_output, new RegExp(MARKER), detail);
    assert.equal(readFileSync(join(work, 'proof.txt'), 'utf8'), MARKER, 'the command ran in the work directory');

    const messages = completed.filter((i) => i.type === 'agent_message').map((i) => i.text);
    assert.equal(messages.at(-1), read('codex_reply_2.txt'), `the final answer\n${detail}`);
    for (const m of messages) {
      assert.ok(!/<\/?(think|thinking|phase|final)>|The user wants proof|Run one command/.test(m), `no reasoning or markup in ${JSON.stringify(m)}`);
    }
    const reasoning = completed.filter((i) => i.type === 'reasoning').map((i) => i.text);
    assert.ok(
      reasoning.some((r) => r.includes('Run one command in the work directory and show its output.')),
      `the phase is a reasoning item: ${JSON.stringify(reasoning)}\n${detail}`,
    );
    const turn = events.find((e) => e.type === 'turn.completed');
    assert.ok(turn, `the turn completed\n${detail}`);
    assert.ok(turn.usage.input_tokens > 0 && turn.usage.output_tokens > 0, `usage ${JSON.stringify(turn.usage)}`);

    // What went upstream: two chat requests; the second carries the call
    // and, as a tool message, the command's output.
    const bodies = await (await fetch(RECORDED)).json();
    assert.equal(bodies.length, 2, `two upstream requests: ${JSON.stringify(bodies.map((b) => b.messages.length))}`);
    const [first, second] = bodies;
    assert.ok(
      first.tools.every((t) => t.type === 'function' && t.function?.name),
      `only function tools go upstream (web_search is left out): ${JSON.stringify(first.tools.map((t) => t.type))}`,
    );
    const toolNames = first.tools.map((t) => t.function.name);
    assert.ok(toolNames.includes('exec_command'), `Codex's shell tool went upstream: ${toolNames}`);
    assert.ok(first.stream && first.stream_options.include_usage);
    const call = second.messages.find((m) => m.role === 'assistant' && m.tool_calls);
    assert.ok(call, `the call went back: ${JSON.stringify(second.messages.slice(-3))}`);
    assert.equal(call.tool_calls[0].function.name, 'exec_command');
    assert.ok(!String(call.content ?? '').includes('<think>'), 'the replayed answer holds no reasoning');
    const output = second.messages.find((m) => m.role === 'tool');
    assert.equal(output?.tool_call_id, call.tool_calls[0].id, 'the function_call_output answers the call');
    assert.match(output.content, new RegExp(MARKER), 'the command output reached the upstream');
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
});
}

/**
 * codexOnLoop runs `codex exec` against /loop/responses/<mock>, a route
 * whose tools the gateway runs (server-everything's get-sum) beside
 * Codex's own, and returns what it did and what went upstream.
 */
async function codexOnLoop(mock) {
  const requests = recorded(mock);
  const home = mkdtempSync(join(tmpdir(), 'llmstream-codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'llmstream-codex-work-'));
  try {
    writeFileSync(join(home, 'config.toml'), config(`${BASE}/loop/responses/${mock}/v1`));
    assert.equal((await fetch(requests, { method: 'DELETE' })).status, 204, 'the mock records');
    const env = { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, LLMSTREAM_E2E_KEY: 'sk-e2e', TERM: 'dumb' };
    const { code, stdout, stderr } = await run(['exec', '--json', '--skip-git-repo-check', '-C', work, 'Add 40 and 2, then prove you can run a command.'], env, 150_000);
    const events = stdout.split('\n').filter((l) => l.trim().startsWith('{')).map((l) => JSON.parse(l));
    const detail = `exit ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`;
    const proof = existsSync(join(work, 'proof.txt')) ? readFileSync(join(work, 'proof.txt'), 'utf8') : undefined;
    const bodies = await (await fetch(requests)).json();
    return { code, events, detail, proof, bodies };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

/** checkCodexTurn: Codex ran its command and finished its turn. */
function checkCodexTurn({ code, events, detail, proof }) {
  assert.equal(code, 0, detail);
  const completed = events.filter((e) => e.type === 'item.completed').map((e) => e.item);
  const commands = completed.filter((i) => i.type === 'command_execution');
  assert.equal(commands.length, 1, `one command ran\n${detail}`);
  assert.equal(commands[0].exit_code, 0, detail);
  assert.equal(proof, MARKER, 'the command ran in the work directory');
  const messages = completed.filter((i) => i.type === 'agent_message').map((i) => i.text);
  assert.equal(messages.at(-1), 'The proof is written, and 40 + 2 is 42.', `the final answer\n${detail}`);
  assert.ok(events.some((e) => e.type === 'turn.completed'), `the turn completed\n${detail}`);
  assert.ok(!events.some((e) => e.type === 'turn.failed' || e.type === 'error'), detail);
}

/** toolResults lists a recorded request's tool results: [name, content]. */
function toolResults(body) {
  const names = new Map();
  for (const m of body.messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  return body.messages.filter((m) => m.role === 'tool').map((m) => [names.get(m.tool_call_id), String(m.content)]);
}

test('codex exec on a route that also has server tools: a server round, then its own command, then the answer', { timeout: 180_000 }, async () => {
  assert.ok(existsSync(CODEX), `codex is installed (${CODEX}); run npm ci in e2e/`);
  const turn = await codexOnLoop('loop_codex_seq');
  checkCodexTurn(turn);
  // Upstream: round 1 (Codex's tools and the server's), round 2 with the
  // server call's result (the gateway's loop), then Codex's next request
  // with its command's output.
  const { bodies, detail } = turn;
  assert.equal(bodies.length, 3, `three upstream requests\n${detail}`);
  const offered = bodies[0].tools.map((t) => t.function.name);
  assert.ok(offered.includes('exec_command') && offered.includes('ev_get-sum'), `tools offered: ${offered}`);
  assert.deepEqual(toolResults(bodies[1]), [['ev_get-sum', 'The sum of 40 and 2 is 42.']]);
  // Codex keeps the server round's text in its history but not the
  // mcp_call item (codex 0.169 drops items it does not know): the model
  // reads the server's result in the gateway's round 2, not again on
  // Codex's next request.
  const last = toolResults(bodies[2]);
  const out = last.find(([name]) => name === 'exec_command');
  assert.ok(out && out[1].includes(MARKER), `the command output reached the upstream: ${JSON.stringify(last)}`);
});

test('codex exec on a route that also has server tools: a mixed turn (a server call and its command in one round)', { timeout: 180_000 }, async () => {
  assert.ok(existsSync(CODEX), `codex is installed (${CODEX}); run npm ci in e2e/`);
  const turn = await codexOnLoop('loop_codex_mixed');
  checkCodexTurn(turn);
  const { bodies, detail } = turn;
  assert.equal(bodies.length, 2, `two upstream requests: the mixed round, Codex's next\n${detail}`);
  const last = toolResults(bodies[1]);
  const out = last.find(([name]) => name === 'exec_command');
  assert.ok(out && out[1].includes(MARKER), `the command output reached the upstream: ${JSON.stringify(last)}`);
});
