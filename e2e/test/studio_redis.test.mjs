// A parked call across two Caddy instances that share a Redis store
// (CONTRACT §13, issue 19 "How we will know"): instance A asks the user
// (the demo's choose_direction, an MCP elicitation of the current revision,
// parked as data), A is killed, and instance B takes the answer on
// /tool-response, runs the call again with it and streams the rest; init on
// B shows the turn as specs/002 §4 stores it; a second answer is refused.
// The instances run a Caddyfile written here (two ports, admin off) with the
// /agent/studio route's tools; redis-server is started here too (skipped
// with a note when it is not installed, as the Go Redis tests are).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postSSE, only } from './sse.mjs';
import { parseHistoryMessages } from './history.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const redisBin = ['redis-server', 'valkey-server'].find((b) => spawnSync('sh', ['-c', `command -v ${b}`]).status === 0);
const REDIS_PORT = 18290;
const PORTS = { a: 18291, b: 18292 };
const dir = mkdtempSync(join(tmpdir(), 'llmstream-studio-redis-'));
const procs = {};
const logs = {};

/** site is one instance's Caddyfile: the studio tools, the Redis store, its own mock. */
const site = (port) => `{
	auto_https off
	admin off
}
http://127.0.0.1:${port} {
	handle /agent/studio/* {
		llm_stream {
			request_format skillpet
			protocol skillpet
			model llm-mock
			tools {
				mcp demo {
					builtin demo
					allow choose_direction get_weather
					label choose_direction "选择方向"
				}
			}
			conversation {
				store redis redis://127.0.0.1:${REDIS_PORT}
			}
		}
		rewrite * /mock/v1/chat/completions
		reverse_proxy 127.0.0.1:${port} {
			flush_interval -1
		}
	}
	handle /mock/* {
		llm_mock {
			by_round
			interval 0
			reply_text "先选一个方向。"
			tool_calls_file examples/tools/studio_choose_call.json
			reply_text "好的：{{tool_result}}"
			tool_calls_file examples/tools/no_calls.json
		}
	}
}
`;

/** start runs name's process and waits until url answers (any status). */
async function start(name, cmd, args, url) {
  logs[name] = '';
  const p = spawn(cmd, args, { cwd: root, env: { ...process.env, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout.on('data', (b) => { logs[name] = (logs[name] + b).slice(-4000); });
  p.stderr.on('data', (b) => { logs[name] = (logs[name] + b).slice(-4000); });
  procs[name] = p;
  for (let i = 0; i < 150; i++) {
    if (exited(p)) throw new Error(`${name} exited:\n${logs[name]}`);
    if (await url()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not start:\n${logs[name]}`);
}

/** exited reports whether p ended (a killed process has a signalCode, no exitCode). */
const exited = (p) => p.exitCode !== null || p.signalCode !== null;

async function stop(name) {
  const p = procs[name];
  if (!p || exited(p)) return;
  const done = new Promise((r) => p.once('exit', r));
  p.kill('SIGKILL');
  await done;
}

const answers = (port) => async () => {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/none`, { signal: AbortSignal.timeout(500) });
    await res.arrayBuffer();
    return true;
  } catch {
    return false;
  }
};

before(async () => {
  if (!redisBin) return;
  await start('redis', redisBin, ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], async () => {
    const net = await import('node:net');
    return new Promise((resolve) => {
      const s = net.connect(REDIS_PORT, '127.0.0.1', () => { s.end(); resolve(true); });
      s.on('error', () => resolve(false));
    });
  });
  for (const [name, port] of Object.entries(PORTS)) {
    const file = join(dir, `Caddyfile.${name}`);
    writeFileSync(file, site(port));
    await start(name, join(root, 'caddy'), ['run', '--config', file, '--adapter', 'caddyfile'], answers(port));
  }
});

after(async () => {
  for (const name of Object.keys(procs)) await stop(name);
  rmSync(dir, { recursive: true, force: true });
});

const AUTH = { authorization: 'Bearer redis-user' };

test('an interactive call parked on one instance is answered on the other after the first was killed', { skip: redisBin ? false : 'redis-server is not installed (apt-get install redis-server)' }, async () => {
  const project = `redis-${Date.now()}`;
  const base = (n) => `http://127.0.0.1:${PORTS[n]}/agent/studio`;
  const first = await postSSE(`${base('a')}/stream`, { projectId: project, message: '写个故事' }, AUTH);
  assert.equal(first.res.status, 200);
  const waiting = only(first.events, 'tool_result')[0]?.data;
  assert.equal(waiting?.status, 'awaiting_user', JSON.stringify(first.events));
  assert.equal(first.events.at(-1).event, 'done');

  await stop('a');

  const answer = { projectId: project, toolCallId: waiting.id, toolName: 'choose_direction', optionId: 'scifi' };
  const second = await postSSE(`${base('b')}/tool-response`, answer, AUTH);
  assert.equal(second.res.status, 200);
  const result = only(second.events, 'tool_result')[0].data;
  assert.equal(result.status, 'completed');
  assert.match(result.message, /科幻\/未来 \(scifi\)/);
  const text = only(second.events, 'token').map((e) => e.data.content).join('');
  assert.match(text, /^好的：The user chose the direction 科幻\/未来/);

  const again = await fetch(`${base('b')}/tool-response`, { method: 'POST', headers: { 'content-type': 'application/json', ...AUTH }, body: JSON.stringify(answer) });
  assert.equal(again.status, 409);
  assert.equal((await again.json()).error, 'ALREADY_ANSWERED');

  const init = await (await fetch(`${base('b')}/init/${project}`, { headers: AUTH })).json();
  const history = parseHistoryMessages(init.messages);
  assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'tool', 'tool', 'assistant']);
  assert.equal(history[2].awaitingChoice, true);
  assert.equal(history[2].content, '请选择故事方向');
  assert.match(history[3].content, /科幻\/未来/);
  assert.match(history[4].content, /^好的：/);
});
