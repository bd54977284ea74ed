// What each fake upstream (a mock in e2e/Caddyfile) makes the model write,
// and so what every client must end up with: derived from the fixtures in
// e2e/testdata/ by the rules of CONTRACT.md §4, written out here once so
// that every test compares against the exact text.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const testdata = fileURLToPath(new URL('../testdata/', import.meta.url));
export const read = (name) => readFileSync(testdata + name, 'utf8');

/** The gateway the tests talk to (e2e/run.sh starts it). */
export const BASE = process.env.LLMSTREAM_E2E_BASE ?? 'http://127.0.0.1:18080';

/** The chunk sizes every mock is served with: 1-byte deltas and odd cuts. */
export const CHUNKS = [1, 13, 'r'];

/**
 * CUT_CHUNKS are the chunk sizes of the broken upstreams: their cut point
 * is computed from a fixed size ('r' routes cut 1 to 24 bytes at random).
 */
export const CUT_CHUNKS = [1, 13];

/** The model the mocks report (llm_mock `model`). */
export const MOCK_MODEL = 'e2e-mock';

/** url is the gateway route for a protocol, a format and a mock. */
export const url = (protocol, format, mock, chunk) => `${BASE}/${protocol}/${format}/${mock}/${chunk}`;

// A JSON reply may sit in a ```json fence.
const unfence = (s) => s.trim().replace(/^```(?:json)?\s*\n/, '').replace(/\n```\s*$/, '');

/**
 * thinkingml splits a ThinkingML reply as the contract does: <think> and
 * each phase are reasoning, <serp> the summary, <final> the answer with the
 * trailing serp_queries comment (and the whitespace before it) removed.
 */
export function thinkingml(raw) {
  const think = raw.match(/<think>([\s\S]*?)<\/think>/)?.[1];
  const summary = raw.match(/<serp>([\s\S]*?)<\/serp>/)?.[1];
  const phases = [...raw.matchAll(/<phase id="(\d+)"><title>([\s\S]*?)<\/title>([\s\S]*?)<\/phase>/g)].map((m) => ({
    id: Number(m[1]),
    title: m[2],
    text: m[3],
  }));
  // The answer's <final> is the one after </thinking> (a literal <final>
  // inside a phase is text).
  const body = raw.slice(raw.indexOf('</thinking>'));
  const final = body.slice(body.indexOf('<final>') + '<final>'.length, body.lastIndexOf('</final>'));
  const serp = final.match(/\s*<!--\s*<serp_queries>([\s\S]*?)<\/serp_queries>\s*-->\s*$/);
  const answer = serp ? final.slice(0, serp.index) : final;
  const queries = serp ? JSON.parse(serp[1]) : undefined;
  return { think, summary, phases, answer, queries };
}

/** reasoningText is how the openai protocol writes thinkingml reasoning. */
export const reasoningText = ({ think, phases }) =>
  [...(think ? [think] : []), ...phases.map((p) => `**${p.title}**\n\n${p.text}`)].join('\n\n');

function jsonl(raw) {
  const evs = raw.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  const phases = [];
  for (const e of evs) {
    if (e.event === 'phase_start') phases.push({ id: e.id, title: e.title, text: '' });
    if (e.event === 'phase_delta') phases.at(-1).text += e.text;
  }
  return {
    events: evs,
    summary: evs.find((e) => e.event === 'serp_summary')?.text,
    phases,
    answer: evs.filter((e) => e.event === 'final_delta').map((e) => e.text).join(''),
    queries: evs.find((e) => e.event === 'serp_queries')?.queries,
  };
}

function toolCalls(file) {
  return JSON.parse(read(file)).map((c) => ({
    name: c.name,
    input: typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments,
  }));
}

const reasoning = read('reasoning.txt');
const tm = thinkingml(read('thinkingml.txt'));
const tmBad = thinkingml(read('thinkingml_violation.txt'));
const jl = jsonl(read('jsonl.txt'));
const plan = JSON.parse(unfence(read('aiplan.json')));
const planTools = JSON.parse(unfence(read('aiplan_tools.json')));
const fr = JSON.parse(unfence(read('final_result.json')));
const frClarify = JSON.parse(unfence(read('final_result_clarify.json')));
const frArtifacts = JSON.parse(unfence(read('final_result_artifacts.json')));

