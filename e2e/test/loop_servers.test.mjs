// The agent loop through Caddy with real MCP servers (CONTRACT.md §12,
// issue 18 "How we will know"): @modelcontextprotocol/server-everything
// over stdio (started and supervised by Caddy) and over streamable HTTP
// (started by run.sh), and @modelcontextprotocol/server-filesystem, on
// the skillpet /loop route, whose events say everything the loop does
// (tool_start, status for progress, tool_result with what the model was
// given, round_start, the next round's tokens). The by_round mocks script
// the model: round 1 calls a tool, round 2 quotes the result it was given.
// Every stream is also checked against specs/002 §3.9.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { loopURL, notes, roundTexts, serverPIDs, streamSSE, waitFor } from './loop.mjs';
import { checkSkillpet } from './skillpet_order.mjs';
import { BASE } from './expected.mjs';

const body = (message = 'Run the tool.') => ({ projectId: 'loop-e2e', message });

/** turn runs one skillpet turn on the /loop route with mock. */
async function turn(mock, options) {
  const { res, events } = await streamSSE(loopURL('skillpet', mock, '/stream'), body(), options);
  assert.equal(res.status, 200);
  assert.deepEqual(checkSkillpet(events), [], `specs/002 §3.9 in ${mock}: ${events.map((e) => e.event).join(' ')}`);
  return events;
}

/** ev returns the first event named name, or fails. */
const ev = (events, name) => {
  const e = events.find((x) => x.event === name);
  assert.ok(e, `no ${name} in ${events.map((x) => x.event).join(' ')}`);
  return e;
};

/** loopEvents keeps the events a tool round shows, in order. */
const loopEvents = (events) => events.map((e) => e.event).filter((n) => !['token', 'tool_args_heartbeat'].includes(n));

