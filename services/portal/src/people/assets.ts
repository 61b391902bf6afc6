/**
 * The pages' only script and style sheet, served by the portal itself (no CDN; works offline). The
 * script turns each `form[data-api]` into a JSON call of the portal API with the session's CSRF token
 * (POST, or the form's data-method; `data-list` fields are sent as one list: checked boxes and the
 * comma-separated values of a text field). Before sending it asks for confirmation where the form says
 * what will happen (data-confirm, with data-confirm-type: the text to type; data-confirm-empty: only when
 * every list is empty; data-estimate: a GET whose `messages` fills {estimate}, {since} the form's time),
 * checks the fields and puts every problem beside its field in the field's own words (data-expects;
 * the API's problem names the field, never shown as a pattern). It shows a new secret once (with a copy
 * button) or what else an answer shows once in a panel (data-once), sends a field's text as the body as
 * it is (data-body, a skills file, filled from an upload by data-file-into) and lists the catalogue's
 * answer (data-checks), goes to the answer's own page where the form names one (data-next) or reloads
 * the page after other changes, and says what succeeded (data-done, {field} from the answer) in the form's live region
 * (data-said-in), across the reload. It follows a running job (data-poll). Pages work for reading
 * without it; every control is a native form element (the confirmation a native dialog), so the
 * keyboard reaches all of them.
 */
