// parseHistoryMessages: the @skillpet/chat component's reading of the
// history that GET {baseUrl}/init/{projectId} returns, ported from its
// contract in specs/002 §4 (and §3.7, §3.8 for the image and resource
// parts): what a conversation route must store for the component to
// restore it.

/** The storage markers of specs/002 §4.1. */
export const ASST_MARKER = '_pub_asst';
export const TOOL_MARKER = '_pub_tool';

const ASK_USER_PREFIX = '[ask_user]';
const AWAITING_PREFIX = '[等待用户选择] ';
const IMAGE_PREFIX = '[image_generation]';

/** parseJSON returns the object content holds, or undefined. */
function parseJSON(content) {
  try {
    const v = JSON.parse(content);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** restoreParts reads a _pub_asst parts array (§3.8 方案 A). */
function restoreParts(parts) {
  return parts
    .map((p) => {
      if (p?.type === 'text' && typeof p.content === 'string') return { type: 'text', content: p.content };
      if (p?.type === 'resource' && p.resource && typeof p.resource === 'object') return { type: 'resource', resource: p.resource };
      return null;
    })
    .filter((p) => p !== null);
}

/**
 * parseHistoryMessages restores the messages of ChatInitData.messages
 * ({id, role, content}, oldest first):
 * - assistant: a `_t: "_pub_asst"` object shows its `text`, or its
 *   `parts` when it has them (text and resource parts in order); its
 *   `tool_calls` are kept for context; any other content is plain text;
 * - tool: a `_t: "_pub_tool"` object's `body`: `[ask_user] <questions
 *   JSON>` becomes an answered form `askUser: {questions, status:
 *   "answered"}` (§4.4), `[等待用户选择] <text>` an interactive tool's
 *   prompt (§4.5), `[image_generation] <JSON>` an image block (§3.7),
 *   anything else a tool result;
 * - user: the content as text.
 */
export function parseHistoryMessages(raw) {
  const out = [];
  for (const m of raw ?? []) {
    const base = { id: m.id, role: m.role };
    if (m.role === 'assistant') {
      const data = parseJSON(m.content);
      if (data?._t !== ASST_MARKER) {
        out.push({ ...base, content: m.content });
        continue;
      }
      const msg = { ...base, content: typeof data.text === 'string' ? data.text : '' };
      if (Array.isArray(data.parts)) msg.parts = restoreParts(data.parts);
      if (Array.isArray(data.tool_calls) && data.tool_calls.length) msg.toolCalls = data.tool_calls;
      out.push(msg);
    } else if (m.role === 'tool') {
      const data = parseJSON(m.content);
      if (data?._t !== TOOL_MARKER) {
        out.push({ ...base, content: m.content });
        continue;
      }
      const body = String(data.body ?? '');
      const msg = { ...base, toolCallId: data.toolCallId };
      if (body.startsWith(ASK_USER_PREFIX)) {
        msg.askUser = { questions: JSON.parse(body.slice(ASK_USER_PREFIX.length).trim()), status: 'answered' };
      } else if (body.startsWith(AWAITING_PREFIX)) {
        msg.content = body.slice(AWAITING_PREFIX.length);
        msg.awaitingChoice = true;
      } else if (body.startsWith(IMAGE_PREFIX)) {
        msg.imageGeneration = JSON.parse(body.slice(IMAGE_PREFIX.length).trim());
      } else {
        msg.content = body;
      }
      out.push(msg);
    } else {
      out.push({ ...base, content: m.content });
    }
  }
  return out;
}

/**
 * formatAnswers writes ask_user answers as the component does before it
 * posts them as the next message (specs/002 §3.4: "题材方向：玄幻/修仙\n目标篇幅：…").
 */
export function formatAnswers(questions, pick) {
  return questions.map((q) => `${q.prompt}：${pick(q)}`).join('\n');
}
