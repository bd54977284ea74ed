// The seed agents' features end to end (CONTRACT §13, issue 19), against the
// default Caddyfile's /agent/studio route: llm_mock and the built-in demo MCP
// server, no Node tool server, no API key. A skillpet conversation: an
// interactive tool (choose_direction, an MCP elicitation of the current
// revision) ends the stream awaiting the user; Caddy restarts; the parked
// call is answered on /tool-response from the new process, which streams the
// continuation (the plan resource's resource_updated, the cover images, the
// editor sub-agent's nested stream); the answer is refused a second time and
// from another user; a cover is picked on /image-select; and after another
// restart init restores the tool card, the choice, the sub-agent's output and
// the images as specs/002 §4 stores them, read with the seed's
// parseHistoryMessages rules (history.mjs).
//
// This file starts its own Caddy with ../Caddyfile (ports 8080 and
// 9101-9110), so it needs them free: run it inside a private network
// namespace, or with no ./xcaddy.sh run going.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postSSE, names, only } from './sse.mjs';
import { parseHistoryMessages } from './history.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BASE = 'http://127.0.0.1:8080/agent/studio';
const ALICE = { authorization: 'Bearer studio-alice' };
const BOB = { authorization: 'Bearer studio-bob' };
const data = mkdtempSync(join(tmpdir(), 'llmstream-studio-'));
let caddy;
let caddyLog = '';

/** startCaddy runs ./caddy with the default Caddyfile and waits until it answers. */
async function startCaddy() {
  caddyLog = '';
  caddy = spawn(join(root, 'caddy'), ['run', '--config', 'Caddyfile', '--adapter', 'caddyfile'], {
    cwd: root,
    env: { ...process.env, XDG_DATA_HOME: data, XDG_CONFIG_HOME: data },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  caddy.stderr.on('data', (b) => { caddyLog = (caddyLog + b).slice(-4000); });
  const exited = new Promise((resolve) => caddy.once('exit', resolve));
  for (let i = 0; i < 150; i++) {
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 100))]);
    if (code !== undefined) throw new Error(`Caddy with the default Caddyfile exited (ports 8080/9101-9110 in use?):\n${caddyLog}`);
    try {
      const res = await fetch('http://127.0.0.1:8080/', { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 404) return;
    } catch { /* not yet */ }
  }
  throw new Error(`Caddy did not answer on :8080:\n${caddyLog}`);
}

/** stopCaddy stops it and waits for it to exit. */
async function stopCaddy() {
  if (!caddy || caddy.exitCode !== null || caddy.signalCode !== null) return;
  const done = new Promise((resolve) => caddy.once('exit', resolve));
  caddy.kill('SIGTERM');
  await done;
}

before(startCaddy);
after(async () => {
  await stopCaddy();
  rmSync(data, { recursive: true, force: true });
});

/** postJSON posts body and returns the status and the parsed JSON answer. */
async function postJSON(url, body, headers) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const one = (events, name) => {
  const found = only(events, name);
  assert.equal(found.length, 1, `one ${name} in ${names(events).join(' ')}`);
  return found[0].data;
};

