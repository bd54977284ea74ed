// JSONSeq events (protocol jsonseq, specs/001) read with eventsource-parser:
// the spec's event order (§2), phase titles and texts, the answer in
// final_delta, serp_queries, and the extra tool_call / clarify / artifacts
// events of CONTRACT §5.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { CHUNKS, CUT_CHUNKS, CUTS, MOCKS, MOCK_MODEL, upstreamFinish, url } from './expected.mjs';
import { matchesPartial, partialAnswer } from './expected_cut.mjs';
import { checkSSEHeaders, names, only, postSSE } from './sse.mjs';

const body = { model: 'gpt-e2e', messages: [{ role: 'user', content: 'plan my week' }] };
const SYSTEM = ['status', 'heartbeat', 'error', 'completed'];

// One letter per event, to check the order of specs/001 §2 with a regular
// expression: S serp_summary, T thinking_start, P phase_start, D
// phase_delta, E thinking_end, F final_delta, Q serp_queries, X the extra
// events (tool_call, clarify, artifacts), Z final_end.
const LETTER = {
  serp_summary: 'S', thinking_start: 'T', phase_start: 'P', phase_delta: 'D', thinking_end: 'E',
  final_delta: 'F', serp_queries: 'Q', tool_call: 'X', clarify: 'X', artifacts: 'X', final_end: 'Z',
};

/**
 * checkOrder asserts specs/001 §2 as CONTRACT §7 guarantees it on the wire:
 * optional serp_summary; thinking_start, phases with their deltas,
 * thinking_end; final_delta one or more (an empty one when the model wrote
 * no answer text); optional serp_queries right before final_end; final_end
 * last; phase ids 1, 2, 3… (renumbered when the model wrote others) with
 * each phase_delta naming the open phase. The extra events (tool_call,
 * clarify, artifacts), which spec-following clients ignore, go out as they
 * come, after the thinking section and before serp_queries.
 */
function checkOrder(events, { thinking }) {
  const content = events.filter((e) => !SYSTEM.includes(e.event));
  const seq = content.map((e) => LETTER[e.event] ?? `?${e.event}?`).join('');
  const think = thinking ? '(?:TP(?:D|P)*E)' : '';
  assert.match(seq.replaceAll('X', ''), new RegExp(`^S?${think}F+Q?Z$`), `specs/001 §2 order (extra events left out) ${seq}`);
  assert.match(seq, new RegExp(`^S?${think}[FX]+Q?Z$`), `extra events between the thinking and serp_queries ${seq}`);
  let open = 0;
  for (const e of content) {
    if (e.event === 'phase_start') {
      assert.equal(e.data.id, open + 1, 'phase ids 1, 2, 3…');
      assert.match(e.data.title, /\S/, 'a phase has a title');
      open = e.data.id;
    }
    if (e.event === 'phase_delta') assert.equal(e.data.id, open, 'phase_delta names the open phase');
  }
}

/** phases collects {id, title, text} from the phase events. */
function phases(events) {
  const out = [];
  for (const e of events) {
    if (e.event === 'phase_start') out.push({ id: e.data.id, title: e.data.title, text: '' });
    if (e.event === 'phase_delta') out.at(-1).text += e.data.text;
  }
  return out;
}

const answerOf = (events) => only(events, 'final_delta').map((e) => e.data.text).join('');

