// Checking what a responses route sends against the Open Responses wire:
// every Response, streamed event and WebSocket frame the e2e tests receive
// goes through these functions. The shapes are our own schemas
// (openresponses_schema.mjs, written from the specification, version
// 2026-04-24); on top of them this file checks the state rules the
// specification states in prose, which no schema can:
//   - a Response's status agrees with the event that carries it
//     (response.completed carries a completed response, …);
//   - completed_at is set exactly when the response completed, error
//     exactly when it failed, incomplete_details exactly when it is
//     incomplete;
//   - a completed response holds no item still in progress;
//   - an item is added in progress and done in a terminal state.
import assert from 'node:assert/strict';

import { check, hasEventShape, SPEC_VERSION } from './openresponses_schema.mjs';

export { SPEC_VERSION };

// What status the response of each lifecycle event may have.
const snapshotStatus = {
  'response.created': ['queued', 'in_progress'],
  'response.queued': ['queued'],
  'response.in_progress': ['in_progress'],
  'response.completed': ['completed'],
  'response.failed': ['failed'],
  'response.incomplete': ['incomplete'],
};

/** stateErrors checks a Response's members against its status. */
function stateErrors(r) {
  const out = [];
  const is = (status) => r.status === status;
  if (is('completed') !== Number.isInteger(r.completed_at)) out.push(`a ${r.status} response has completed_at ${r.completed_at}`);
  if (is('completed') && r.completed_at < r.created_at) out.push('completed_at is before created_at');
  if (is('failed') !== (r.error !== null)) out.push(`a ${r.status} response has error ${JSON.stringify(r.error)}`);
  if (is('incomplete') !== (r.incomplete_details !== null)) out.push(`a ${r.status} response has incomplete_details ${JSON.stringify(r.incomplete_details)}`);
  if (is('completed')) {
    r.output.forEach((item, i) => {
      if (item.status === 'in_progress') out.push(`output[${i}] (${item.type}) is still in progress in a completed response`);
    });
  }
  return out;
}

/** responseErrors says what is wrong with a Response object, or []. */
export function responseErrors(r) {
  const errs = check('Response', r);
  return errs.length ? errs : stateErrors(r);
}

/** compactedErrors says what is wrong with a response.compaction object. */
export const compactedErrors = (c) => check('Compacted', c);

/** requestErrors says what is wrong with a WebSocket response.create frame. */
export const requestErrors = (body) => check('ResponseCreate', body);

/**
 * eventErrors says what is wrong with one streamed event, or []. transport
 * is 'http' for an SSE event and 'websocket' for a frame, where a turn
 * that fails before it has a response is an error frame with a status.
 */
export function eventErrors(ev, transport = 'http') {
  const type = ev?.type;
  if (transport === 'websocket' && type === 'error' && ev && 'status' in ev) return check('WebSocketError', ev);
  if (typeof type !== 'string' || !hasEventShape(type)) return [`${JSON.stringify(type)}: not an event of the responses wire`];
  const errs = check(`Event/${type}`, ev);
  if (errs.length) return errs;
  if (type in snapshotStatus) {
    if (!snapshotStatus[type].includes(ev.response.status)) errs.push(`${type} carries a ${ev.response.status} response`);
    errs.push(...stateErrors(ev.response).map((e) => `${type}: ${e}`));
  }
  const status = ev.item?.status;
  if (type === 'response.output_item.added' && status !== undefined && status !== 'in_progress') errs.push(`${type}: a ${ev.item.type} item added ${status}`);
  if (type === 'response.output_item.done' && status === 'in_progress') errs.push(`${type}: a ${ev.item.type} item done still in progress`);
  return errs;
}

/** assertResponse, assertEvent and assertCompacted fail with what is wrong. */
export function assertResponse(r) {
  const errs = responseErrors(r);
  assert.deepEqual(errs, [], `the Response breaks the Open Responses wire (${SPEC_VERSION}):\n${errs.join('\n')}\n${JSON.stringify(r)}`);
}

export function assertEvent(ev, transport = 'http') {
  const errs = eventErrors(ev, transport);
  assert.deepEqual(errs, [], `${ev?.type} breaks the Open Responses wire (${SPEC_VERSION}):\n${errs.join('\n')}\n${JSON.stringify(ev)}`);
}

export function assertCompacted(c) {
  const errs = compactedErrors(c);
  assert.deepEqual(errs, [], `the compaction breaks the Open Responses wire (${SPEC_VERSION}):\n${errs.join('\n')}\n${JSON.stringify(c)}`);
}