test('a skillpet conversation with an interactive tool, a resource, images and a sub-agent, across restarts', async () => {
  const project = `studio-${Date.now()}`;

  // 1. The interactive tool waits: the stream ends awaiting the user.
  const first = await postSSE(`${BASE}/stream`, { projectId: project, message: '写个小猫的故事' }, ALICE);
  assert.equal(first.res.status, 200);
  assert.deepEqual(first.errors, []);
  assert.deepEqual(only(first.events, 'tool_start', 'tool_result', 'done').map((e) => e.event), ['tool_start', 'tool_result', 'done']);
  const waiting = one(first.events, 'tool_result');
  assert.equal(waiting.name, 'choose_direction');
  assert.equal(waiting.label, '选择方向');
  assert.equal(waiting.mode, 'interactive');
  assert.equal(waiting.status, 'awaiting_user');
  assert.equal(waiting.message, '请选择故事方向');
  assert.deepEqual(waiting.options.map((o) => o.id), ['fantasy', 'scifi', 'urban']);
  assert.equal(only(first.events, 'thinking').length, 0, 'no thinking without enableThinking: true');

  // 2. Caddy restarts: the call was parked by a server that asks through a
  // retried request, so it is only data in the conversation's store.
  await stopCaddy();
  await startCaddy();

  // Another user cannot answer it.
  const answer = { projectId: project, toolCallId: waiting.id, toolName: 'choose_direction', optionId: 'fantasy' };
  const foreign = await postJSON(`${BASE}/tool-response`, answer, BOB);
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.error, 'NOT_WAITING');
  // An option the call did not offer is refused, and leaves it waiting.
  const wrong = await postJSON(`${BASE}/tool-response`, { ...answer, optionId: 'horror' }, ALICE);
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error, 'INVALID_OPTION');

  // 3. The answer continues the turn on its own stream.
  const second = await postSSE(`${BASE}/tool-response`, answer, ALICE);
  assert.equal(second.res.status, 200);
  assert.deepEqual(second.errors, []);
  const ev = second.events;
  assert.equal(ev.at(-1).event, 'done');
  const results = only(ev, 'tool_result').map((e) => e.data);
  assert.equal(results[0].id, waiting.id);
  assert.equal(results[0].status, 'completed');
  assert.match(results[0].message, /玄幻\/修仙 \(fantasy\)/);
  // The plan resource changed while the turn streamed.
  const plan = one(ev, 'resource_updated');
  assert.equal(plan.key, 'bookPlan');
  assert.equal(plan.snapshot.title, '小猫的冒险');
  assert.equal(plan.snapshot.status, 'writing');
  // The covers: image_generating, then image_generation to pick one of two.
  const generating = one(ev, 'image_generating');
  const images = one(ev, 'image_generation');
  assert.ok(names(ev).indexOf('image_generating') < names(ev).indexOf('image_generation'));
  assert.equal(images.id, generating.id);
  assert.equal(images.mode, 'single_select');
  assert.equal(images.images.length, 2);
  // The image bytes are served by llmstream, to this user.
  const png = await fetch(new URL(images.images[0].url, BASE), { headers: ALICE });
  assert.equal(png.status, 200);
  assert.equal(png.headers.get('content-type'), 'image/png');
  assert.deepEqual([...new Uint8Array(await png.arrayBuffer()).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  const stolen = await fetch(new URL(images.images[0].url, BASE), { headers: BOB });
  assert.equal(stolen.status, 404, 'another user does not get the image');
  // The sub-agent: tool_start names it, its tokens come nested in the call.
  const consult = only(ev, 'tool_start').map((e) => e.data).find((t) => t.name === 'consult_agent');
  assert.ok(consult, 'consult_agent was called');
  assert.equal(consult.agentId, 'editor');
  assert.equal(consult.label, '请教编辑');
  const agentTokens = only(ev, 'agent_token').map((e) => e.data);
  assert.ok(agentTokens.length > 0);
  assert.ok(agentTokens.every((t) => t.id === consult.id && t.agentId === 'editor' && t.agentName === '编辑'));
  const advice = agentTokens.map((t) => t.t).join('');
  assert.equal(advice, '让阿橘在月光下找到回家的路，结尾留一点温暖。\n');
  assert.equal(results.find((r) => r.id === consult.id).message, advice.trim());
  const answerText = only(ev, 'token').map((e) => e.data.content).join('');
  assert.match(answerText, /编辑的主意：让阿橘在月光下找到回家的路/);

  // 4. Answered once: a second answer is refused.
  const again = await postJSON(`${BASE}/tool-response`, answer, ALICE);
  assert.equal(again.status, 409, JSON.stringify(again.body));
  assert.equal(again.body.error, 'ALREADY_ANSWERED');
  assert.ok(again.body.message);

  // 5. The user picks the second cover.
  const pick = await postJSON(`${BASE}/image-select/${project}`, { blockId: images.id, selectedImageIds: [images.images[1].id] }, ALICE);
  assert.equal(pick.status, 200, JSON.stringify(pick.body));
  const badPick = await postJSON(`${BASE}/image-select/${project}`, { blockId: images.id, selectedImageIds: ['img-9'] }, ALICE);
  assert.equal(badPick.status, 400);
  assert.equal(badPick.body.error, 'INVALID_SELECTION');

  // 6. After another restart, init restores it all as the component reads it.
  await stopCaddy();
  await startCaddy();
  const res = await fetch(`${BASE}/init/${project}`, { headers: ALICE });
  assert.equal(res.status, 200);
  const init = await res.json();
  assert.deepEqual(init.subAgents, [{ id: 'editor', name: '编辑' }]);
  assert.equal(init.capabilities.imageGeneration.enabled, true);
  assert.equal(init.capabilities.search.enabled, true);
  const history = parseHistoryMessages(init.messages);
  assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'tool', 'tool', 'tool', 'assistant']);
  assert.equal(history[0].content, '写个小猫的故事');
  // The tool card of round 1, waiting, then the choice.
  assert.equal(history[1].toolCalls[0].function.name, 'choose_direction');
  assert.equal(history[2].toolCallId, waiting.id);
  assert.equal(history[2].awaitingChoice, true);
  assert.equal(history[2].content, '请选择故事方向');
  assert.equal(history[3].toolCallId, waiting.id);
  assert.match(history[3].content, /玄幻\/修仙/);
  // Round 2's calls, their results, the image block with the pick, the
  // sub-agent's answer.
  assert.deepEqual(history[4].toolCalls.map((c) => c.function.name), ['update_plan', 'generate_image', 'consult_agent']);
  const block = history.find((m) => m.imageGeneration)?.imageGeneration;
  assert.ok(block, 'an image block');
  assert.equal(block.id, images.id);
  assert.equal(block.mode, 'single_select');
  assert.deepEqual(block.images.map((i) => i.id), images.images.map((i) => i.id));
  assert.deepEqual(block.selectedImageIds, [images.images[1].id]);
  const agentCard = history.find((m) => m.role === 'tool' && m.toolCallId === consult.id);
  assert.equal(agentCard.content, advice.trim());
  assert.match(history.at(-1).content, /编辑的主意：让阿橘在月光下找到回家的路/);
  // The resource update is live state, not history.
  assert.ok(!init.messages.some((m) => m.content.includes('bookPlan')));
  // Another user's init is empty.
  const bobs = await (await fetch(`${BASE}/init/${project}`, { headers: BOB })).json();
  assert.deepEqual(bobs.messages, []);
});
