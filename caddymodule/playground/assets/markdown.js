// A small Markdown renderer for the playground's answers, safe by
// construction: the text is HTML-escaped first, and only the tags this
// file writes ever reach the page (no raw HTML passes, links keep to
// http, https, mailto and same-origin paths, images become links). It
// covers what models write: headings, paragraphs, lists, block quotes,
// fenced code, tables, rules, and inline code, emphasis, strike-through
// and links. HTML comments are dropped (ThinkingML's serp_queries comment
// is not part of the answer the user reads).

/** escape makes text safe inside an element or a quoted attribute. */
export function escape(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

/** safeURL returns an escaped href for url, or '' when its scheme is not allowed. */
function safeURL(url) {
  // Browsers drop control characters and blanks from a URL before they read
  // its scheme: so does the check.
  const u = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  if (/^(https?:|mailto:)/i.test(u) || /^[/#?]/.test(u) || (!/^[a-z][a-z0-9+.-]*:/i.test(u) && !u.startsWith('//'))) {
    return escape(u);
  }
  return '';
}

/** inline renders the inline Markdown of one escaped-on-the-way line of text. */
function inline(src) {
  // Code spans first: their content is literal.
  const out = [];
  let rest = src;
  const code = /(`+)([\s\S]*?[^`])\1(?!`)/;
  for (;;) {
    const m = code.exec(rest);
    if (!m) {
      out.push(spans(rest));
      break;
    }
    out.push(spans(rest.slice(0, m.index)));
    out.push(`<code>${escape(m[2].replace(/^ (.*) $/, '$1'))}</code>`);
    rest = rest.slice(m.index + m[0].length);
  }
  return out.join('');
}

/** spans renders links, emphasis and strike-through in text without code spans. */
function spans(text) {
  let s = escape(text);
  // Images become links: the page loads nothing from elsewhere.
  s = s.replace(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+&quot;[^&]*&quot;)?\)/g, (all, alt, url) => link(alt || url, url, all));
  s = s.replace(/\[([^\]]+)\]\(([^)\s]+)(?:\s+&quot;[^&]*&quot;)?\)/g, (all, label, url) => link(label, url, all));
  s = s.replace(/\*\*([^*\s](?:[^*]*[^*\s])?)\*\*/g, '<strong>$1</strong>');
  s = s.replace(/__([^_\s](?:[^_]*[^_\s])?)__/g, '<strong>$1</strong>');
  s = s.replace(/(^|[^*\w])\*([^*\s](?:[^*]*[^*\s])?)\*(?!\w)/g, '$1<em>$2</em>');
  s = s.replace(/(^|[^_\w])_([^_\s](?:[^_]*[^_\s])?)_(?!\w)/g, '$1<em>$2</em>');
  s = s.replace(/~~([^~]+)~~/g, '<del>$1</del>');
  return s;
}

/** link writes an anchor for escaped label and url (already escaped by spans). */
function link(label, url, all) {
  // url was escaped with the text: undo the entities for the check, then escape again.
  const raw = url.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
  const href = safeURL(raw);
  if (!href) return all;
  return `<a href="${href}" rel="noopener noreferrer nofollow" target="_blank">${label}</a>`;
}

const reFence = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const reHeading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const reRule = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const reBullet = /^(\s*)([-*+])\s+(.*)$/;
const reOrdered = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
const reQuote = /^ {0,3}>\s?(.*)$/;
const reTableSep = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

/** cells splits a table row into its cells. */
function cells(row) {
  let r = row.trim();
  if (r.startsWith('|')) r = r.slice(1);
  if (r.endsWith('|') && !r.endsWith('\\|')) r = r.slice(0, -1);
  return r.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

/**
 * renderMarkdown returns the HTML of src. Every character of src reaches the
 * HTML as text except the Markdown syntax it reads; nothing in src can add a
 * tag, an attribute or a script.
 */
export function renderMarkdown(src) {
  const text = String(src).replace(/\r\n?/g, '\n').replace(/<!--[\s\S]*?(-->|$)/g, '');
  const lines = text.split('\n');
  const html = [];
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) html.push(`<p>${para.map(inline).join('<br>')}</p>`);
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = reFence.exec(line))) {
      flush();
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i++; // the closing fence (or the end)
      const lang = m[2] ? ` class="language-${escape(m[2])}"` : '';
      html.push(`<pre><code${lang}>${escape(body.join('\n'))}</code></pre>`);
      continue;
    }
    if (line.trim() === '') {
      flush();
      i++;
      continue;
    }
    if ((m = reHeading.exec(line))) {
      flush();
      const n = m[1].length;
      html.push(`<h${n}>${inline(m[2])}</h${n}>`);
      i++;
      continue;
    }
    if (reRule.test(line)) {
      flush();
      html.push('<hr>');
      i++;
      continue;
    }
    if (reQuote.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && (m = reQuote.exec(lines[i]))) {
        body.push(m[1]);
        i++;
      }
      html.push(`<blockquote>${renderMarkdown(body.join('\n'))}</blockquote>`);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && reTableSep.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      flush();
      const head = cells(line);
      i += 2;
      const rows = [];
      while (i < lines.length && lines[i].includes('|') && lines[i].trim() !== '') rows.push(cells(lines[i++]));
      html.push(
        '<table><thead><tr>' + head.map((c) => `<th>${inline(c)}</th>`).join('') + '</tr></thead><tbody>' +
          rows.map((r) => '<tr>' + head.map((_, k) => `<td>${inline(r[k] ?? '')}</td>`).join('') + '</tr>').join('') +
          '</tbody></table>',
      );
      continue;
    }
    if (reBullet.test(line) || reOrdered.test(line)) {
      flush();
      const ordered = !reBullet.test(line);
      const re = ordered ? reOrdered : reBullet;
      const items = [];
      while (i < lines.length) {
        const l = lines[i];
        if ((m = re.exec(l))) {
          items.push([m[3]]);
          i++;
        } else if (l.trim() !== '' && items.length && /^\s+\S/.test(l) && !reFence.test(l)) {
          items[items.length - 1].push(l.trim()); // a continuation line
          i++;
        } else {
          break;
        }
      }
      const tag = ordered ? 'ol' : 'ul';
      html.push(`<${tag}>` + items.map((it) => `<li>${it.map(inline).join('<br>')}</li>`).join('') + `</${tag}>`);
      continue;
    }
    para.push(line);
    i++;
  }
  flush();
  return html.join('\n');
}
