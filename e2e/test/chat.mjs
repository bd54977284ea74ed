// A Chat for Node: the `ai` package's AbstractChat (what useChat wraps in
// React) with a plain in-memory ChatState, so that the tests drive exactly
// the request/stream/status machinery a page runs.
import { AbstractChat, DefaultChatTransport } from 'ai';

/** MemoryState is a ChatState that keeps the messages in an array. */
export class MemoryState {
  status = 'ready';
  error = undefined;
  messages = [];
  /** statuses records the statuses the chat went through, in order. */
  statuses = [];
  pushMessage = (m) => {
    this.messages = [...this.messages, m];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (i, m) => {
    this.messages = this.messages.map((old, j) => (j === i ? m : old));
  };
  snapshot = (thing) => structuredClone(thing);
}

/** NodeChat is AbstractChat over MemoryState, recording its callbacks. */
export class NodeChat extends AbstractChat {
  constructor({ api, fetch, ...options }) {
    const state = new MemoryState();
    const calls = { errors: [], finishes: [], data: [], toolCalls: [] };
    super({
      ...options,
      state,
      transport: new DefaultChatTransport({ api, fetch }),
      onError: (e) => calls.errors.push(e),
      onFinish: (f) => calls.finishes.push(f),
      onData: (d) => calls.data.push(d),
      onToolCall: ({ toolCall }) => {
        calls.toolCalls.push(toolCall);
      },
    });
    this.memory = state;
    this.calls = calls;
  }

  setStatus(s) {
    super.setStatus(s);
    if (this.memory.statuses.at(-1) !== s.status) this.memory.statuses.push(s.status);
  }
}