/**
 * The mocks of e2e/Caddyfile and what a client must assemble from each:
 * format (the route's), raw (the model's text), answer, reasoning parts
 * (texts in order), phases, summary, queries, tool calls {name, input},
 * clarify, artifacts, the violation codes reported, and the finish reason in
 * OpenAI's spelling.
 */
export const MOCKS = {
  thinkingml: {
    format: 'thinkingml',
    raw: read('thinkingml.txt'),
    answer: tm.answer,
    reasoning: [tm.think, ...tm.phases.map((p) => p.text)],
    reasoningText: reasoningText(tm),
    phases: tm.phases,
    summary: tm.summary,
    queries: tm.queries,
    toolCalls: [],
    // The literal <final> inside phase 2 is text, and reported.
    violations: ['literal_final_tag'],
    finish: 'stop',
  },
  thinkingml_violation: {
    format: 'thinkingml',
    raw: read('thinkingml_violation.txt'),
    answer: tmBad.answer,
    reasoning: tmBad.phases.map((p) => p.text),
    reasoningText: reasoningText(tmBad),
    phases: tmBad.phases,
    toolCalls: [],
    // Phase ids 1, 3 and no serp_queries block: the structure is broken,
    // the text still arrives.
    violations: ['phase_order', 'missing_serp_queries'],
    // jsonseq numbers phases 1, 2 on the wire (specs/001 §2) and says so.
    jsonseqViolations: ['phase_order', 'phase_renumbered', 'missing_serp_queries'],
    finish: 'stop',
  },
  jsonl: {
    format: 'jsonl',
    raw: read('jsonl.txt'),
    events: jl.events,
    answer: jl.answer,
    reasoning: jl.phases.map((p) => p.text),
    reasoningText: reasoningText({ phases: jl.phases }),
    phases: jl.phases,
    summary: jl.summary,
    queries: jl.queries,
    toolCalls: [],
    violations: [],
    finish: 'stop',
  },
  aiplan: {
    format: 'aiplan',
    raw: read('aiplan.json'),
    answer: plan.direct_response,
    reasoning: [plan.thought],
    reasoningText: `**Thought**\n\n${plan.thought}`,
    phases: [{ id: 1, title: 'Thought', text: plan.thought }],
    toolCalls: [],
    violations: [],
    finish: 'stop',
  },
  aiplan_tools: {
    format: 'aiplan',
    raw: read('aiplan_tools.json'),
    answer: null,
    reasoning: [planTools.thought],
    reasoningText: `**Thought**\n\n${planTools.thought}`,
    phases: [{ id: 1, title: 'Thought', text: planTools.thought }],
    toolCalls: planTools.tool_calls.map((c) => ({ name: c.name, input: c.args })),
    violations: [],
    // Tool calls parsed from the text end the turn like native ones.
    finish: 'tool_calls',
  },
  final_result: {
    format: 'final_result',
    raw: read('final_result.json'),
    answer: fr.message,
    reasoning: [],
    toolCalls: [],
    artifacts: fr.artifacts,
    violations: [],
    finish: 'stop',
  },
  final_result_clarify: {
    format: 'final_result',
    raw: read('final_result_clarify.json'),
    answer: frClarify.message,
    reasoning: [],
    toolCalls: [],
    clarify: frClarify.clarify,
    violations: [],
    finish: 'stop',
  },
  final_result_artifacts: {
    format: 'final_result',
    raw: read('final_result_artifacts.json'),
    answer: frArtifacts.message,
    reasoning: [],
    toolCalls: [],
    artifacts: frArtifacts.artifacts,
    violations: [],
    finish: 'stop',
  },
  text: {
    format: 'text',
    raw: read('text.txt'),
    answer: read('text.txt'),
    reasoning: [reasoning],
    reasoningText: reasoning,
    phases: [],
    toolCalls: [],
    violations: [],
    finish: 'stop',
  },
  native_tools: {
    format: 'text',
    raw: read('tool_intro.txt'),
    answer: read('tool_intro.txt'),
    reasoning: [reasoning],
    reasoningText: reasoning,
    phases: [],
    toolCalls: toolCalls('search_call.json'),
    violations: [],
    finish: 'tool_calls',
  },
  ask_user: {
    format: 'thinkingml',
    raw: read('thinkingml.txt'),
    answer: tm.answer,
    reasoning: [tm.think, ...tm.phases.map((p) => p.text)],
    reasoningText: reasoningText(tm),
    phases: tm.phases,
    summary: tm.summary,
    queries: tm.queries,
    toolCalls: toolCalls('ask_user_call.json'),
    // The call's questions use the variant shapes skillpet normalises
    // (specs/002 §5), which the ask_user schema itself does not allow:
    // checked against it, they are a violation (CONTRACT.md §10).
    violations: ['literal_final_tag', 'tool_args_invalid'],
    finish: 'tool_calls',
  },
};

