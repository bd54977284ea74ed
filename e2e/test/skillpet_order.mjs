// A checker of a skillpet SSE stream, written from specs/002 §3 (the
// event protocol: §3.1 the transport, §3.2 the basic events, §3.3 the tool
// events, §3.6 the control events) and §3.9 (the order events are sent
// in), for the agent loop's streams (CONTRACT.md §12). It knows nothing of
// llmstream: what a @skillpet/chat frontend relies on, and nothing more.
// checkSkillpet returns the rules a stream breaks, one line each.

const KNOWN = new Set([
  'token', 'thinking', 'thinking_done', 'status', 'round_start', // §3.2
  'tool_start', 'tool_result', 'tool_args_heartbeat', // §3.3
  'ask_user', // §3.4
  'agent_thinking', 'agent_token', 'agent_tool_start', 'agent_tool_result', 'agent_round', // §3.5
  'resource_updated', 'done', 'error', // §3.6
  'image_generating', 'image_generation', 'resource', // §3.7, §3.8
]);

const str = (v) => typeof v === 'string';

/** shape checks the payload of one event (§3.2, §3.3, §3.6). */
function shape(e) {
  const d = e.data;
  if (d === null || typeof d !== 'object' || Array.isArray(d)) return 'data is not a JSON object';
  switch (e.event) {
    case 'token':
    case 'thinking':
      return str(d.content) ? '' : 'content is not a string';
    case 'status':
      return str(d.message) ? '' : 'message is not a string';
    case 'round_start':
      return Number.isInteger(d.round) ? '' : 'round is not an integer';
    case 'tool_start':
      if (!str(d.id) || !str(d.name) || !str(d.label)) return 'id, name and label must be strings';
      return d.args === undefined || (typeof d.args === 'object' && d.args !== null) ? '' : 'args is not an object';
    case 'tool_result':
      if (!str(d.id) || !str(d.name) || !str(d.label) || !str(d.message)) return 'id, name, label and message must be strings';
      if (!['auto', 'interactive', 'ask_user'].includes(d.mode)) return `mode ${JSON.stringify(d.mode)}`;
      if (!['completed', 'error', 'awaiting_user'].includes(d.status)) return `status ${JSON.stringify(d.status)}`;
      return '';
    case 'tool_args_heartbeat':
      return d.status === 'generating_tool_args' ? '' : 'status is not generating_tool_args';
    case 'done':
      return str(d.conversationId) ? '' : 'conversationId is not a string';
    case 'error':
      return str(d.message) ? '' : 'message is not a string';
  }
  return '';
}

/**
 * checkSkillpet checks events ({event, data, raw}, in order, as
 * eventsource-parser gives them) against specs/002 §3:
 * - §3.1: each data line is one line of JSON; the event is one §3 knows.
 * - §3.2: `thinking_done` only after `thinking`, and `token`s after it are
 *   the reply: no `thinking` after a round's reply began or after its
 *   `thinking_done`; `round_start` from round 2 on, counting up by one.
 * - §3.3: `tool_result` answers an earlier `tool_start` of the same `id`,
 *   once; `ask_user` has no `tool_start`; every automatic tool started in a
 *   round has its result before the next round starts and before `done`
 *   (the card must not spin forever).
 * - §3.6: the stream ends with `done` ("必须在 SSE 流结束前发送") or, failing,
 *   with `error` ("发送后应调用 res.end()"): one of them, last.
 */
export function checkSkillpet(events) {
  const bad = [];
  const at = (i, e, msg) => bad.push(`#${i} ${e.event}: ${msg}`);
  let round = 1;
  let thinking = false; // a thinking event in this round
  let thinkingDone = false;
  let replied = false; // a token in this round
  const started = new Map(); // id -> {name, result}
  let ended = -1;
  events.forEach((e, i) => {
    if (ended >= 0) at(i, e, `after the stream's ${events[ended].event}`);
    if (e.raw !== undefined && e.raw.includes('\n')) at(i, e, 'data is more than one line');
    if (!KNOWN.has(e.event)) at(i, e, 'not an event of specs/002 §3');
    const s = shape(e);
    if (s) at(i, e, s);
    switch (e.event) {
      case 'thinking':
        if (replied || thinkingDone) at(i, e, 'thinking after the reply began');
        thinking = true;
        break;
      case 'thinking_done':
        if (!thinking) at(i, e, 'thinking_done without thinking');
        thinkingDone = true;
        break;
      case 'token':
        replied = true;
        break;
      case 'round_start':
        if (e.data.round !== round + 1) at(i, e, `round ${e.data.round} after round ${round}`);
        for (const [id, t] of started) if (!t.result) at(i, e, `tool ${t.name} (${id}) has no result before the next round`);
        round = e.data.round;
        thinking = thinkingDone = replied = false;
        break;
      case 'tool_start':
        if (e.data.name === 'ask_user') at(i, e, 'ask_user sends no tool_start');
        if (started.has(e.data.id)) at(i, e, `a second tool_start for ${e.data.id}`);
        started.set(e.data.id, { name: e.data.name, result: false });
        break;
      case 'tool_result': {
        const t = started.get(e.data.id);
        if (!t && e.data.mode !== 'ask_user') at(i, e, `no tool_start for ${e.data.id}`);
        if (t?.result) at(i, e, `a second tool_result for ${e.data.id}`);
        if (t && t.name !== e.data.name) at(i, e, `name ${e.data.name}, its tool_start's is ${t.name}`);
        if (t) t.result = true;
        break;
      }
      case 'done':
        for (const [id, t] of started) if (!t.result) at(i, e, `tool ${t.name} (${id}) never got its result`);
        ended = i;
        break;
      case 'error':
        ended = i;
        break;
    }
  });
  if (ended < 0) bad.push('the stream ended without done or error');
  return bad;
}
