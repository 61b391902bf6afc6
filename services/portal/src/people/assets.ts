/**
 * The pages' only script and style sheet, served by the portal itself (no CDN; works offline). The
 * script turns each `form[data-api]` into a JSON call of the portal API with the session's CSRF token
 * (POST, or the form's data-method; a `data-list` field is sent as a list of its comma-separated values),
 * shows a new secret once (with a copy button) or what else an answer shows once in a panel (data-once),
 * sends a field's text as the body as it is (data-body, a skills file, filled from an upload by
 * data-file-into) and lists the catalogue's answer (data-checks), goes to the answer's own page where the
 * form names one (data-next) or reloads the page after other changes, and follows a running job
 * (data-poll). Pages work for reading without it; every control is a native form element, so the
 * keyboard reaches all of them.
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

function jsonOf(form) {
  const body = {};
  for (const [name, value] of new FormData(form)) {
    const field = form.elements[name];
    body[name] = field.type === 'number' ? Number(value) : field.type === 'datetime-local' ? new Date(value).toISOString() : field.hasAttribute('data-list') ? value.split(/[\\s,]+/).filter(Boolean) : value;
  }
  return JSON.stringify(body);
}
function showOnce(panel, answer) {
  for (const field of panel.querySelectorAll('[data-answer]')) {
    const value = String(answer[field.dataset.answer] ?? '');
    if ('value' in field) field.value = value; else field.textContent = value;
  }
  panel.hidden = false;
  panel.querySelector('input').focus();
}
function showCheck(list, answer) {
  list.replaceChildren();
  const item = (text) => list.appendChild(document.createElement('li')).textContent = text;
  for (const problem of answer.problems) item('The file: ' + problem);
  for (const i of answer.instances) {
    const name = 'Instance ' + i.index + ' (' + (i.instance_label ?? 'no label') + ', skill ' + (i.skill_id ?? 'none') + ')';
    if (i.valid) item(name + ': no problems');
    for (const problem of i.problems) item(name + ': ' + problem);
  }
}
document.addEventListener('submit', async (event) => {
  const form = event.target;
  if (!form.matches('form[data-api]')) return;
  event.preventDefault();
  // data-body: the text of the field with that id is the body as it is (a skills file); otherwise the fields as JSON.
  const raw = form.dataset.body ? document.getElementById(form.dataset.body).value : undefined;
  say('Working…');
  const response = await fetch(form.dataset.api, {
    method: form.dataset.method || 'POST',
    headers: { 'Content-Type': raw === undefined ? 'application/json' : 'text/plain', 'X-CSRF-Token': csrf },
    body: raw ?? jsonOf(form),
    credentials: 'same-origin',
  });
  const answer = await response.json().catch(() => ({}));
  // data-checks: the catalogue's answer (of a check, or of a refused save) is listed there.
  const checks = form.dataset.checks && document.getElementById(form.dataset.checks);
  const checked = answer.answer || (answer.instances && answer);
  if (checks && checked) showCheck(checks, checked);
  if (!response.ok) { say('Refused (' + response.status + '): ' + (answer.message || response.statusText)); return; }
  if (answer.client_secret) { say('Done: a new secret was issued.'); showSecret(answer); return; }
  // data-once: the answer holds what is shown once (a secret, a challenge); the page is not reloaded under it.
  if (form.dataset.once) { say('Done: copy it now.'); showOnce(document.getElementById(form.dataset.once), answer); return; }
  if (checks && response.status === 200) { say(checked.valid ? 'Checked: no problems.' : 'Checked: the catalogue reports problems; nothing was saved.'); return; }
  // A form whose answer has its own page (a replay's progress) goes there: data-next names it, {field} from the answer.
  if (form.dataset.next) { location.assign(form.dataset.next.replace(/\\{(\\w+)\\}/g, (_, key) => encodeURIComponent(answer[key]))); return; }
  say('Done.');
  location.reload();
});
document.addEventListener('change', async (event) => {
  // data-file-into: an uploaded file's text goes into the named field, to check and save like pasted text.
  const input = event.target;
  if (!input.matches('input[type=file][data-file-into]') || !input.files[0]) return;
  document.getElementById(input.dataset.fileInto).value = await input.files[0].text();
});
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(document.getElementById(button.dataset.copy).value);
    say('Copied to the clipboard.');
  });
}
for (const button of document.querySelectorAll('button[data-reload]')) button.addEventListener('click', () => location.reload());

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
