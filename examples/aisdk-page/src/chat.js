// The chat logic of the page: the `ai` package's own Chat machinery
// (AbstractChat, which React's useChat, Vue's and Svelte's Chat all wrap)
// with its default transport, DefaultChatTransport, pointed at an llmstream
// route with `protocol aisdk` and `request_format aisdk`. Nothing here knows
// llmstream: the page renders what the SDK assembles. It has no DOM code, so
// it runs in a browser and, headless, in Node (e2e/test/page.test.mjs).
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';

/**
 * ObservableState is the ChatState a framework binding provides (React's
 * keeps it in useSyncExternalStore): the messages, the status, the error,
 * and a listener called after every change.
 */
export class ObservableState {
  status = 'ready';
  error = undefined;
  messages = [];

  constructor(onChange = () => {}) {
    this.onChange = onChange;
  }

  #set(changes) {
    Object.assign(this, changes);
    this.onChange(this);
  }

  pushMessage = (message) => this.#set({ messages: [...this.messages, message] });
  popMessage = () => this.#set({ messages: this.messages.slice(0, -1) });
  replaceMessage = (index, message) => this.#set({ messages: this.messages.map((m, i) => (i === index ? message : m)) });
  snapshot = (thing) => structuredClone(thing);
}

/** PageChat is a Chat whose status changes also reach the listener. */
export class PageChat extends AbstractChat {
  constructor({ api, onChange, ...options }) {
    const state = new ObservableState(onChange);
    // Once every approval the gateway asked for is answered
    // (addToolApprovalResponse), the answers go back at once: llmstream
    // resumes the waiting calls on that request's stream.
    super({
      ...options,
      state,
      transport: new DefaultChatTransport({ api }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    this.observable = state;
  }

  setStatus(s) {
    super.setStatus(s);
    this.observable.onChange(this.observable);
  }
}

/**
 * createChat returns a chat against api (an llmstream aisdk route).
 * onChange(state) is called after every update; onError and onFinish are
 * the SDK's callbacks.
 */
export function createChat({ api = '/api/chat', onChange, onError, onFinish } = {}) {
  return new PageChat({ api, onChange, onError, onFinish });
}