export const PORTAL_SCRIPT = `'use strict';
const csrf = document.querySelector('meta[name="csrf-token"]').content;
const status = document.getElementById('status');
const secretPanel = document.getElementById('secret-panel');
const DONE_KEY = 'portal-done';

function say(text) { status.textContent = text; }

/** A form's outcome goes to its own live region, beside the control (the page's as the fallback). */
function tell(form, text, failed) {
  const region = (form.dataset.saidIn && document.getElementById(form.dataset.saidIn)) || status;
  region.classList.toggle('failed', Boolean(failed));
  region.textContent = text;
}

// Times come as UTC instants: shown in the person's time zone with how long ago (the instant stays in the title).
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
function ago(at) {
  const seconds = Math.round((at - Date.now()) / 1000);
  for (const [unit, size] of [['day', 86400], ['hour', 3600], ['minute', 60]]) if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  return relative.format(seconds, 'second');
}
function showTime(time) {
  const at = new Date(time.dateTime);
  if (Number.isNaN(at.getTime())) return;
  time.title = time.dateTime;
  time.textContent = at.toLocaleString() + ' (' + ago(at.getTime()) + ')';
}
// Puts a <time> of the instant in the element (nothing when there is none), shown as the page's other times are.
function setTime(element, iso) {
  element.replaceChildren();
  if (!iso) return;
  const time = element.appendChild(document.createElement('time'));
  time.dateTime = iso;
  time.textContent = iso;
  showTime(time);
}
for (const time of document.querySelectorAll('time[datetime]')) showTime(time);

// A change that reloaded the page says what succeeded once the page is back, in the same place.
const done = sessionStorage.getItem(DONE_KEY);
if (done) {
  sessionStorage.removeItem(DONE_KEY);
  const { text, region } = JSON.parse(done);
  const target = (region && document.getElementById(region)) || status;
  requestAnimationFrame(() => { target.textContent = text; });
}

function showSecret(answer) {
  document.getElementById('secret-client-id').textContent = answer.client_id;
  document.getElementById('secret-value').value = answer.client_secret;
  const until = document.getElementById('secret-overlap');
  until.replaceChildren();
  if (answer.previous_secret_usable_until) {
    until.append('The previous secret keeps working until ');
    setTime(until.appendChild(document.createElement('span')), answer.previous_secret_usable_until);
    until.append('.');
  }
  secretPanel.hidden = false;
  document.getElementById('secret-value').focus();
}

function jsonOf(form) {
  const body = {};
  for (const field of form.querySelectorAll('[data-list]')) body[field.name] = [];
  for (const [name, value] of new FormData(form)) {
    const field = form.querySelector('[name="' + name + '"]');
    if (field.hasAttribute('data-list')) body[name].push(...value.split(/[\\s,]+/).filter(Boolean));
    else body[name] = field.type === 'number' ? Number(value) : field.type === 'datetime-local' ? new Date(value).toISOString() : value;
  }
  for (const name of Object.keys(body)) if (Array.isArray(body[name])) body[name] = [...new Set(body[name])];
  return body;
}

/** The one confirmation dialog: resolves true once the person confirms (and typed what was asked). */
const dialog = document.getElementById('confirm');
const typed = document.getElementById('confirm-typed');
function confirmed(text, expected) {
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-typing').hidden = !expected;
  document.getElementById('confirm-expected').textContent = expected || '';
  typed.value = '';
  typed.removeAttribute('aria-invalid');
  document.getElementById('confirm-typed-error').textContent = '';
  dialog.returnValue = '';
  dialog.showModal();
  (expected ? typed : dialog.querySelector('button[value="cancel"]')).focus();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true }));
}
document.getElementById('confirm-form').addEventListener('submit', (event) => {
  const expected = document.getElementById('confirm-expected').textContent;
  if (event.submitter?.value !== 'confirm' || !expected || typed.value.trim() === expected) return;
  event.preventDefault();
  typed.setAttribute('aria-invalid', 'true');
  document.getElementById('confirm-typed-error').textContent = 'Type ' + expected + ' exactly, or Cancel.';
  typed.focus();
});

/** What the confirmation says: the form's text, with the chosen time and the estimate filled in. */
async function confirmation(form, body) {
  let text = form.dataset.confirm;
  if (form.dataset.confirmEmpty) {
    if (Object.values(body).some((list) => list.length > 0)) return true;
    text = form.dataset.confirmEmpty;
  }
  if (!text) return true;
  const since = form.querySelector('input[type="datetime-local"]');
  if (since) text = text.replace('{since}', new Date(since.value).toLocaleString());
  if (form.dataset.estimate) {
    const response = await fetch(form.dataset.estimate + '?since=' + encodeURIComponent(body.since), { credentials: 'same-origin' });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) { showRefusal(form, answer, response); return false; }
    text = text.replace('{estimate}', (answer.more ? 'more than ' : '') + answer.messages);
  }
  return confirmed(text, form.dataset.confirmType);
}

function hintOf(field) {
  let hint = document.getElementById(field.id + '-error');
  if (!hint) {
    hint = document.createElement('span');
    hint.id = field.id + '-error';
    hint.className = 'field-error';
    field.insertAdjacentElement('afterend', hint);
    field.setAttribute('aria-describedby', ((field.getAttribute('aria-describedby') || '') + ' ' + hint.id).trim());
  }
  return hint;
}
function clearProblems(form) {
  for (const field of form.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
  for (const hint of form.querySelectorAll('.field-error')) hint.textContent = '';
}
/** A field's problem in its own words (data-expects), never the schema's pattern. */
function problemOf(field) {
  return field.dataset.expects ? 'Enter ' + field.dataset.expects + '.' : field.validationMessage || 'Check this value.';
}
function markInvalid(fields, form, words) {
  for (const field of fields) {
    field.setAttribute('aria-invalid', 'true');
    hintOf(field).textContent = words || problemOf(field);
  }
  fields[0].focus();
  tell(form, 'Nothing was sent: correct the highlighted field.', true);
}
/**
 * The API's problem names its field once ('body "role_arn" must …', 'since is in the future'; an item's index, "system_ids.1", names its list): that
 * field shows it. A problem with the value's form (a pattern, a format) is said in the field's own
 * words; one in words already (before the archive, in the future) keeps them, under the field's label.
 */
function fieldOfProblem(form, message) {
  const named = /^(?:(?:body|query parameter) ")?([A-Za-z_]+)[^ ]* (.*)$/.exec(message || '');
  const field = named && form.querySelector('[name="' + named[1] + '"]:not([type="checkbox"])');
  if (!field || !field.id) return undefined;
  const label = form.querySelector('label[for="' + field.id + '"]');
  const aboutForm = /pattern|format|must |which is not/.test(named[2]);
  return { field, words: aboutForm || !label ? undefined : label.textContent + ' ' + named[2] + '.' };
}
function plainWords(message) {
  return String(message || '').replace(/ must match pattern "[^"]*"/g, ' is not in the expected form');
}
function showRefusal(form, answer, response) {
  const named = response.status === 400 && fieldOfProblem(form, answer.message);
  if (named) { markInvalid([named.field], form, named.words); return; }
  tell(form, 'Refused: ' + plainWords(answer.message || response.statusText) + ' (' + response.status + ')', true);
}

function showOnce(panel, answer) {
  for (const field of panel.querySelectorAll('[data-answer]')) {
    const value = String(answer[field.dataset.answer] ?? '');
    if ('value' in field) field.value = value; else field.textContent = value;
  }
  panel.hidden = false;
  panel.querySelector('input, textarea').focus();
}
function showResult(box, answer) {
  box.replaceChildren();
  const line = (tag, text) => box.appendChild(document.createElement(tag)).textContent = text;
  const verb = answer.mode === 'publish' ? 'Published' : 'Validated';
  if (answer.outcome === 'refused') line('p', 'Refused (' + answer.status + '): ' + answer.violations.length + ' violation(s), each at its path in the message.');
  else line('p', verb + ': ' + answer.outcome + ' (' + answer.status + '), message id ' + answer.message_id + '.');
  for (const [title, list] of [['Violations', answer.violations], ['Tolerated', answer.tolerated]]) {
    if (list.length === 0) continue;
    line('h3', title);
    const items = box.appendChild(document.createElement('ul'));
    for (const v of list) {
      const item = items.appendChild(document.createElement('li'));
      item.appendChild(document.createElement('code')).textContent = v.path || '(the whole message)';
      item.appendChild(document.createTextNode(' ' + v.rule + ': ' + v.message));
    }
  }
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
for (const form of document.querySelectorAll('form[data-api]')) form.noValidate = true;
document.addEventListener('submit', async (event) => {
  const form = event.target;
  if (!form.matches('form[data-api]')) return;
  event.preventDefault();
  clearProblems(form);
  const invalid = [...form.elements].filter((field) => field.willValidate && !field.checkValidity());
  if (invalid.length > 0) { markInvalid(invalid, form); return; }
  // data-body: the text of the field with that id is the body as it is (a skills file); otherwise the fields as JSON.
  const raw = form.dataset.body ? document.getElementById(form.dataset.body).value : undefined;
  const body = raw === undefined ? jsonOf(form) : undefined;
  if (!(await confirmation(form, body))) { tell(form, 'Nothing was changed.'); return; }
  tell(form, 'Working…');
  const response = await fetch(form.dataset.api, {
    method: form.dataset.method || 'POST',
    headers: { 'Content-Type': raw === undefined ? 'application/json' : 'text/plain', 'X-CSRF-Token': csrf },
    body: raw ?? JSON.stringify(body),
    credentials: 'same-origin',
  });
  const answer = await response.json().catch(() => ({}));
  // data-checks: the catalogue's answer (of a check, or of a refused save) is listed there.
  const checks = form.dataset.checks && document.getElementById(form.dataset.checks);
  const checked = answer.answer || (answer.instances && answer);
  if (checks && checked) showCheck(checks, checked);
  if (!response.ok) { showRefusal(form, answer, response); return; }
  // data-result: the answer is shown there (a test message's: the bus's verdict, each violation at its path).
  if (form.dataset.result) { showResult(document.getElementById(form.dataset.result), answer); tell(form, 'The bus answered ' + answer.status + ': ' + answer.outcome + '.', answer.outcome === 'refused'); return; }
  if (answer.client_secret) { tell(form, form.dataset.done || 'Done: a new secret was issued.'); showSecret(answer); return; }
  // data-once: the answer holds what is shown once (a secret, a challenge); the page is not reloaded under it.
  if (form.dataset.once) { tell(form, (form.dataset.done || 'Done.') + ' Copy it now.'); showOnce(document.getElementById(form.dataset.once), answer); return; }
  if (checks && response.status === 200) { tell(form, checked.valid ? 'Checked: no problems.' : 'Checked: the catalogue reports problems; nothing was saved.', !checked.valid); return; }
  // A form whose answer has its own page (a replay's progress) goes there: data-next names it, {field} from the answer.
  if (form.dataset.next) {
    sessionStorage.setItem(DONE_KEY, JSON.stringify({ text: form.dataset.done || 'Started.' }));
    location.assign(form.dataset.next.replace(/\\{(\\w+)\\}/g, (_, key) => encodeURIComponent(answer[key])));
    return;
  }
  // {field} in data-done is the answer's (a purge says how many it removed).
  const done = (form.dataset.done || 'Saved.').replace(/\\{(\\w+)\\}/g, (_, key) => String(answer[key] ?? ''));
  sessionStorage.setItem(DONE_KEY, JSON.stringify({ text: done, region: form.dataset.saidIn }));
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
    // A replay's scanned records neither replayed nor skipped were left alone (tools-pages.tsx, leftAlone).
    if ('scanned' in answer) answer.left_alone = answer.scanned - answer.replayed - answer.skipped;
    // A simulation's first refusal reads as the page wrote it (tools-pages.tsx, SimulationProgress).
    const refusal = answer.first_refusal;
    if (refusal) answer.first_refusal = refusal.status + ' ' + refusal.violation + ' (' + refusal.message_type + ' ' + refusal.message_id + ')';
    // A data-time cell holds an instant, shown in the person's time zone as the page first showed it.
    for (const cell of polled.querySelectorAll('[data-field]')) {
      if ('time' in cell.dataset) setTime(cell, answer[cell.dataset.field]);
      else cell.textContent = answer[cell.dataset.field] ?? '';
    }
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

/**
 * The activity charts' script (activity-charts.tsx serves it after Chart.js, on the pages with a
 * [data-activity] section): reads the section's activity route once and draws each figure's chart,
 * with minutes in the person's time zone, and fills its text alternative: a summary of the totals and
 * a table of the minutes with activity. No animation: the numbers are there at once.
 */
export const ACTIVITY_SCRIPT = `'use strict';
const section = document.querySelector('[data-activity]');
const COLOURS = ['#0b57d0', '#146c2e', '#8e24aa', '#b3261e', '#6d4c00', '#00696f', '#5c5f62', '#c2185b'];
const hhmm = (iso) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const sum = (points, field) => points.reduce((n, p) => n + p[field], 0);

