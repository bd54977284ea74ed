// Rendering a UIMessage as HTML: every part llmstream's aisdk protocol
// sends. Pure functions from the SDK's message objects to strings, so that
// Node can check them (e2e/test/page.test.mjs) and the page can set them.
import { getToolName, isToolUIPart } from 'ai';

/** escape makes text safe inside HTML. */
export const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

const json = (v) => escape(JSON.stringify(v, null, 2));

/** output renders a tool's output: text as it is, anything else as JSON. */
const output = (v) => (typeof v === 'string' ? escape(v) : json(v));

/** renderPart renders one part of an assistant or user message. */
export function renderPart(part) {
  if (isToolUIPart(part)) {
    // A tool the gateway ran (llmstream's agent loop) is providerExecuted:
    // its output comes in the stream, the page runs nothing.
    return (
      `<div class="part tool" data-state="${escape(part.state)}"${part.providerExecuted ? ' data-run-by="gateway"' : ''}>` +
      `<div class="label">tool call: <code>${escape(getToolName(part))}</code> (${escape(part.state)})` +
      (part.title ? ` <span class="title">${escape(part.title)}</span>` : '') +
      `</div>` +
      `<pre class="input">${json(part.input)}</pre>` +
      // A call that waits for the user's approval (a tool the route marks
      // approve): the buttons answer it (main.js, addToolApprovalResponse).
      (part.state === 'approval-requested'
        ? `<div class="approval">` +
          `<button type="button" data-approval-id="${escape(part.approval.id)}" data-approved="true">Approve</button>` +
          `<button type="button" data-approval-id="${escape(part.approval.id)}" data-approved="false">Deny</button></div>`
        : '') +
      (part.state === 'output-denied' ? `<div class="denied">denied</div>` : '') +
      (part.state === 'output-available' ? `<pre class="output">${output(part.output)}</pre>` : '') +
      (part.errorText ? `<div class="error">${escape(part.errorText)}</div>` : '') +
      `</div>`
    );
  }
  switch (part.type) {
    case 'text':
      return `<div class="part text">${escape(part.text)}</div>`;
    case 'reasoning':
      return `<details class="part reasoning" open><summary>reasoning</summary><div>${escape(part.text)}</div></details>`;
    case 'data-phase':
      return `<h4 class="part phase">Phase ${escape(part.data.id)}: ${escape(part.data.title)}</h4>`;
    case 'data-serp-summary':
      return `<div class="part summary">${escape(part.data.text)}</div>`;
    case 'data-serp-queries':
      return `<div class="part queries">Related searches: <ul>${part.data.queries.map((q) => `<li>${escape(q)}</li>`).join('')}</ul></div>`;
    case 'data-clarify':
      return (
        `<div class="part clarify"><div class="question">${escape(part.data.question)}</div>` +
        `<div class="options">${(part.data.options ?? []).map((o) => `<button type="button">${escape(o)}</button>`).join('')}</div></div>`
      );
    case 'data-artifacts':
      return `<div class="part artifacts"><div class="label">artifacts</div><pre>${json(part.data.items)}</pre></div>`;
    case 'data-tool-progress': {
      // A running tool's progress, replaced in place as it goes.
      const d = part.data;
      const count = d.total ? `${d.progress}/${d.total}` : `${d.progress}`;
      return `<div class="part progress" data-tool="${escape(d.toolCallId)}">${escape(d.toolName)}: ${escape(count)}${d.message ? ` ${escape(d.message)}` : ''}</div>`;
    }
    case 'data-violations':
      return `<div class="part violations">format violations: ${part.data.violations.map((v) => `<code>${escape(v.code)}</code>`).join(' ')}</div>`;
    case 'data-file-ready':
      return `<div class="part file"><a href="${escape(part.data.url)}" download="${escape(part.data.name)}">${escape(part.data.name)}</a> <span class="type">${escape(part.data.type)}</span></div>`;
    case 'data-resource-updated':
      return `<div class="part resource" data-key="${escape(part.data.key)}"><div class="label">${escape(part.data.key)}</div><pre>${json(part.data.snapshot)}</pre></div>`;
    case 'file':
      return part.mediaType?.startsWith('image/')
        ? `<img class="part image" src="${escape(part.url)}" alt="">`
        : `<div class="part file"><a href="${escape(part.url)}">${escape(part.filename ?? part.url)}</a></div>`;
    case 'step-start':
      return '';
    default:
      // Parts this page does not know (files, sources, other data-*).
      return `<div class="part other"><code>${escape(part.type)}</code></div>`;
  }
}

/** renderMessage renders a message with its parts in order. */
export function renderMessage(message) {
  return `<article class="message ${escape(message.role)}" data-id="${escape(message.id)}">${message.parts.map(renderPart).join('')}</article>`;
}

/** renderStatus renders the chat status and its error. */
export function renderStatus(status, error) {
  return `<span class="status" data-status="${escape(status)}">${escape(status)}</span>` + (error ? ` <span class="error">${escape(error.message)}</span>` : '');
}
