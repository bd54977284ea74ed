// What the playground knows of each protocol: the request a client of the
// protocol sends (the shapes transform/wiretest's clients send, CONTRACT.md
// §3), and how its events map onto one Reply, the view model the page
// renders. No DOM here: e2e tests import this file in Node too.

/** now is a monotonic clock in milliseconds. */
const now = () => (globalThis.performance ? performance.now() : Date.now());

/**
 * A Reply is what one request brought back, in the order it came: blocks of
 * reasoning (with their phase titles), answer text and tool calls, per
 * round; serp summary and queries, clarify, ask_user, artifacts,
 * violations, usage, the finish reason or the error, the raw events, and
 * the timings.
 */
export class Reply {
  constructor(t0 = now()) {
    this.blocks = []; // {kind: 'reasoning'|'answer'|'tools'|'round', round, …}
    this.pending = null; // a reasoning block announced, not yet shown
    this.round = 1;
    this.serpSummary = '';
    this.queries = [];
    this.clarify = null;
    this.askUser = null;
    this.artifacts = null;
    this.violations = [];
    this.usage = null;
    this.model = '';
    this.finish = '';
    this.error = null;
    this.done = false;
    this.events = [];
    this.timing = { sent: t0, firstByte: 0, firstToken: 0, end: 0, rounds: [{ round: 1, start: t0, firstToken: 0 }] };
    this.calls = new Map(); // tool calls by id
  }

  /** raw records an event as it arrived, for the raw view. */
  raw(name, data) {
    this.events.push({ t: now() - this.timing.sent, name, data });
  }

  bytes() {
    if (!this.timing.firstByte) this.timing.firstByte = now();
  }

  token() {
    const t = now();
    if (!this.timing.firstToken) this.timing.firstToken = t;
    const r = this.timing.rounds[this.timing.rounds.length - 1];
    if (!r.firstToken) r.firstToken = t;
  }

  last() {
    return this.blocks[this.blocks.length - 1];
  }

  /**
   * reasoningStart says a new reasoning block (a phase, titled, or free
   * reasoning) begins; it appears with its first text, so that a section
   * that stays empty shows nothing.
   */
  reasoningStart(title = '') {
    this.pending = { title };
  }

  reasoning(text, title) {
    if (!text) return;
    this.token();
    const b = this.last();
    if (this.pending || !b || b.kind !== 'reasoning' || (title !== undefined && b.title !== title)) {
      this.blocks.push({ kind: 'reasoning', round: this.round, title: this.pending ? this.pending.title : title ?? '', text: '' });
      this.pending = null;
    }
    this.last().text += text;
  }

  answer(text) {
    if (!text) return;
    this.token();
    this.pending = null;
    const b = this.last();
    if (!b || b.kind !== 'answer') this.blocks.push({ kind: 'answer', round: this.round, text: '' });
    this.last().text += text;
  }

  /** toolCall records a call: the gateway's (server) or the client's. */
  toolCall(c) {
    this.token();
    let call = this.calls.get(c.id);
    if (!call) {
      call = { id: c.id, name: c.name || '', label: '', server: '', args: '', status: 'called', progress: null, output: '', gateway: false };
      this.calls.set(c.id, call);
      let b = this.last();
      if (!b || b.kind !== 'tools' || b.round !== this.round) {
        b = { kind: 'tools', round: this.round, calls: [] };
        this.blocks.push(b);
      }
      b.calls.push(call);
    }
    for (const k of ['name', 'label', 'server']) if (c[k]) call[k] = c[k];
    if (c.gateway) call.gateway = true;
    if (c.args !== undefined) call.args = typeof c.args === 'string' ? c.args : JSON.stringify(c.args);
    if (c.argsDelta) call.args += c.argsDelta;
    if (c.status) call.status = c.status;
    return call;
  }

  toolProgress(id, p) {
    const call = this.calls.get(id) || this.toolCall({ id, name: p.name, gateway: true });
    call.status = 'running';
    call.progress = { progress: p.progress ?? null, total: p.total ?? null, message: p.message ?? '' };
  }