describe('jsonseq via eventsource-parser', () => {
  for (const [mock, want] of Object.entries(MOCKS)) {
    for (const chunk of CHUNKS) {
      test(`${want.format}/${mock}/${chunk}`, async () => {
        const { res, events, errors } = await postSSE(url('jsonseq', want.format, mock, chunk), body, { 'x-request-id': 'e2e-jsonseq' });
        checkSSEHeaders(res, 'e2e-jsonseq');
        assert.deepEqual(errors, []);
        const messageID = events[0].data.message_id;
        for (const e of events) {
          assert.equal(e.data.message_id, messageID);
          assert.equal(e.data.request_id, 'e2e-jsonseq');
        }
        assert.deepEqual(events.slice(0, 3).map((e) => e.data.state), ['queued', 'working', 'routed']);
        assert.equal(events[2].data.resolved_model, MOCK_MODEL);

        // The wire numbers phases 1, 2, 3… whatever ids the model wrote.
        const wantPhases = (want.phases ?? []).map((p, i) => ({ ...p, id: i + 1 }));
        checkOrder(events, { thinking: wantPhases.length > 0 });
        assert.deepEqual(phases(events), wantPhases, 'phase titles and texts (no <think> text)');
        assert.equal(answerOf(events), want.answer ?? '', 'final_delta text is the answer, exactly');
        if (want.answer === null) assert.deepEqual(only(events, 'final_delta').map((e) => e.data.text), [''], 'no answer: one empty final_delta');
        assert.deepEqual(only(events, 'serp_summary').map((e) => e.data.text), want.summary ? [want.summary] : []);
        assert.deepEqual(only(events, 'serp_queries').map((e) => e.data.queries), want.queries ? [want.queries] : []);
        const calls = only(events, 'tool_call');
        assert.deepEqual(calls.map((e) => ({ name: e.data.name, input: e.data.args })), want.toolCalls);
        for (const c of calls) assert.match(c.data.id, /\S/);
        assert.deepEqual(
          only(events, 'clarify').map(({ data: { question, options, hint } }) => ({ question, options, hint })),
          want.clarify ? [want.clarify] : [],
        );
        assert.deepEqual(only(events, 'artifacts').map((e) => e.data.items), want.artifacts?.length ? [want.artifacts] : []);

        const end = events.at(-1);
        assert.equal(end.event, 'completed');
        assert.equal(only(events, 'completed', 'error').length, 1);
        assert.equal(end.data.metadata.finish_reason, upstreamFinish(mock));
        assert.deepEqual(end.data.metadata.violations.map((v) => v.code), want.jsonseqViolations ?? want.violations);
      });
    }
  }

  test('a jsonl reply is passed through event by event', async () => {
    const { events } = await postSSE(url('jsonseq', 'jsonl', 'jsonl', 1), body);
    const content = events.filter((e) => !SYSTEM.includes(e.event));
    const model = MOCKS.jsonl.events;
    // The same events in the same order; the deltas may be cut differently,
    // so compare the sequence with consecutive deltas merged.
    const merged = (list) =>
      list.reduce((out, e) => {
        const prev = out.at(-1);
        const key = { ...e };
        delete key.message_id;
        delete key.request_id;
        if (prev && prev.event === e.event && (e.event === 'phase_delta' || e.event === 'final_delta') && prev.id === e.id) prev.text += e.text;
        else out.push(key);
        return out;
      }, []);
    assert.deepEqual(merged(content.map((e) => ({ event: e.event, ...e.data }))), merged(model));
  });

  for (const cut of Object.keys(CUTS)) {
    for (const chunk of CUT_CHUNKS) {
      const format = MOCKS[CUTS[cut].full].format;
      test(`truncated upstream ${format}/${cut}/${chunk}: the answer so far, then error last`, async () => {
        const { events } = await postSSE(url('jsonseq', format, cut, chunk), body);
        const end = events.at(-1);
        assert.equal(end.event, 'error');
        assert.equal(end.data.code, 'upstream_error');
        assert.equal(end.data.message, 'upstream: the connection broke off mid-reply');
        assert.equal(only(events, 'completed', 'error').length, 1);
        const got = answerOf(events);
        assert.ok(matchesPartial(got, partialAnswer(cut, chunk)), `got ${JSON.stringify(got)}`);
      });
    }
  }

  // A specs/001 client may ignore the system event error (§3): a final_end
  // before it would make a cut-off answer look complete.
  test('truncated upstream: no final_end for a cut-off answer', async () => {
    for (const cut of Object.keys(CUTS)) {
      const { events } = await postSSE(url('jsonseq', MOCKS[CUTS[cut].full].format, cut, 13), body);
      assert.deepEqual(names(events.slice(-2)), ['final_delta', 'error'], cut);
    }
  });
});