/**
 * RAW_MOCKS are the models served raw (CONTRACT.md §8), with the model name
 * each mock reports and the routes that serve it: r1 through the ordinary
 * gateway routes, whose think_tags is the default (auto reads the R1 family
 * as prefilled), and qwen3_tools through the /raw/ routes, which add
 * text_tools hermes.
 */
const r1 = read('r1.txt');
const qwen3 = read('qwen3_tools.txt');
export const RAW_MOCKS = {
  r1: {
    model: 'DeepSeek-R1-Distill-Qwen-7B',
    prefix: '',
    raw: r1,
    // The reasoning up to </think>; the answer after it, its blank line
    // trimmed.
    answer: r1.slice(r1.indexOf('</think>') + '</think>'.length).trimStart(),
    reasoning: [r1.slice(0, r1.indexOf('</think>'))],
    phases: [],
    toolCalls: [],
    violations: [],
    finish: 'stop',
  },
  qwen3_tools: {
    model: 'Qwen3-8B',
    prefix: 'raw/',
    raw: qwen3,
    answer: 'Let me look that up first.',
    reasoning: [qwen3.slice(qwen3.indexOf('<think>') + '<think>'.length, qwen3.indexOf('</think>')).trimStart()],
    phases: [],
    toolCalls: toolCalls('search_call.json'),
    violations: [],
    finish: 'tool_calls',
  },
};
for (const m of Object.values(RAW_MOCKS)) m.reasoningText = m.reasoning.join('');

/**
 * The broken upstreams (truncate_after in e2e/Caddyfile): the mock cuts the
 * connection once it has sent `after` reply bytes. sent(chunk) is how many
 * reply bytes went out (the mock cuts on UTF-8 boundaries), full is the
 * mock whose text it cuts.
 */
export const CUTS = {
  thinkingml_cut: { full: 'thinkingml', after: 600 },
  aiplan_cut: { full: 'aiplan', after: 260 },
  text_cut: { full: 'text', after: 30 },
};

/** sentBytes is how many reply bytes llm_mock sends before it cuts. */
export function sentBytes(raw, chunk, after) {
  const b = Buffer.from(raw, 'utf8');
  let sent = 0;
  while (sent < b.length && sent < after) {
    let n = Math.min(chunk, b.length - sent);
    while (sent + n < b.length && (b[sent + n] & 0xc0) === 0x80) n++;
    sent += n;
  }
  return sent;
}

/** cutPrefix is the reply text the model wrote before the cut. */
export function cutPrefix(cut, chunk) {
  const raw = MOCKS[cut.full].raw;
  return Buffer.from(raw, 'utf8').subarray(0, sentBytes(raw, chunk, cut.after)).toString('utf8');
}

/**
 * upstreamFinish is the finish reason gymbro and jsonseq report: the
 * mock's own (tool_calls after native tool calls), or tool_calls for the
 * calls the model wrote as text under the mock's stop.
 */
export const upstreamFinish = (mock) => (MOCKS[mock]?.toolCalls.length ? 'tool_calls' : 'stop');

/** The whole reply's answer, whose start a cut-off stream delivers. */
export const cutAnswer = (cut) => MOCKS[cut.full].answer;

/** The gymbro escaping of a thinkingml reply: <final> inside thinking. */
export function gymbroEscape(raw) {
  const end = raw.indexOf('</thinking>');
  if (end < 0) return raw;
  const head = raw.slice(0, end).replaceAll('<final>', '&lt;final&gt;').replaceAll('</final>', '&lt;/final&gt;');
  return head + raw.slice(end);
}