  toolResult(id, r) {
    const call = this.calls.get(id) || this.toolCall({ id, name: r.name, gateway: true });
    call.status = r.error ? 'error' : 'completed';
    call.output = typeof r.output === 'string' ? r.output : JSON.stringify(r.output ?? '');
  }

  /** newRound starts round n of the agent loop (or a retry's reply). */
  newRound(n) {
    if (n === undefined) n = this.round + 1;
    if (n <= this.round && this.blocks.length) return;
    this.round = n;
    this.blocks.push({ kind: 'round', round: n });
    this.timing.rounds.push({ round: n, start: now(), firstToken: 0 });
  }

  violation(v) {
    this.violations.push({ code: v.code || String(v), detail: v.detail || '', offset: v.offset });
  }

  end(finish) {
    if (finish) this.finish = finish;
    this.done = true;
    this.timing.end = now();
  }

  fail(message, code = '') {
    this.error = { message: message || 'error', code };
    this.end();
  }

  /** answerText is the whole answer, every round's, for the next request's history. */
  answerText() {
    return this.blocks.filter((b) => b.kind === 'answer').map((b) => b.text).join('\n\n');
  }
}

let seq = 0;
/** newID returns an id unique to this page. */
export function newID(prefix) {
  seq++;
  return `${prefix}${Date.now().toString(36)}${seq.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A Conversation is one route's chat on the page: the turns so far, as the
 * route's request format carries history (OpenAI messages, UI messages,
 * Responses input items, Anthropic messages), or a project id for a route
 * that keeps conversations itself (skillpet's backend).
 */
export class Conversation {
  constructor(route) {
    this.route = route;
    this.turns = []; // {user, assistant}
    this.projectId = newID('playground-');
    this.chatId = newID('chat-');
    this.key = newID('playground-key-');
  }

  add(user, assistant) {
    this.turns.push({ user, assistant });
  }
}

/**
 * buildRequest returns {headers, body} for a prompt to route in its request
 * format, with the conversation's history.
 */
export function buildRequest(conv, text) {
  const route = conv.route;
  const model = route.model || 'playground';
  const headers = { 'Content-Type': 'application/json' };
  const history = [];
  for (const t of conv.turns) {
    history.push({ role: 'user', content: t.user });
    if (t.assistant) history.push({ role: 'assistant', content: t.assistant });
  }
  let body;
  switch (route.request_format) {
    case 'skillpet':
      // The route keeps the conversation, per Authorization and project
      // (specs/002 §2.3, CONTRACT §9): a key of this page's own.
      headers.Authorization = `Bearer ${conv.key}`;
      body = { projectId: conv.projectId, message: text, enableThinking: true };
      break;
    case 'aisdk': {
      const messages = [];
      conv.turns.forEach((t, k) => {
        messages.push({ id: `u${k}`, role: 'user', parts: [{ type: 'text', text: t.user }] });
        if (t.assistant) messages.push({ id: `a${k}`, role: 'assistant', parts: [{ type: 'text', text: t.assistant }] });
      });
      messages.push({ id: newID('u'), role: 'user', parts: [{ type: 'text', text }] });
      body = { id: conv.chatId, trigger: 'submit-message', messages };
      break;
    }
    case 'responses':
      body = { model, stream: true, input: [...history.map((m) => ({ role: m.role, content: m.content })), { role: 'user', content: text }] };
      break;
    case 'anthropic':
      // Thinking on, so that reasoning shows; the MCP connector's beta, so
      // that the gateway's tool calls show as mcp_tool_use blocks.
      headers['anthropic-version'] = '2023-06-01';
      headers['anthropic-beta'] = 'mcp-client-2025-11-20';
      body = {
        model,
        max_tokens: 4096,
        stream: true,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [...history, { role: 'user', content: text }],
      };
      break;
    case 'agui': {
      // AG-UI's RunAgentInput (docs/agui.md), as @ag-ui/client's HttpAgent
      // posts it: the thread's messages with ids, no tools of the page's.
      const messages = [];
      conv.turns.forEach((t, k) => {
        messages.push({ id: `u${k}`, role: 'user', content: t.user });
        if (t.assistant) messages.push({ id: `a${k}`, role: 'assistant', content: t.assistant });
      });
      messages.push({ id: newID('u'), role: 'user', content: text });
      headers.Accept = 'text/event-stream';
      body = { threadId: conv.chatId, runId: newID('run-'), messages, tools: [], context: [], state: {}, forwardedProps: {} };
      break;
    }
    default: // an OpenAI chat-completions body
      body = { model, stream: true, stream_options: { include_usage: true }, messages: [...history, { role: 'user', content: text }] };
  }
  return { headers, body: JSON.stringify(body) };
}

/** parse reads an event's JSON data, or null. */
function parse(data) {
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}

/**
 * A ThinkingML splitter for gymbro, whose stream is the model's raw reply:
 * it shows the reply as a GymBro client reads it (specs/000 §1): <think>
 * and the <thinking> phases as reasoning, <serp> as the summary, <final>
 * as the answer, the serp_queries comment as queries. It is incremental: a
 * tag cut between deltas is held until it is whole.
 */
export class ThinkingML {
  constructor(reply) {
    this.reply = reply;
    this.buf = '';
    this.where = ''; // think | serp | phase | title | final | ''
    this.title = '';
    this.final = '';
  }

  feed(s) {
    this.buf += s;
    this.drain(false);
  }

  close() {
    this.drain(true);
    const m = /<serp_queries>\s*([\s\S]*?)\s*<\/serp_queries>/.exec(this.final);
    if (m) {
      const q = parse(m[1]);
      if (Array.isArray(q)) this.reply.queries = q.map(String);
    }
  }

  text(s) {
    if (!s) return;
    const r = this.reply;
    if (this.where !== 'final' && this.where !== '') {
      // GymBro escapes a literal <final> inside thinking (specs/000 §1).
      s = s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    }
    switch (this.where) {
      case 'think':
        r.reasoning(s, 'Think');
        break;
      case 'serp':
        r.serpSummary += s;
        break;
      case 'title':
        this.title += s;
        break;
      case 'phase':
        r.reasoning(s, this.title);
        break;
      case 'final':
        this.final += s;
        r.answer(s);
        break;
      default:
        if (s.trim()) r.answer(s);
    }
  }

  tag(closing, name) {
    if (name === 'title') {
      if (!closing) this.title = '';
      this.where = closing ? 'phase' : 'title';
      if (closing) this.reply.reasoningStart(this.title);
      return;
    }
    if (name === 'thinking') {
      this.where = '';
      return;
    }
    this.where = closing ? '' : name;
  }

  drain(final) {
    for (;;) {
      const lt = this.buf.indexOf('<');
      if (lt < 0) {
        this.text(this.buf);
        this.buf = '';
        return;
      }
      if (lt > 0) {
        this.text(this.buf.slice(0, lt));
        this.buf = this.buf.slice(lt);
      }
      const gt = this.buf.indexOf('>');
      if (gt < 0) {
        if (!final && this.buf.length < 64) return; // a tag may be cut here
        this.text('<');
        this.buf = this.buf.slice(1);
        continue;
      }
      const m = /^<(\/?)(think|serp|thinking|phase|title|final)(\s[^<>]*)?>$/.exec(this.buf.slice(0, gt + 1));
      if (!m || (this.where === 'final' && m[2] !== 'final')) {
        this.text('<');
        this.buf = this.buf.slice(1);
        continue;
      }
      this.buf = this.buf.slice(gt + 1);
      this.tag(m[1] === '/', m[2]);
    }
  }
}

/** violations records completed.metadata.violations (gymbro, jsonseq). */
function metadata(reply, d) {
  const md = d.metadata || {};
  for (const v of md.violations || []) reply.violation(v);
  if (md.usage) reply.usage = md.usage;
  reply.model = d.resolved_model || reply.model;
  reply.end(md.finish_reason);
}

/** gymbroLoop handles the agent loop's status events (docs/protocols.md). */
function gymbroLoop(reply, d) {
  if (d.round) {
    reply.newRound(d.round);
    return true;
  }
  const t = d.tool;
  if (!t) return false;
  if (t.event === 'call') reply.toolCall({ id: t.id, name: t.name, label: t.label, server: t.server, args: t.args, gateway: true, status: 'running' });
  else if (t.event === 'progress') reply.toolProgress(t.id, t);
  else if (t.event === 'result') reply.toolResult(t.id, { name: t.name, error: t.status !== 'completed', output: t.output });
  return true;
}

/** llmstreamMeta is the metadata agui puts under the key llmstream. */
const llmstreamMeta = (d) => d.metadata?.llmstream || {};

/** adapters map each protocol's events onto a Reply. */
const adapters = {
  gymbro(reply) {
    const tml = new ThinkingML(reply);
    return (ev, d) => {
      switch (ev) {
        case 'status':
          if (gymbroLoop(reply, d)) {
            tml.feed(''); // a round's text goes on after the calls
            return;
          }
          if (d.state === 'routed') reply.model = d.resolved_model || '';
          break;
        case 'content_delta':
          tml.feed(d.delta || '');
          break;
        case 'completed':
          tml.close();
          metadata(reply, d);
          break;
        case 'error':
          tml.close();
          reply.fail(d.message, d.code);
          break;
      }
    };
  },

  jsonseq(reply) {
    return (ev, d) => {
      switch (ev) {
        case 'status':
          if (d.round || d.tool) gymbroLoop(reply, d);
          else if (d.state === 'routed') reply.model = d.resolved_model || '';
          break;
        case 'serp_summary':
          reply.serpSummary += d.text || '';
          break;
        case 'phase_start':
          reply.reasoningStart(d.title || '');
          break;
        case 'phase_delta':
          reply.reasoning(d.text);
          break;
        case 'final_delta':
          reply.answer(d.text);
          break;
        case 'serp_queries':
          reply.queries = d.queries || [];
          break;
        case 'tool_call':
          reply.toolCall({ id: d.id, name: d.name, label: d.label, server: d.server, args: d.args, gateway: !!d.server, status: d.server ? 'running' : 'called' });
          break;
        case 'tool_progress':
          reply.toolProgress(d.id, d);
          break;
        case 'tool_result':
          reply.toolResult(d.id, { name: d.name, error: d.status !== 'completed', output: d.output });
          break;
        case 'round_start':
          reply.newRound(d.round);
          break;
        case 'clarify':
          reply.clarify = d;
          break;
        case 'artifacts':
          reply.artifacts = d.items;
          break;
        case 'completed':
          metadata(reply, d);
          break;
        case 'error':
          reply.fail(d.message, d.code);
          break;
      }
    };
  },

  skillpet(reply) {
    let running = 0;
    return (ev, d) => {
      switch (ev) {
        case 'thinking':
          reply.reasoning(d.content);
          break;
        case 'token':
          reply.answer(d.content);
          break;
        case 'status': {
          // A running tool's progress, else the <serp> summary.
          const open = [...reply.calls.values()].filter((c) => c.status === 'running');
          if (running && open.length) reply.toolProgress(open[open.length - 1].id, { message: d.message });
          else reply.serpSummary += d.message || '';
          break;
        }
        case 'tool_start':
          running++;
          reply.toolCall({ id: d.id, name: d.name, label: d.label, args: d.args, gateway: true, status: 'running' });
          break;
        case 'tool_result':
          running = Math.max(0, running - 1);
          reply.toolResult(d.id, { name: d.name, error: d.status === 'error', output: d.message });
          break;
        case 'round_start':
          reply.newRound(d.round);
          break;
        case 'ask_user':
          reply.askUser = d.questions || [];
          reply.token();
          break;
        case 'resource':
          if (d.resourceType === 'serp_queries') reply.queries = Array.isArray(d.data) ? d.data : d.data?.queries || [];
          else if (d.resourceType === 'artifacts') reply.artifacts = d.data ?? d;
          break;
        case 'done':
          reply.end('stop');
          break;
        case 'error':
          reply.fail(d.message);
          break;
      }
    };
  },

  aisdk(reply) {
    let title;
    let stepEnded = false;
    return (ev, d) => {
      if (ev === '[DONE]') return;
      switch (d.type) {
        case 'data-phase':
          title = d.data?.title || '';
          reply.reasoningStart(title);
          break;
        case 'reasoning-start':
          if (title === undefined) reply.reasoningStart('');
          break;
        case 'reasoning-delta':
          reply.reasoning(d.delta);
          break;
        case 'reasoning-end':
          title = undefined;
          break;
        case 'text-delta':
          reply.answer(d.delta);
          break;
        case 'data-serp-summary':
          reply.serpSummary += d.data?.text || '';
          break;
        case 'data-serp-queries':
          reply.queries = d.data?.queries || [];
          break;
        case 'tool-input-start':
          reply.toolCall({ id: d.toolCallId, name: d.toolName, label: d.title, gateway: !!d.providerExecuted, args: '' });
          break;
        case 'tool-input-delta':
          reply.toolCall({ id: d.toolCallId, argsDelta: d.inputTextDelta });
          break;
        case 'tool-input-available':
          reply.toolCall({ id: d.toolCallId, name: d.toolName, label: d.title, args: d.input, gateway: !!d.providerExecuted, status: d.providerExecuted ? 'running' : 'called' });
          break;
        case 'data-tool-progress':
          reply.toolProgress(d.data?.toolCallId || d.id, d.data || {});
          break;
        case 'tool-output-available':
          reply.toolResult(d.toolCallId, { output: d.output });
          break;
        case 'tool-output-error':
          reply.toolResult(d.toolCallId, { error: true, output: d.errorText });
          break;
        case 'finish-step':
          stepEnded = true;
          break;
        case 'start-step':
          if (stepEnded) reply.newRound();
          stepEnded = false;
          break;
        case 'data-clarify':
          reply.clarify = d.data;
          break;
        case 'data-artifacts':
          reply.artifacts = d.data?.items ?? d.data;
          break;
        case 'data-violations':
          for (const v of d.data?.violations || []) reply.violation(v);
          break;
        case 'finish':
          reply.end(d.finishReason);
          break;
        case 'error':
          reply.fail(d.errorText);
          break;
      }
    };
  },

  openai(reply) {
    return (ev, d) => {
      if (ev === '[DONE]') {
        reply.end();
        return;
      }
      if (d.error) {
        reply.fail(d.error.message, d.error.code);
        return;
      }
      if (d.model) reply.model = d.model;
      if (d.usage) reply.usage = d.usage;
      const c = d.choices?.[0];
      if (!c) return;
      const delta = c.delta || {};
      if (delta.reasoning_content) reply.reasoning(delta.reasoning_content);
      if (delta.content) reply.answer(delta.content);
      for (const tc of delta.tool_calls || []) {
        const id = tc.id || `call-${tc.index}`;
        if (tc.id) reply.toolCall({ id, name: tc.function?.name, args: tc.function?.arguments || '' });
        else reply.toolCall({ id: [...reply.calls.keys()][tc.index] ?? id, argsDelta: tc.function?.arguments || '' });
      }
      if (c.finish_reason) reply.finish = c.finish_reason;
    };
  },

  responses(reply) {
    const items = new Map(); // item id → call id
    return (ev, d) => {
      switch (ev) {
        case 'response.created':
          reply.model = d.response?.model || '';
          break;
        case 'response.output_item.added': {
          const it = d.item || {};
          // Items continue across rounds: what follows the gateway's calls
          // is the next round's.
          if (it.type !== 'mcp_call' && reply.last()?.kind === 'tools' && reply.last().calls.some((c) => c.gateway)) reply.newRound();
          if (it.type === 'reasoning') reply.reasoningStart('');
          if (it.type === 'function_call') {
            items.set(it.id, it.call_id);
            reply.toolCall({ id: it.call_id, name: it.name, args: it.arguments || '' });
          }
          if (it.type === 'mcp_call') {
            items.set(it.id, it.id);
            reply.toolCall({ id: it.id, name: it.name, server: it.server_label, args: it.arguments || '', gateway: true });
          }
          break;
        }
        case 'response.reasoning_summary_part.added':
          reply.reasoningStart('');
          break;
        case 'response.reasoning_text.delta':
        case 'response.reasoning_summary_text.delta':
          reply.reasoning(d.delta);
          break;
        case 'response.output_text.delta':
          reply.answer(d.delta);
          break;
        case 'response.function_call_arguments.delta':
        case 'response.mcp_call_arguments.delta':
          reply.toolCall({ id: items.get(d.item_id) || d.item_id, argsDelta: d.delta });
          break;
        case 'response.mcp_call.in_progress':
          reply.toolCall({ id: d.item_id, status: 'running' });
          break;
        case 'response.output_item.done': {
          const it = d.item || {};
          if (it.type === 'mcp_call') {
            const err = it.error ? (typeof it.error === 'string' ? it.error : it.error.content?.map((c) => c.text).join('') || JSON.stringify(it.error)) : '';
            reply.toolResult(it.id, { error: !!it.error, output: it.error ? err : it.output });
          }
          break;
        }
        case 'response.completed':
        case 'response.incomplete':
          reply.usage = d.response?.usage || null;
          reply.end(d.response?.status);
          break;
        case 'response.failed':
          reply.usage = d.response?.usage || null;
          break;
        case 'error':
          reply.fail(d.message || d.error?.message, d.code || d.error?.code);
          break;
      }
    };
  },

  anthropic(reply) {
    const blocks = new Map(); // index → {type, id}
    return (ev, d) => {
      switch (ev) {
        case 'message_start':
          reply.model = d.message?.model || '';
          reply.usage = d.message?.usage || null;
          break;
        case 'content_block_start': {
          const b = d.content_block || {};
          blocks.set(d.index, { type: b.type, id: b.id });
          // Blocks continue across rounds: a text or thinking block after
          // the gateway's calls is the next round's.
          if ((b.type === 'text' || b.type === 'thinking') && reply.last()?.kind === 'tools' && reply.last().calls.some((c) => c.gateway)) reply.newRound();
          if (b.type === 'thinking') reply.reasoningStart('');
          if (b.type === 'tool_use') reply.toolCall({ id: b.id, name: b.name, args: '' });
          if (b.type === 'mcp_tool_use') reply.toolCall({ id: b.id, name: b.name, server: b.server_name, args: '', gateway: true, status: 'running' });
          if (b.type === 'mcp_tool_result') {
            const text = (b.content || []).map((c) => c.text || '').join('');
            reply.toolResult(b.tool_use_id, { error: !!b.is_error, output: text });
          }
          break;
        }
        case 'content_block_delta': {
          const delta = d.delta || {};
          const b = blocks.get(d.index) || {};
          if (delta.type === 'thinking_delta') reply.reasoning(delta.thinking);
          else if (delta.type === 'text_delta') reply.answer(delta.text);
          else if (delta.type === 'input_json_delta' && b.id) reply.toolCall({ id: b.id, argsDelta: delta.partial_json });
          break;
        }
        case 'message_delta':
          if (d.usage) reply.usage = { ...(reply.usage || {}), ...d.usage };
          if (d.delta?.stop_reason) reply.finish = d.delta.stop_reason;
          break;
        case 'message_stop':
          reply.end();
          break;
        case 'error':
          reply.fail(d.error?.message, d.error?.type);
          break;
      }
    };
  },

  agui(reply) {
    // A phase's reasoning message leads with "**<title>**" and a blank
    // line, which the page shows as the block's title instead.
    let skip = '';
    return (ev, d) => {
      switch (ev) {
        case 'REASONING_MESSAGE_START': {
          const title = llmstreamMeta(d).title || '';
          reply.reasoningStart(title);
          skip = title ? `**${title}**\n\n` : '';
          break;
        }
        case 'REASONING_MESSAGE_CONTENT': {
          let text = d.delta || '';
          if (skip) {
            const n = Math.min(skip.length, text.length);
            if (skip.startsWith(text.slice(0, n))) {
              skip = skip.slice(n);
              text = text.slice(n);
            } else skip = '';
          }
          reply.reasoning(text);
          break;
        }
        case 'TEXT_MESSAGE_CONTENT':
          reply.answer(d.delta);
          break;
        case 'TOOL_CALL_START': {
          const m = llmstreamMeta(d);
          reply.toolCall({ id: d.toolCallId, name: d.toolCallName, server: m.server, label: m.label, gateway: !!m.server, args: '' });
          break;
        }
        case 'TOOL_CALL_ARGS':
          reply.toolCall({ id: d.toolCallId, argsDelta: d.delta });
          break;
        case 'TOOL_CALL_END': {
          const call = reply.calls.get(d.toolCallId);
          if (call?.gateway && call.status === 'called') call.status = 'running';
          break;
        }
        case 'ACTIVITY_SNAPSHOT': {
          const c = d.content || {};
          if (d.activityType === 'llmstream.tool_progress' && c.toolCallId) {
            reply.toolProgress(c.toolCallId, { name: c.toolName, progress: c.progress, total: c.total, message: c.message });
          }
          break;
        }
        case 'TOOL_CALL_RESULT':
          reply.toolResult(d.toolCallId, { error: llmstreamMeta(d).status === 'error', output: d.content });
          break;
        case 'STEP_STARTED': {
          const n = Number(/^round (\d+)$/.exec(d.stepName || '')?.[1]);
          if (n) reply.newRound(n);
          break;
        }
        case 'CUSTOM': {
          const v = d.value || {};
          switch (d.name) {
            case 'llmstream.serp_summary':
              reply.serpSummary += v.text || '';
              break;
            case 'llmstream.serp_queries':
              reply.queries = v.queries || [];
              break;
            case 'llmstream.clarify':
              reply.clarify = v;
              break;
            case 'llmstream.artifacts':
              reply.artifacts = v.items ?? v;
              break;
            case 'llmstream.violation':
              reply.violation(v);
              break;
          }
          break;
        }
        case 'RUN_FINISHED': {
          const u = (d.usage || [])[0];
          if (u) {
            reply.model = u.model || reply.model;
            reply.usage = { input_tokens: u.inputTokens, output_tokens: u.outputTokens };
          }
          reply.end(llmstreamMeta(d).finishReason);
          break;
        }
        case 'RUN_ERROR':
          reply.fail(d.message, d.code);
          break;
      }
    };
  },
};

/** protocols lists the protocols the page can read. */
export const protocols = Object.keys(adapters);

/**
 * newReader returns a function that takes one SSE event ({event, data} or
 * {comment}) of protocol's stream and updates reply.
 */
export function newReader(protocol, reply) {
  const make = adapters[protocol];
  if (!make) throw new Error(`the playground cannot read protocol ${protocol}`);
  const handle = make(reply);
  return (ev) => {
    if (ev.comment !== undefined) {
      reply.raw(':', ev.comment);
      return;
    }
    reply.raw(ev.event, ev.data);
    if (ev.data === '[DONE]') {
      handle('[DONE]', null);
      return;
    }
    const d = parse(ev.data);
    if (d === null) return;
    handle(ev.event === 'message' ? d.type || 'message' : ev.event, d);
  };
}
