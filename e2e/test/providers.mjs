// Recorded provider streams (e2e/testdata/providers/*.sse, replayed byte for
// byte by the prov_<fixture> mocks of e2e/Caddyfile) and what a client must
// assemble from each: decodeFixture reads a fixture by the upstream decoding
// rules of CONTRACT.md §7, independently of llmstream's Go decoder, and
// e2e/testdata/providers/expected.json holds the result for every fixture
// (the Go tests read it; `node test/providers.mjs` rewrites it, and
// test/providers.test.mjs checks that it still says what the fixtures say).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { testdata } from './expected.mjs';

const dir = `${testdata}providers/`;
const expectedFile = `${dir}expected.json`;

/**
 * PROVIDERS names each fixture and the quirk it brings (issue 9): the
 * tests replay every one of them through llm_stream to the real clients.
 */
export const PROVIDERS = {
  mistral_magistral: 'Mistral Magistral: content as typed parts, thinking parts nested in text parts',
  moonshot_parallel_tools: 'Moonshot/Kimi: two tool calls streamed without index, continuations without id',
  moonshot_single_tool: 'Moonshot/Kimi: one tool call without index, continuations without id',
  gemini_parallel_tools: "Gemini's OpenAI endpoint: two whole tool calls, finish and usage in one chunk",
  dashscope_qwen: 'Qwen on DashScope: reasoning_content, content null, usage in a trailing choices-less chunk',
  dashscope_tool_call: 'Qwen on DashScope: continuations with id "" and an empty function object',
  deepseek_reasoning: 'DeepSeek reasoner: reasoning_content, then Markdown and an emoji',
  groq_reasoning: 'Groq: reasoning in "reasoning", usage inside x_groq',
  xai_grok: 'xAI Grok: role in every delta, no finish_reason until the end, reasoning tokens only in usage',
  azure_content_filter: 'Azure OpenAI: a choices-less prompt_filter_results chunk first, a content-filter chunk after the finish',
  openrouter_error: 'OpenRouter: keep-alive comments, reasoning, then finish_reason "error" with an error object mid-stream',
  perplexity_citations: 'Perplexity: message and delta in every chunk, usage repeated with citations and cost',
  vllm_continuous_usage: 'vLLM with continuous_usage_stats: usage in every chunk, counted once',
  vllm_n2: 'vLLM asked for n=2: choice 1 interleaved with choice 0',
  sglang: 'SGLang: every delta field present and null',
  llamacpp_timings: 'llama.cpp: timings and a __verbose copy of the whole reply',
  ollama_reasoning: 'Ollama: reasoning in "reasoning", role in every delta',
  ollama_same_index: 'Ollama: two tool calls both at index 0, told apart by their ids',
  byte_split_utf8: 'a byte-level tokenizer: UTF-8 characters split across two chunks, in reasoning and content',
  typed_parts_unknown: 'typed parts of unknown types: reported, their text kept',
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

/**
 * KNOWN_BUGS are llmstream bugs these fixtures expose, by fixture and by
 * the check they break: the tests leave that one check out of the regular
 * cases and run it as a `todo` test (test/providers.test.mjs), so that the
 * rest still runs and the bug stays in sight until it is fixed. None is
 * open: the two these tests found (Azure's model taken from its
 * prompt_filter_results chunk, interleaved parallel tool calls misleading
 * the .stream() helper) are fixed, and their checks run with the rest.
 */
export const KNOWN_BUGS = {};

/** known says whether a check of a fixture is a known llmstream bug. */
export const known = (name, check) => Boolean(KNOWN_BUGS[name]?.[check]);

/** readFixture is the raw bytes of a provider fixture. */
export const readFixture = (name) => readFileSync(`${dir}${name}.sse`);

// A JSON string in a fixture may hold raw bytes of half a UTF-8 character
// (byte_split_utf8). The lines are decoded as latin1, so that such a byte
// survives JSON.parse as one char below 0x100; utf8 turns the strings of a
// channel, joined, back into text. An escaped \u0080–\u00ff would be
// mistaken for a raw byte: no fixture has one, and decodeFixture says so.
const utf8 = (byteStrings) => {
  const bytes = [];
  for (const s of byteStrings) {
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (c < 0x100) bytes.push(c);
      else bytes.push(...Buffer.from(ch, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
};

/**
 * decodeFixture reads a recorded OpenAI-compatible SSE body as CONTRACT §7
 * says llmstream must: choice 0 only (another choice is ignored and
 * reported once, stray_choice); content as a string or as typed parts
 * (text parts are answer, thinking parts reasoning; a part of another type
 * is reported as unknown_content_part, and its text, if it has one, kept);
 * reasoning_content, or reasoning where reasoning_content is absent;
 * tool-call fragments matched by index, by position when one chunk carries
 * several without index, and otherwise by id (a new id starts the next
 * call, none continues the latest); usage wherever it comes (top level,
 * inside the choice, Groq's x_groq), the last one counting; an error
 * object ends the stream with an error. It returns what a client must end
 * up with: {model, answer, reasoning, toolCalls: [{id, name, arguments}],
 * finish, usage, violations (codes in order), error}.
 */
export function decodeFixture(buf) {
  const out = { model: '', answer: [], reasoning: [], calls: [], finish: null, usage: null, violations: [], error: null };
  const byIndex = new Map(); // upstream index → position in calls
  let stray = false;
  for (let line of buf.toString('latin1').split('\n')) {
    line = line.replace(/\r$/, '');
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trimStart();
    if (data === '[DONE]') break;
    if (/\\u00[89a-f][0-9a-f]/i.test(data)) throw new Error(`an escaped byte-sized character is ambiguous here: ${data}`);
    const chunk = JSON.parse(data);
    if (!out.model && chunk.model) out.model = utf8([chunk.model]);
    if (chunk.usage) out.usage = chunk.usage;
    if (chunk.x_groq?.usage) out.usage = chunk.x_groq.usage;
    if (chunk.error) {
      out.error = { message: utf8([chunk.error.message ?? '']) };
      break;
    }
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) {
        if (!stray) out.violations.push('stray_choice');
        stray = true;
        continue;
      }
      if (choice.usage) out.usage = choice.usage;
      const d = choice.delta ?? {};
      const reasoning = d.reasoning_content ?? d.reasoning;
      if (typeof reasoning === 'string') out.reasoning.push(reasoning);
      if (typeof d.content === 'string') out.answer.push(d.content);
      for (const part of Array.isArray(d.content) ? d.content : []) {
        if (part.type === 'text') out.answer.push(part.text);
        else if (part.type === 'thinking' || part.type === 'reasoning') {
          const t = part[part.type];
          for (const p of Array.isArray(t) ? t : [t]) out.reasoning.push(typeof p === 'string' ? p : (p?.text ?? ''));
        } else {
          out.violations.push('unknown_content_part');
          if (typeof part.text === 'string') out.answer.push(part.text);
        }
      }
      const frags = d.tool_calls ?? [];
      frags.forEach((tc, j) => {
        let k;
        if (typeof tc.index === 'number') {
          k = byIndex.get(tc.index);
          // A new id at a known index is another call (Ollama).
          if (k === undefined || (tc.id && out.calls[k].id && tc.id !== out.calls[k].id)) k = out.calls.length;
          byIndex.set(tc.index, k);
        } else if (frags.length > 1) k = j;
        else if (out.calls.length === 0 || (tc.id && tc.id !== out.calls.at(-1).id)) k = out.calls.length;
        else k = out.calls.length - 1;
        const call = (out.calls[k] ??= { id: '', name: '', arguments: [] });
        if (tc.id && !call.id) call.id = tc.id;
        if (tc.function?.name && !call.name) call.name = tc.function.name;
        if (typeof tc.function?.arguments === 'string') call.arguments.push(tc.function.arguments);
      });
      if (choice.finish_reason) out.finish = choice.finish_reason;
    }
  }
  return {
    model: out.model,
    answer: utf8(out.answer),
    reasoning: utf8(out.reasoning),
    toolCalls: out.calls.map((c) => ({ id: utf8([c.id]), name: utf8([c.name]), arguments: utf8(c.arguments) })),
    finish: out.error ? null : out.finish,
    usage: out.usage,
    violations: out.violations,
    error: out.error,
  };
}

/** derived decodes every fixture: {name: what a client must assemble}. */
export const derived = () => Object.fromEntries(PROVIDER_NAMES.map((n) => [n, { provider: PROVIDERS[n], ...decodeFixture(readFixture(n)) }]));

/** EXPECTED is e2e/testdata/providers/expected.json, what the tests compare against. */
export const EXPECTED = existsSync(expectedFile) ? JSON.parse(readFileSync(expectedFile, 'utf8')) : {};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(expectedFile, `${JSON.stringify(derived(), null, 2)}\n`);
  console.log(`wrote ${expectedFile}`);
}
