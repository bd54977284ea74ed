// An SSE reader (the WHATWG event-stream rules: lines end with CRLF, LF or
// CR; "event", "data" (joined by LF), "id"; a line starting with ":" is a
// comment; an empty line dispatches). Every llmstream protocol streams
// SSE; the page reads the body itself, since EventSource cannot POST.

/**
 * readSSE reads the events of a fetch Response body and calls onEvent with
 * {event, data, comment} for each (a comment is a keep-alive), and onBytes
 * with the size of each chunk as it arrives. It resolves when the body ends.
 */
export async function readSSE(body, onEvent, onBytes = () => {}) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let event = '';
  let data = [];
  let sawCR = false;
  const line = (l) => {
    if (l === '') {
      if (data.length || event) onEvent({ event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      return;
    }
    if (l.startsWith(':')) {
      onEvent({ comment: l.slice(1) });
      return;
    }
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  };
  const feed = (text) => {
    for (let k = 0; k < text.length; k++) {
      const c = text[k];
      if (c === '\n') {
        if (sawCR) {
          sawCR = false;
          continue;
        }
        line(buf);
        buf = '';
      } else if (c === '\r') {
        sawCR = true;
        line(buf);
        buf = '';
      } else {
        sawCR = false;
        buf += c;
      }
    }
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    onBytes(value.length);
    feed(decoder.decode(value, { stream: true }));
  }
  feed(decoder.decode());
  if (buf !== '') line(buf);
  line('');
}