function tableOf(figure, caption, headings, rows) {
  const box = figure.querySelector('[data-table]');
  const table = document.createElement('table');
  table.createCaption().textContent = caption;
  const head = table.createTHead().insertRow();
  for (const text of headings) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = text;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const [minute, ...cells] of rows) {
    const row = body.insertRow();
    const time = row.insertCell().appendChild(document.createElement('time'));
    time.dateTime = minute;
    time.textContent = new Date(minute).toLocaleString();
    for (const value of cells) row.insertCell().textContent = String(value);
  }
  if (rows.length === 0) {
    const cell = body.insertRow().insertCell();
    cell.colSpan = headings.length;
    cell.textContent = 'Nothing in these minutes';
  }
  box.replaceChildren(table);
}

function draw(figure, type, labels, datasets, scales) {
  const canvas = figure.querySelector('canvas');
  // Chart: the global of Chart.js's UMD build, loaded before this script.
  new Chart(canvas, {
    type,
    data: { labels, datasets: datasets.map((d, i) => ({ borderColor: COLOURS[i % COLOURS.length], backgroundColor: COLOURS[i % COLOURS.length], pointRadius: 0, borderWidth: 2, ...d })) },
    options: { animation: false, responsive: true, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false }, scales },
  });
  figure.dataset.drawn = 'true';
}

