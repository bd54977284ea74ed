// The browser entry: a form, the message list and the status line, bound to
// the chat of chat.js. The route is /api/chat (the default Caddyfile's
// aisdk route) unless the page's URL names another with ?api=…; ?q=… sends
// a first message at once.
import { createChat } from './chat.js';
import { renderMessage, renderStatus } from './render.js';

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);

const chat = createChat({
  api: params.get('api') ?? '/api/chat',
  onChange: (state) => {
    $('messages').innerHTML = state.messages.map(renderMessage).join('');
    $('status').innerHTML = renderStatus(state.status, state.error);
    $('send').disabled = state.status === 'submitted' || state.status === 'streaming';
    $('stop').disabled = !$('send').disabled;
  },
});

$('form').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('input').value.trim();
  if (!text) return;
  $('input').value = '';
  chat.sendMessage({ text });
});
$('stop').addEventListener('click', () => chat.stop());
// An approval's buttons (render.js) answer the call that waits for it.
$('messages').addEventListener('click', (e) => {
  const b = e.target.closest('button[data-approval-id]');
  if (b) chat.addToolApprovalResponse({ id: b.dataset.approvalId, approved: b.dataset.approved === 'true' });
});

if (params.get('q')) chat.sendMessage({ text: params.get('q') });
