// What a client has received when the upstream broke off (the *_cut mocks):
// CONTRACT §6 says everything decoded before the cut is delivered. These
// compute, from the bytes the mock sent, the answer text the model had
// written by then.
import { CUTS, MOCKS, cutPrefix } from './expected.mjs';

/**
 * partialAnswer is the answer text in the reply's first bytes, for the
 * chunk size: what the client must hold when the error arrives (a trailing
 * run of whitespace may still be held back by the parser, see trimmed).
 */
export function partialAnswer(cutName, chunk) {
  const cut = CUTS[cutName];
  const prefix = cutPrefix(cut, chunk);
  switch (MOCKS[cut.full].format) {
    case 'thinkingml': {
      const body = prefix.slice(prefix.indexOf('</thinking>'));
      const at = body.indexOf('<final>');
      return at < 0 ? '' : body.slice(at + '<final>'.length);
    }
    case 'aiplan': {
      const m = prefix.match(/"direct_response":\s*"((?:[^"\\]|\\.)*)/);
      if (!m) return '';
      // Drop an escape the cut split, then decode the JSON string so far.
      const s = m[1].replace(/\\(u[0-9a-fA-F]{0,3})?$/, '');
      return JSON.parse(`"${s}"`);
    }
    case 'text':
      return prefix;
  }
  throw new Error(`no partial answer for ${cutName}`);
}

/** matchesPartial says whether got is the partial answer, give or take the trailing whitespace a parser may hold back at the cut. */
export const matchesPartial = (got, want) => got === want || got === want.trimEnd();