function summarise(figure, text) {
  figure.querySelector('.chart-summary').textContent = text;
}

async function drawActivity() {
  const response = await fetch(section.dataset.activity, { credentials: 'same-origin' });
  if (!response.ok) {
    for (const figure of section.querySelectorAll('[data-chart]')) summarise(figure, 'The activity could not be read (' + response.status + '); refresh the page to try again.');
    return;
  }
  const answer = await response.json();
  const points = answer.points;
  const labels = points.map((p) => hhmm(p.minute));
  const span = 'In the last ' + answer.minutes + ' minutes';
  const counted = { beginAtZero: true, ticks: { precision: 0 } };

  const messages = section.querySelector('[data-chart="messages"]');
  if (messages) {
    draw(messages, 'line', labels, [
      { label: 'Published', data: points.map((p) => p.published) },
      { label: 'Delivered', data: points.map((p) => p.delivered) },
      { label: 'Acked', data: points.map((p) => p.acked) },
    ], { y: counted });
    summarise(messages, span + ': ' + sum(points, 'published') + ' published, ' + sum(points, 'delivered') + ' delivered, ' + sum(points, 'acked') + ' acked.');
    tableOf(messages, 'Messages per minute (minutes with activity)', ['Minute', 'Published', 'Delivered', 'Acked'],
      points.filter((p) => p.published + p.delivered + p.acked > 0).map((p) => [p.minute, p.published, p.delivered, p.acked]));
  }

  const queue = section.querySelector('[data-chart="queue"]');
  if (queue) {
    // An empty queue has no sample: it charts as 0.
    draw(queue, 'line', labels, [
      { label: 'Un-acked messages', data: points.map((p) => p.queue_depth ?? 0), yAxisID: 'y' },
      { label: 'Oldest message age (seconds)', data: points.map((p) => p.oldest_age_seconds ?? 0), yAxisID: 'age', borderDash: [6, 3] },
    ], { y: { ...counted, title: { display: true, text: 'messages' } }, age: { beginAtZero: true, position: 'right', title: { display: true, text: 'seconds' }, grid: { drawOnChartArea: false } } });
    const sampled = points.filter((p) => p.queue_depth !== null);
    const last = sampled[sampled.length - 1];
    const most = Math.max(0, ...sampled.map((p) => p.queue_depth));
    summarise(queue, last
      ? span + ': at most ' + most + ' un-acked; the last sample, at ' + hhmm(last.minute) + ', ' + last.queue_depth + ' un-acked, the oldest ' + Math.round(last.oldest_age_seconds) + ' seconds old.'
      : span + ': no un-acked messages sampled.');
    tableOf(queue, 'Queue samples (minutes with un-acked messages)', ['Minute', 'Un-acked messages', 'Oldest age (seconds)'],
      sampled.map((p) => [p.minute, p.queue_depth, Math.round(p.oldest_age_seconds)]));
  }

  const refusals = section.querySelector('[data-chart="refusals"]');
  if (refusals) {
    const rules = answer.rules;
    draw(refusals, 'bar', labels, rules.map((rule) => ({ label: rule, data: points.map((p) => p.refused[rule] ?? 0) })),
      { x: { stacked: true }, y: { ...counted, stacked: true } });
    const totals = rules.map((rule) => rule + ' ' + points.reduce((n, p) => n + (p.refused[rule] ?? 0), 0));
    summarise(refusals, rules.length === 0 ? span + ': no refusals.' : span + ', refusals by rule: ' + totals.join(', ') + '.');
    tableOf(refusals, 'Refusals per minute by rule (minutes with refusals)', ['Minute', ...rules],
      points.filter((p) => Object.keys(p.refused).length > 0).map((p) => [p.minute, ...rules.map((rule) => p.refused[rule] ?? 0)]));
  }
}

