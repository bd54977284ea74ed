// The playground page: the route list (routes.json, from the running
// config), one conversation per route, and each reply rendered as it
// arrives. Every piece of text from a stream reaches the DOM either as a
// text node or through renderMarkdown, which writes only its own tags.

import { escape, renderMarkdown } from './markdown.js';
import { Conversation, Reply, buildRequest, newReader, protocols } from './protocols.js';
import { readSSE } from './sse.js';

const $ = (id) => document.getElementById(id);
const state = { routes: [], route: null, convs: new Map(), running: null };

/** ms formats a duration in milliseconds. */
const ms = (v) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`);

function setState(s, text = s) {
  const el = $('state');
  el.dataset.state = s;
  el.textContent = text;
}

async function loadRoutes() {
  const res = await fetch('routes.json', { cache: 'no-store' });
  const routes = await res.json();
  state.routes = routes.filter((r) => r.endpoint && protocols.includes(r.protocol));
  const list = $('routes');
  list.replaceChildren();
  if (!state.routes.length) {
    list.innerHTML = '<li class="muted">No llm_stream route on this server.</li>';
    return;
  }
  for (const r of state.routes) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'route';
    b.dataset.endpoint = r.endpoint;
    b.innerHTML =
      `<span class="path">${escape(r.endpoint)}</span>` +
      `<span class="tags"><span class="tag proto">${escape(r.protocol)}</span>` +
      (r.tool_servers?.length ? '<span class="tag tools">tools</span>' : '') +
      (r.conversation ? '<span class="tag conv">conversation</span>' : '') +
      '</span>';
    b.addEventListener('click', () => select(r));
    li.append(b);
    list.append(li);
  }
  const want = new URLSearchParams(location.search).get('route');
  select(state.routes.find((r) => r.endpoint === want) || state.routes[0]);
}

function select(route) {
  if (state.running) return;
  state.route = route;
  for (const b of document.querySelectorAll('button.route')) b.classList.toggle('selected', b.dataset.endpoint === route.endpoint);
  const facts = [
    ['protocol', route.protocol],
    ['request', route.request_format],
    ['format', route.format],
    ['model', route.model || "the client's"],
  ];
  if (route.tool_servers?.length) facts.push(['tool servers', route.tool_servers.join(', ')]);
  if (route.validate) facts.push(['validate', 'on']);
  $('route-info').innerHTML =
    `<h2>POST ${escape(route.endpoint)}</h2><dl>` + facts.map(([k, v]) => `<dt>${escape(k)}</dt><dd>${escape(v)}</dd>`).join('') + '</dl>';
  renderTurns();
}

function conv() {
  let c = state.convs.get(state.route.endpoint);
  if (!c) {
    c = new Conversation(state.route);
    c.views = [];
    state.convs.set(state.route.endpoint, c);
  }
  return c;
}

function renderTurns() {
  const turns = $('turns');
  turns.replaceChildren();
  for (const v of conv().views) turns.append(v.el);
}

async function send(text) {
  if (state.running || !text.trim()) return;
  const c = conv();
  const { headers, body } = buildRequest(c, text);
  const reply = new Reply();
  const view = newTurnView(text, reply);
  c.views.push(view);
  $('turns').append(view.el);
  const abort = new AbortController();
  state.running = abort;
  $('send').disabled = true;
  $('stop').disabled = false;
  setState('streaming');
  let frame = 0;
  const paint = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      view.render();
    });
  };
  try {
    const res = await fetch(state.route.endpoint, { method: 'POST', headers, body, signal: abort.signal });
    reply.bytes();
    reply.status = res.status;
    if (!res.ok && !(res.headers.get('content-type') || '').includes('event-stream')) {
      const t = await res.text();
      reply.raw(`HTTP ${res.status}`, t);
      let msg = t;
      try {
        const j = JSON.parse(t);
        msg = j.error?.message || j.message || j.error || t;
      } catch {}
      reply.fail(`HTTP ${res.status}: ${typeof msg === 'string' ? msg : JSON.stringify(msg)}`);
    } else {
      const read = newReader(state.route.protocol, reply);
      await readSSE(res.body, (ev) => {
        read(ev);
        paint();
      }, () => reply.bytes());
      if (!reply.done) reply.end();
    }
  } catch (e) {
    if (e.name === 'AbortError') reply.fail('stopped');
    else reply.fail(String(e.message || e));
  }
  if (frame) cancelAnimationFrame(frame);
  frame = 0;
  view.render();
  c.add(text, reply.answerText());
  state.running = null;
  $('send').disabled = false;
  $('stop').disabled = true;
  setState(reply.error ? 'error' : 'done', reply.error ? 'error' : 'done');
}

/** el makes an element with a class and optional text. */
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** details makes a collapsible section. */
function details(cls, summary, open, body) {
  const d = el('details', cls);
  d.open = open;
  const s = el('summary', '', summary);
  d.append(s, body);
  return d;
}

/** json pretty-prints a JSON value or JSON text. */
function pretty(v) {
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

/** newTurnView is one prompt and its reply on the page, re-rendered as the reply grows. */
function newTurnView(text, reply) {
  const root = el('article', 'turn');
  const user = el('div', 'user');
  user.append(el('span', 'who', 'you'), el('div', 'text', text));
  const body = el('div', 'reply');
  root.append(user, body);
  // Open panels stay open across re-renders: their state is kept by key.
  const open = new Map();
  const keep = (d, key, dflt) => {
    d.open = open.has(key) ? open.get(key) : dflt;
    d.addEventListener('toggle', () => open.set(key, d.open));
    return d;
  };
  let rawShown = false;

  function renderBlock(b, k) {
    switch (b.kind) {
      case 'round': {
        const t = reply.timing.rounds.find((r) => r.round === b.round);
        const h = el('div', 'round', `Round ${b.round}`);
        if (t?.firstToken) h.append(el('span', 'timing', ` · first token ${ms(t.firstToken - t.start)} after the round began`));
        return h;
      }
      case 'reasoning': {
        const pre = el('div', 'reasoning-text', b.text);
        const title = b.title ? `Reasoning · ${b.title}` : 'Reasoning';
        return keep(details('reasoning', title, false, pre), `r${k}`, false);
      }
      case 'answer': {
        const div = el('div', 'answer markdown');
        div.innerHTML = renderMarkdown(b.text);
        return div;
      }
      case 'tools': {
        const box = el('div', 'tools');
        box.append(el('div', 'tools-head', `Tools · round ${b.round}`));
        for (const c of b.calls) {
          const call = el('div', `call ${c.status}`);
          call.dataset.status = c.status;
          const head = el('div', 'call-head');
          head.append(el('code', 'name', c.name), el('span', 'who', c.gateway ? `run by the gateway${c.server ? ` on ${c.server}` : ''}` : 'for the client to run'));
          if (c.label && c.label !== c.name) head.append(el('span', 'label', c.label));
          head.append(el('span', 'status', c.status));
          call.append(head);
          if (c.progress) {
            const p = c.progress;
            const line = el('div', 'progress');
            if (p.total) {
              const bar = el('progress');
              bar.max = p.total;
              bar.value = p.progress ?? 0;
              line.append(bar, el('span', '', ` ${p.progress}/${p.total}`));
            } else if (p.progress != null) line.append(el('span', '', `${p.progress}`));
            if (p.message) line.append(el('span', 'message', ` ${p.message}`));
            call.append(line);
          }
          if (c.args) call.append(keep(details('args', 'arguments', false, el('pre', '', pretty(c.args))), `a${c.id}`, false));
          if (c.output) call.append(keep(details('output', c.status === 'error' ? 'error' : 'result', false, el('pre', '', c.output)), `o${c.id}`, false));
          box.append(call);
        }
        return box;
      }
    }
    return el('div');
  }

  function render() {
    const parts = [];
    if (reply.serpSummary) parts.push(el('div', 'serp-summary', reply.serpSummary));
    reply.blocks.forEach((b, k) => parts.push(renderBlock(b, k)));
    if (reply.queries.length) {
      const box = el('div', 'queries');
      box.append(el('div', 'head', 'Search queries'));
      const ul = el('ul');
      for (const q of reply.queries) ul.append(el('li', '', q));
      box.append(ul);
      parts.push(box);
    }
    if (reply.clarify) {
      const box = el('div', 'clarify');
      box.append(el('div', 'question', reply.clarify.question || ''));
      const opts = el('div', 'options');
      for (const o of reply.clarify.options || []) {
        const b = el('button', 'option', typeof o === 'string' ? o : o.label || JSON.stringify(o));
        b.type = 'button';
        b.addEventListener('click', () => {
          $('prompt').value = b.textContent;
        });
        opts.append(b);
      }
      box.append(opts);
      if (reply.clarify.hint) box.append(el('div', 'hint', pretty(reply.clarify.hint)));
      parts.push(box);
    }
    if (reply.askUser) {
      const box = el('div', 'clarify ask-user');
      for (const q of reply.askUser) {
        box.append(el('div', 'question', q.prompt || q.question || q.title || ''));
        const opts = el('div', 'options');
        for (const o of q.options || []) {
          const b = el('button', 'option', typeof o === 'string' ? o : o.label || o.value || JSON.stringify(o));
          b.type = 'button';
          b.addEventListener('click', () => {
            $('prompt').value = b.textContent;
          });
          opts.append(b);
        }
        box.append(opts);
      }
      parts.push(box);
    }
    if (reply.artifacts) parts.push(keep(details('artifacts', 'Artifacts', true, el('pre', '', pretty(reply.artifacts))), 'artifacts', true));
    if (reply.violations.length) {
      const box = el('div', 'violations');
      box.append(el('div', 'head', `Violations (${reply.violations.length})`));
      const ul = el('ul');
      for (const v of reply.violations) {
        const li = el('li');
        li.append(el('code', 'code', v.code));
        if (v.detail) li.append(el('span', 'detail', ` ${v.detail}`));
        if (v.offset !== undefined) li.append(el('span', 'offset', ` at ${v.offset}`));
        ul.append(li);
      }
      box.append(ul);
      parts.push(box);
    }
    if (reply.error) {
      const e = el('div', 'error');
      e.append(el('strong', '', 'Error'), el('span', '', ` ${reply.error.code ? `${reply.error.code}: ` : ''}${reply.error.message}`));
      parts.push(e);
    }
    parts.push(timings());
    const raw = el('div', 'raw-events');
    const rawD = keep(details('raw', `Raw events (${reply.events.length})`, false, raw), 'raw', false);
    const fill = () => {
      raw.replaceChildren(el('pre', '', reply.events.map((e) => `+${Math.round(e.t)}ms ${e.name}: ${e.data}`).join('\n')));
    };
    if (rawD.open) fill();
    rawD.addEventListener('toggle', () => {
      rawShown = rawD.open;
      if (rawD.open) fill();
    });
    parts.push(rawD);
    body.replaceChildren(...parts);
    root.dataset.done = reply.done ? 'true' : 'false';
  }

  function timings() {
    const t = reply.timing;
    const box = el('div', 'timings');
    const item = (k, v) => {
      const s = el('span', 'timing');
      s.dataset.k = k;
      s.append(el('span', 'k', k), el('span', 'v', v));
      box.append(s);
    };
    if (t.firstByte) item('first byte', ms(t.firstByte - t.sent));
    if (t.firstToken) item('first token', ms(t.firstToken - t.sent));
    if (t.end) item('total', ms(t.end - t.sent));
    if (t.rounds.length > 1) item('rounds', String(t.rounds.length));
    if (reply.model) item('model', reply.model);
    if (reply.finish) item('finish', reply.finish);
    const u = reply.usage;
    if (u) {
      const input = u.prompt_tokens ?? u.input_tokens;
      const output = u.completion_tokens ?? u.output_tokens;
      if (input != null || output != null) item('tokens', `${input ?? '?'} in · ${output ?? '?'} out`);
    }
    return box;
  }

  render();
  return { el: root, render, get rawShown() { return rawShown; } };
}

$('prompt-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('prompt').value;
  $('prompt').value = '';
  send(text);
});
$('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) $('prompt-form').requestSubmit();
});
$('stop').addEventListener('click', () => state.running?.abort());
$('new').addEventListener('click', () => {
  if (state.running || !state.route) return;
  state.convs.delete(state.route.endpoint);
  renderTurns();
});

loadRoutes().then(() => {
  const q = new URLSearchParams(location.search).get('q');
  if (q) send(q);
}, (e) => {
  $('routes').innerHTML = `<li class="error">${escape(e.message || e)}</li>`;
});
