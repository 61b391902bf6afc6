/**
 * The pages' only script and style sheet, served by the portal itself (no CDN; works offline). The
 * script turns each `form[data-api]` into a JSON call of the portal API with the session's CSRF token
 * (POST, or the form's data-method; a `data-list` field is sent as a list of its comma-separated values),
 * shows a new secret once (with a copy button), goes to the answer's own page where the form names one
 * (data-next) or reloads the page after other changes, and follows a running job (data-poll). Pages work for
 * reading without it; every control is a native form element, so the keyboard reaches all of them.
 */
export const PORTAL_SCRIPT = `'use strict';
const csrf = document.querySelector('meta[name="csrf-token"]').content;
const status = document.getElementById('status');
const secretPanel = document.getElementById('secret-panel');

function say(text) { status.textContent = text; }

function showSecret(answer) {
  document.getElementById('secret-client-id').textContent = answer.client_id;
  document.getElementById('secret-value').value = answer.client_secret;
  const until = document.getElementById('secret-overlap');
  until.textContent = answer.previous_secret_usable_until
    ? 'The previous secret keeps working until ' + answer.previous_secret_usable_until + '.'
    : '';
  secretPanel.hidden = false;
  document.getElementById('secret-value').focus();
}

document.addEventListener('submit', async (event) => {
  const form = event.target;
  if (!form.matches('form[data-api]')) return;
  event.preventDefault();
  const body = {};
  for (const [name, value] of new FormData(form)) {
    const field = form.elements[name];
    body[name] = field.type === 'number' ? Number(value) : field.type === 'datetime-local' ? new Date(value).toISOString() : field.hasAttribute('data-list') ? value.split(/[\\s,]+/).filter(Boolean) : value;
  }
  say('Working…');
  const response = await fetch(form.dataset.api, {
    method: form.dataset.method || 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) { say('Refused (' + response.status + '): ' + (answer.message || response.statusText)); return; }
  if (answer.client_secret) { say('Done: a new secret was issued.'); showSecret(answer); return; }
  // A form whose answer has its own page (a replay's progress) goes there: data-next names it, {field} from the answer.
  if (form.dataset.next) { location.assign(form.dataset.next.replace(/\\{(\\w+)\\}/g, (_, key) => encodeURIComponent(answer[key]))); return; }
  say('Done.');
  location.reload();
});

// An element with data-poll shows a job's progress: its [data-field] cells follow the API's answer,
// asked every data-poll-ms while data-poll-while (field=value) holds.
const polled = document.querySelector('[data-poll]');
if (polled) {
  const [whileField, whileValue] = polled.dataset.pollWhile.split('=');
  const poll = async () => {
    const response = await fetch(polled.dataset.poll, { credentials: 'same-origin' });
    if (!response.ok) { say('The progress could not be read (' + response.status + '); refresh the page.'); return; }
    const answer = await response.json();
    for (const cell of polled.querySelectorAll('[data-field]')) cell.textContent = answer[cell.dataset.field] ?? '';
    if (String(answer[whileField]) === whileValue) setTimeout(poll, Number(polled.dataset.pollMs));
    else say('Finished: ' + answer[whileField] + '.');
  };
  if (polled.querySelector('[data-field="' + whileField + '"]').textContent === whileValue) setTimeout(poll, Number(polled.dataset.pollMs));
}

if (secretPanel) {
  document.getElementById('copy-secret').addEventListener('click', async () => {
    await navigator.clipboard.writeText(document.getElementById('secret-value').value);
    say('The secret is copied to the clipboard.');
  });
  document.getElementById('secret-done').addEventListener('click', () => location.reload());
}
`;

export const PORTAL_STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fff; }
header, main { padding: 0 1.5rem; }
header { display: flex; gap: 1rem; align-items: center; border-bottom: 1px solid #767676; }
header nav { flex: 1; }
header nav a { margin-right: 1rem; }
a { color: #0b57d0; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #767676; padding: 0.25rem 0.5rem; text-align: left; }
form { display: inline-flex; gap: 0.25rem; align-items: center; margin: 0.1rem 0; }
button { font: inherit; padding: 0.2rem 0.6rem; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
#secret-panel { border: 2px solid #b3261e; padding: 0.5rem 1rem; margin: 1rem 0; }
#secret-value { width: 32rem; font-family: monospace; }
.warning { color: #b3261e; font-weight: bold; }
code { font-family: monospace; }
`;