if (section) void drawActivity();
`;

/** The one style sheet: tables wrap their cells to fit the window, and the page fits from 360 px wide. */
export const PORTAL_STYLE = `
*, *::before, *::after { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fff; overflow-wrap: anywhere; }
header, main { padding: 0 1rem; max-width: 100%; }
header { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; align-items: center; border-bottom: 1px solid #767676; }
header nav { flex: 1 1 auto; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; }
header .who { margin: 0.5rem 0; }
a { color: #0b57d0; }
h1 { font-size: 1.6rem; }
.table-scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; max-width: 100%; }
caption { text-align: left; font-weight: bold; }
th, td { border: 1px solid #767676; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
/* A scrolling table's headings and one-word values (a kind, a status) stay whole ("producer", not "produ cer"); ids and text still break to fit. */
.table-scroll th, td.word { overflow-wrap: normal; }
td form { display: flex; }
td pre { white-space: pre-wrap; overflow-wrap: anywhere; max-width: 36rem; max-height: 24rem; overflow: auto; margin: 0.25rem 0; }
form { display: inline-flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; align-items: center; margin: 0.1rem 0; max-width: 100%; }
input, select, textarea { font: inherit; max-width: 100%; }
fieldset { border: 1px solid #767676; margin: 0.25rem 0; min-width: 0; max-width: 100%; }
fieldset label { margin-right: 0.75rem; white-space: nowrap; }
button { font: inherit; padding: 0.2rem 0.6rem; }
button.danger { background: #b3261e; color: #fff; border: 1px solid #8c1d18; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
#secret-panel, .once { border: 2px solid #b3261e; padding: 0.5rem 1rem; margin: 1rem 0; }
textarea.secret { display: block; width: 100%; max-width: 48rem; font-family: monospace; word-break: break-all; resize: none; }
form.wide { display: flex; }
textarea.code { flex: 1 1 100%; box-sizing: border-box; width: 100%; min-height: 12rem; font-family: monospace; white-space: pre-wrap; overflow-wrap: anywhere; overflow-y: auto; resize: vertical; }
.warning, .failed, .field-error { color: #b3261e; font-weight: bold; }
.field-error { display: block; font-size: 0.9rem; }
.said { display: block; color: #146c2e; font-weight: bold; }
.said.failed { color: #b3261e; }
[aria-invalid="true"] { border: 2px solid #b3261e; }
dialog { max-width: min(36rem, calc(100vw - 2rem)); border: 2px solid #1b1b1b; }
dialog::backdrop { background: rgb(0 0 0 / 40%); }
code { font-family: monospace; }
.activity figure { margin: 0.5rem 0 1.5rem; max-width: 48rem; }
.activity figcaption { font-weight: bold; }
.chart-box { position: relative; height: 16rem; width: 100%; }
`;