for (const [transport, prefix] of [['stdio', 'ev_'], ['http', 'evh_']]) {
  describe(`server-everything over ${transport} through the loop`, () => {
    test('a long-running operation: its progress reaches the client while it runs, round 2 quotes its result', async () => {
      const events = await turn(`progress_${transport}`);
      const names = loopEvents(events);
      assert.equal(names[0], 'tool_start');
      assert.deepEqual(names.slice(-3), ['tool_result', 'round_start', 'done']);
      const progress = events.filter((e) => e.event === 'status');
      assert.ok(progress.length >= 2, `progress reports: ${JSON.stringify(progress.map((e) => e.data))}`);
      assert.match(progress[0].data.message, /\(\d\/4\)$/, 'progress counts the steps');
      const start = ev(events, 'tool_start');
      assert.equal(start.data.name, `${prefix}trigger-long-running-operation`);
      assert.equal(start.data.label, 'Trigger Long Running Operation Tool', "the server's title");
      assert.deepEqual(start.data.args, { duration: 2, steps: 4 });
      const result = ev(events, 'tool_result');
      assert.equal(result.data.id, start.data.id);
      assert.equal(result.data.status, 'completed');
      assert.equal(result.data.message, 'Long running operation completed. Duration: 2 seconds, Steps: 4.');
      // While it runs: the first report arrived well before the result
      // (the steps are 500ms apart), not in a burst with it.
      assert.ok(result.at - progress[0].at > 400, `first progress at ${progress[0].at}ms, result at ${result.at}ms`);
      assert.deepEqual(roundTexts(events), [`Round 1 of progress_${transport}.`, `Round 2 saw: ${result.data.message}`]);
    });

    test('a tool that errors: the model reads the error, the turn goes on', async () => {
      const events = await turn(`error_${transport}`);
      const result = ev(events, 'tool_result');
      assert.equal(result.data.status, 'error');
      assert.match(result.data.message, /^Error: .*Invalid resourceId: 0\. Must be a finite positive integer\./s);
      assert.deepEqual(roundTexts(events), [`Round 1 of error_${transport}.`, `Round 2 saw: ${result.data.message}`]);
      assert.equal(events.at(-1).event, 'done');
    });

    test('a large result is cut at max_result_bytes with a marker the model reads', async () => {
      const events = await turn(`large_${transport}`);
      const result = ev(events, 'tool_result');
      assert.equal(result.data.status, 'completed');
      const msg = result.data.message;
      assert.ok(Buffer.byteLength(msg) <= 2048, `${Buffer.byteLength(msg)} bytes given to the model, max_result_bytes is 2KiB`);
      assert.ok(msg.startsWith('Echo: BEGIN 0123456789'), msg.slice(0, 40));
      // "Echo: " + the 9,010-byte message the model sent.
      assert.match(msg, /\n\[cut: the result has 9016 bytes; the first ones are shown\]$/);
      const [, round2] = roundTexts(events);
      assert.ok(round2.startsWith('Round 2 saw: Echo: BEGIN 0123456789'), round2.slice(0, 60));
      assert.ok(round2.endsWith('[cut: the result has 9016 bytes; the first ones are shown]'), `round 2 quotes the marker: ${round2.slice(-80)}`);
    });

    test('a server killed mid-call: the model gets an error result, the stream ends cleanly, the server comes back', async () => {
      const tag = transport === 'stdio' ? 'kill' : undefined;
      const pidfile = process.env.E2E_MCP_KILL_PIDFILE;
      const before = tag ? serverPIDs(tag) : [Number(readFileSync(pidfile, 'utf8'))];
      assert.equal(before.length, 1, `one server to kill: ${before}`);
      let killed = false;
      const { res, events } = await streamSSE(`${BASE}/loopkill/skillpet/kill_${transport}/stream`, body(), {
        onEvent: (e) => {
          // Killed at its first progress report: the call is running.
          if (e.event === 'status' && !killed) {
            killed = true;
            process.kill(before[0], 'SIGKILL');
          }
        },
      });
      assert.equal(res.status, 200);
      assert.ok(killed, `the call reported progress: ${events.map((e) => e.event).join(' ')}`);
      assert.deepEqual(checkSkillpet(events), []);
      const result = ev(events, 'tool_result');
      assert.equal(result.data.status, 'error');
      assert.match(result.data.message, /^Error: /);
      assert.deepEqual(loopEvents(events).slice(-3), ['tool_result', 'round_start', 'done'], 'the stream ends cleanly');
      assert.equal(roundTexts(events)[1], `Round 2 saw: ${result.data.message}`, 'the model read the failure');

      // Restarted (stdio: by Caddy's supervision; HTTP: run.sh's loop),
      // and the route's next request runs the server's tools again.
      if (tag) await waitFor('the stdio server to be restarted', () => serverPIDs(tag).some((p) => p !== before[0]));
      const sum = await waitFor('the tools to be offered again', async () => {
        const { events } = await streamSSE(`${BASE}/loopkill/skillpet/sum_${transport}/stream`, body());
        const r = events.find((e) => e.event === 'tool_result');
        return r?.data.status === 'completed' ? { r, events } : undefined;
      });
      assert.equal(sum.r.data.message, 'The sum of 40 and 2 is 42.');
      assert.deepEqual(checkSkillpet(sum.events), []);
    });
  });
}

describe('server-filesystem through the loop', () => {
  test('a real read of a file in a temporary directory, quoted by round 2', async () => {
    const events = await turn('files');
    const start = ev(events, 'tool_start');
    assert.equal(start.data.name, 'fs_read_text_file');
    assert.equal(start.data.label, 'Read a file', 'the label the route sets');
    const result = ev(events, 'tool_result');
    assert.equal(result.data.status, 'completed');
    const text = notes();
    assert.match(text, /^llmstream e2e notes, run \d+-\d+: the secret word is swordfish\.\n$/);
    assert.equal(result.data.message, text);
    assert.deepEqual(roundTexts(events), ['Round 1 of files.', `Round 2 saw: ${text}`]);
  });
});
