// Reading the gateway's SSE protocols (gymbro, jsonseq, skillpet) the way a
// browser or Node client does: fetch, then eventsource-parser.
import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';

/**
 * post sends body as JSON and parses the SSE reply with eventsource-parser.
 * It returns the response, the events ({event, data: parsed JSON, raw}), the
 * comments, and any parser error (an unknown field, a bad retry).
 */
export async function postSSE(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const events = [];
  const comments = [];
  const errors = [];
  const parser = createParser({
    onEvent: (e) => events.push({ event: e.event, raw: e.data, data: JSON.parse(e.data) }),
    onComment: (c) => comments.push(c),
    onError: (err) => errors.push(err),
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  return { res, events, comments, errors };
}

/**
 * checkSSEHeaders asserts what every SSE protocol answers (CONTRACT §5),
 * and that the client's X-Request-Id is echoed.
 */
export function checkSSEHeaders(res, requestID) {
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assert.equal(res.headers.get('cache-control'), 'no-cache');
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  if (requestID) assert.equal(res.headers.get('x-request-id'), requestID);
}

/** names lists the event names in order. */
export const names = (events) => events.map((e) => e.event);

/** only keeps the events with one of the names. */
export const only = (events, ...wanted) => events.filter((e) => wanted.includes(e.event));

/** utf8Cut decodes the first n bytes of s. */
export const utf8Cut = (s, n) => Buffer.from(s, 'utf8').subarray(0, n).toString('utf8');

/** chars counts Unicode code points, as reply_len does. */
export const chars = (s) => [...s].length;
