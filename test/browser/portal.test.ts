import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BusConsumer } from '@bus/client';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { openapi, som } from '@bus/schemas';
import { loadSkillLibrary } from '@bus/skills';
import { createOpenApiChecker, eventually, freePort, REPO_ROOT, startNodeProcess, withClient } from '@bus/testing';
import { startBus, type RunningBus } from '../support/bus';
import { signedHeaders } from '../support/principals';

/**
 * The portal for people in a real browser: Debian's chromium driven by playwright-core,
 * signing in through the real OIDC flow against the local provider (deploy/local/oidc-provider.mjs)
 * on the compiled all-in-one bus. Screenshots of the main pages go to .local/browser/.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = path.join(REPO_ROOT, '.local', 'browser');
const DEMO_HOUSE = 'odemohouse222';
const DEMO_APP = 'ademostudio22';
/** The demo vendor's app in the demo workspace (seed.ts). */
const VENDOR_APP = 'ademovendor22';
const portalApi = createOpenApiChecker(openapi.portal);

let provider: ChildProcess;
let providerPort: number;
let providerSecret: string;
let bus: RunningBus;
let portalUrl: string;
let browser: Browser;
let demoWorkspace: string;

async function startProvider(port: number, redirectUrl: string, clientSecret: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'deploy/local/oidc-provider.mjs')], {
    env: {
      PATH: process.env.PATH ?? '',
      OIDC_PORT: String(port),
      OIDC_CLIENT_ID: 'bus-portal',
      OIDC_CLIENT_SECRET: clientSecret,
      OIDC_REDIRECT_URL: redirectUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  await eventually(
    async () => output,
    (o) => o.includes('oidc provider ready'),
    { timeoutMs: 15_000, what: 'the local OIDC provider' },
  );
  return child;
}

beforeAll(async () => {
  const [oidcPort, portalPort] = [await freePort(), await freePort()];
  portalUrl = `http://127.0.0.1:${portalPort}`;
  const clientSecret = randomBytes(24).toString('hex');
  [providerPort, providerSecret] = [oidcPort, clientSecret];
  provider = await startProvider(oidcPort, `${portalUrl}/portal/callback`, clientSecret);
  bus = await startBus({
    PORTAL_PORT: String(portalPort),
    PORTAL_OIDC_ISSUER: `http://127.0.0.1:${oidcPort}`,
    PORTAL_OIDC_CLIENT_ID: 'bus-portal',
    PORTAL_OIDC_CLIENT_SECRET: clientSecret,
    PORTAL_OIDC_REDIRECT_URL: `${portalUrl}/portal/callback`,
  });
  // The demo house, its workspace and app, as `npm run up` seeds them.
  const seed = startNodeProcess('services/all-in-one/dist/seed.js', {
    ...bus.env,
    PORTAL_URL: portalUrl,
    BUS_DEMO_ENV_FILE: path.join(SCREENSHOTS, `demo-${randomUUID()}.env`),
  });
  expect(await seed.exited).toBe(0);
  demoWorkspace = /demo tenant (w[a-z2-7]{12})/.exec(seed.output())![1]!;
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await bus?.stop();
  provider?.kill('SIGTERM');
}, 30_000);

/**
 * A fresh browser profile signed in as `login` through the provider's form and consent page: from the
 * portal's Sign in link, or by opening a deep link signed out (`deepLink`), which the sign-in returns to.
 */
async function signIn(login: string, deepLink?: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: portalUrl });
  const page = await context.newPage();
  if (deepLink) await page.goto(`${portalUrl}${deepLink}`);
  else {
    await page.goto(`${portalUrl}/portal`);
    await page.getByRole('link', { name: 'Sign in' }).click();
  }
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${portalUrl}${deepLink ?? '/portal'}`);
  return { context, page };
}

/**
 * A fresh browser profile through the provider's form and consent page as `login`, from /portal/login
 * (with `query`), up to the provider's redirect back to the portal's callback, which is held there:
 * the callback's address, for a test to send as it is or changed. `authorization` may change the
 * portal's redirect to the provider first. The redirects are taken with the context's own requests
 * (its cookies): a browser would follow them before a test could change one.
 */
async function heldCallback(
  login: string,
  opts: { query?: string; authorization?: (url: URL) => void } = {},
): Promise<{ context: BrowserContext; page: Page; callback: URL }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const started = await context.request.get(`${portalUrl}/portal/login${opts.query ?? ''}`, { maxRedirects: 0 });
  const authorization = new URL(started.headers().location!);
  opts.authorization?.(authorization);
  await page.goto(authorization.href);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const consent = page.locator('form', { has: page.getByRole('button', { name: 'Continue' }) });
  await consent.waitFor();
  const fields: Record<string, string> = {};
  for (const input of await consent.locator('input[type="hidden"]').all()) fields[(await input.getAttribute('name'))!] = (await input.getAttribute('value'))!;
  let at = new URL((await consent.getAttribute('action'))!, page.url());
  let answer = await context.request.post(at.href, { form: fields, maxRedirects: 0 });
  for (let hop = 0; hop < 5; hop++) {
    at = new URL(answer.headers().location!, at);
    if (at.origin === portalUrl) return { context, page, callback: at };
    answer = await context.request.get(at.href, { maxRedirects: 0 });
  }
  throw new Error(`the provider did not redirect to the portal; last at ${at.href}`);
}

/** A call of the admin API as the operator (HTTP Basic): what busctl does. */
async function adminCall(method: string, route: string, body?: unknown): Promise<{ id: string } & Record<string, unknown>> {
  const res = await fetch(`${portalUrl}${route}`, {
    method,
    headers: {
      Authorization: `Basic ${Buffer.from(`${bus.env.OPERATOR_CLIENT_ID}:${bus.env.OPERATOR_CLIENT_SECRET}`).toString('base64')}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as { id: string } & Record<string, unknown>;
}

/** A call of the portal API from inside the signed-in page (its cookie), checked against portal.json. */
async function apiCall(page: Page, method: string, route: string, body?: unknown, csrf: 'session' | 'none' = 'session') {
  const token = csrf === 'session' ? await page.locator('meta[name="csrf-token"]').getAttribute('content') : null;
  const res = await page.request.fetch(`${portalUrl}${route}`, {
    method,
    headers: { ...(token ? { 'X-CSRF-Token': token } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { data: JSON.stringify(body) }),
  });
  const observed = { status: res.status(), headers: res.headers(), body: await res.json().catch(() => undefined), text: await res.text() };
  portalApi.check(method, route, observed);
  return observed;
}

/** A new connection of an app (the demo house's unless given), as the signed-in page creates it. */
async function newConnection(page: Page, kind: 'producer' | 'consumer', appId = DEMO_APP): Promise<string> {
  const created = await apiCall(page, 'POST', `/api/portal/apps/${appId}/connections`, { kind });
  expect(created.status).toBe(201);
  return (created.body as { client_id: string }).client_id;
}

/** The bus's answer to a token request with these client credentials (200, or 401 for a secret that no longer works). */
async function tokenRequest(clientId: string, secret: string): Promise<Response> {
  return fetch(`${bus.busUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
}

/** The messages the organisations page counts as accepted today in the demo workspace. */
async function acceptedToday(page: Page): Promise<number> {
  await page.goto(`${portalUrl}/portal`);
  return Number(
    await page
      .getByRole('row', { name: new RegExp(demoWorkspace) })
      .getByRole('cell')
      .nth(3)
      .textContent(),
  );
}

/** Screenshots are attached to reports: the secret shown once is masked in them. */
const NO_SECRETS = (page: Page) => ({ mask: [page.locator('#secret-value')], maskColor: '#c8c8c8' });

/** The section of one app on a workspace page. */
function appSection(page: Page, appName: string): Locator {
  return page.locator('section', { has: page.getByRole('heading', { name: `App ${appName}` }) });
}

/** axe-core in the page: no serious or critical violations. */
async function expectAccessible(page: Page): Promise<void> {
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string | null }> }> } }).axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact }));
  });
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}

/**
 * Clicks a control after which the page's script reloads the page, and waits for the reloaded page
 * to have loaded (its deferred script included: a click before that would be the bare form's).
 */
async function clickReloading(page: Page, control: Locator): Promise<void> {
  await Promise.all([page.waitForEvent('load'), control.click()]);
}

/**
 * A destructive change: its control opens the confirmation dialog, which must say `says` (and, where
 * asked, takes the text to type); Confirm sends it and the page reloads and says `done` beside it.
 */
async function confirmChange(page: Page, control: Locator, says: RegExp, done: string, typed?: string): Promise<void> {
  await control.click();
  const dialog = page.getByRole('dialog');
  expect(await dialog.textContent()).toMatch(says);
  if (typed !== undefined) await dialog.getByLabel(/^Type /).fill(typed);
  await clickReloading(page, dialog.getByRole('button', { name: 'Confirm' }));
  await page.getByRole('status').filter({ hasText: done }).waitFor();
}

/** The navigation's links, in order. */
async function navigationLinks(page: Page): Promise<string[]> {
  return page.getByRole('navigation', { name: 'Portal' }).getByRole('link').allTextContents();
}

describe('the portal in a browser', () => {
  it.each([
    ['operator', 'Olive Operator — operator', ['Organisations', 'Audit log', 'Message trace', 'Skill library']],
    ['house-admin', 'Hana House-Admin — house admin of Demo house', ['Organisations', 'Audit log', 'Message trace', 'Skill library']],
    ['vendor', 'Vic Vendor — vendor of Demo vendor', ['Organisations', 'Skill library']],
    ['viewer', 'Vera Viewer — viewer of Demo house', ['Organisations', 'Message trace', 'Skill library']],
  ])(
    'signs in the %s through the real OIDC flow; the header names its organisation, the navigation offers only what its role may open, and the page passes axe',
    async (login, who, links) => {
      const { context, page } = await signIn(login);
      expect(await page.locator('header .who').textContent()).toBe(who);
      expect(await navigationLinks(page)).toEqual(links);
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, `organisations-${login}.png`), fullPage: true });
      await context.close();
    },
    60_000,
  );

  it('returns to a deep link opened signed out once signed in, sends / to the portal, and fits the audit log in 1,280 px and every page in 360 px', async () => {
    const root = await fetch(`${portalUrl}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([303, '/portal']);
    const { context, page } = await signIn('house-admin', `/portal/workspaces/${demoWorkspace}`);
    await page.getByRole('heading', { name: /^Workspace / }).waitFor();
    const width = () => page.locator('html').evaluate((html) => html.scrollWidth);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${portalUrl}/portal/audit`);
    const audit = page.getByRole('table', { name: /The newest 100 changes/ });
    expect([await width(), await audit.evaluate((t) => t.getBoundingClientRect().width <= 1280)]).toEqual([1280, true]);
    await page.setViewportSize({ width: 360, height: 800 });
    for (const route of ['/portal', `/portal/workspaces/${demoWorkspace}`, '/portal/audit', '/portal/trace', '/portal/library']) {
      await page.goto(`${portalUrl}${route}`);
      expect([route, await width()]).toEqual([route, 360]);
    }
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'workspace-360.png'), fullPage: true });
    await context.close();
  }, 60_000);

  it('lets a house admin create a producer connection, copy its secret once, get a token with it, publish and see the message counted', async () => {
    const { context, page } = await signIn('house-admin');
    expect(await page.content()).toContain(demoWorkspace);
    const countedBefore = await acceptedToday(page);
    await page.getByRole('link', { name: /Demo/ }).first().click();
    await page.waitForURL(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    await expectAccessible(page);
    const studio = appSection(page, 'Demo studio');
    await studio.getByLabel(/New connection of/).selectOption('producer');
    await studio.getByRole('button', { name: 'Create connection' }).click();
    await page.getByText('you will not see this again').waitFor();
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('copied to the clipboard').waitFor();
    const secret = await page.evaluate(() =>
      (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
    );
    const clientId = await page.locator('#secret-client-id').textContent();
    expect(secret).toMatch(/^sbs_/);
    await page.getByRole('status').filter({ hasText: 'Created a connection of Demo studio' }).waitFor();
    // The secret sits whole in a monospace field: nothing of it is clipped.
    expect(
      await page.locator('#secret-value').evaluate((e) => ({
        fits: e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight,
        font: e.ownerDocument.defaultView!.getComputedStyle(e).fontFamily,
      })),
    ).toEqual({ fits: true, font: expect.stringContaining('monospace') });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'workspace-secret-shown.png'), fullPage: true, ...NO_SECRETS(page) });

    const tokenRes = await tokenRequest(clientId!, secret);
    expect(tokenRes.status).toBe(200);
    const { access_token: accessToken } = (await tokenRes.json()) as { access_token: string };
    const message = {
      ...(som.examples['story.context'] as Record<string, unknown>),
      system_id: 'demo.studio',
      message_id: randomUUID(),
      correlation_id: randomUUID(),
      occurred_at: new Date().toISOString(),
    };
    const published = await fetch(`${bus.busUrl}/v1/tenants/${demoWorkspace}/messages`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(message),
    });
    expect(published.status).toBe(202);

    // The secret is shown once: a reload shows the connection, never the secret again.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByText(clientId!).first().waitFor();
    expect(await page.content()).not.toContain(secret);
    // The change is in the audit log, by name, without the secret.
    const audit = await apiCall(page, 'GET', '/api/portal/audit');
    const entries = (audit.body as { entries: Array<{ actor: string; action: string; target: string }> }).entries;
    expect(entries).toContainEqual(
      expect.objectContaining({ actor: 'Hana House-Admin (house-admin)', action: 'connection.create producer', target: clientId }),
    );
    expect(audit.text).not.toContain(secret);
    // The organisations page counts the message.
    await eventually(
      () => acceptedToday(page),
      (n) => n === countedBefore + 1,
      { what: 'the published message counted on the organisations page' },
    );
    await context.close();
  }, 90_000);

  it('names a connection as it is created, lists it by name with when it was created and last used, finds it by its description, and edits it on its page', async () => {
    const { context, page } = await signIn('house-admin');
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    const create = appSection(page, 'Demo studio').locator('form.connection-create');
    const name = `Web publisher ${randomUUID().slice(0, 8)}`;
    const description = `Publishes the web tellings ${randomUUID().slice(0, 8)}`;
    await create.getByLabel(/New connection of/).selectOption('producer');
    // A name that is not one line is said beside its field, in words; nothing is created.
    await create.getByLabel('Name').fill('Tab\there');
    await create.getByRole('button', { name: 'Create connection' }).click();
    await create.locator('#name-new-ademostudio22[aria-invalid="true"]').waitFor();
    expect(await create.locator('#name-new-ademostudio22-error').textContent()).toBe('Enter a name of one line, at most 100 characters (optional).');
    await create.getByLabel('Name').fill(name);
    await create.getByLabel('Description').fill(description);
    await create.getByRole('button', { name: 'Create connection' }).click();
    await page.getByText('you will not see this again').waitFor();
    const clientId = (await page.locator('#secret-client-id').textContent())!;
    const secret = await page.locator('#secret-value').inputValue();
    await clickReloading(page, page.getByRole('button', { name: 'Done' }));

    // Listed by its name (the client id beside it), created now and never used yet.
    const row = page.locator(`#connection-${clientId}`);
    expect(await row.getByRole('link', { name }).getAttribute('href')).toBe(`/portal/connections/${clientId}`);
    const cells = row.getByRole('cell');
    expect(await cells.nth(4).locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await cells.nth(4).textContent()).toMatch(/\(.*(now|second|minute).*\)/);
    expect(await cells.nth(5).textContent()).toBe('never');
    // A token uses it: the page shows when, in the person's time zone with how long ago.
    expect((await tokenRequest(clientId, secret)).status).toBe(200);
    const used = await eventually(
      async () => {
        await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
        return page
          .locator(`#connection-${clientId}`)
          .getByRole('cell')
          .nth(5)
          .locator('time')
          .getAttribute('datetime', { timeout: 1_000 })
          .catch(() => null);
      },
      (at) => at !== null,
      { what: 'the last use shown', timeoutMs: 15_000 },
    );
    expect(Date.now() - Date.parse(used!)).toBeLessThan(60_000);
    // The connection search finds it by its description.
    await page.getByLabel('Find connections').fill(description.slice(-8).toUpperCase());
    await Promise.all([page.waitForURL(/q=/), page.getByRole('button', { name: 'Filter' }).click()]);
    expect(await page.locator('#connection-count').textContent()).toMatch(/^Showing 1 of \d+ connections/);
    await page.locator(`#connection-${clientId}`).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'workspace-connection-names.png'), fullPage: true });

    // Its page shows and edits them: saved, said, and shown after the reload.
    await page.goto(`${portalUrl}/portal/connections/${clientId}`);
    expect(await page.getByRole('heading', { name, level: 2 }).count()).toBe(1);
    const edit = page.locator('form', { has: page.getByRole('button', { name: 'Save name and description' }) });
    await edit.getByLabel('Description').fill('Too\ttabbed');
    await edit.getByRole('button', { name: 'Save name and description' }).click();
    await edit.locator(`#description-${clientId}[aria-invalid="true"]`).waitFor();
    expect(await edit.locator(`#description-${clientId}-error`).textContent()).toBe('Enter a description of at most 500 characters, without tabs (optional).');
    await edit.getByLabel('Description').fill('Reads nothing\nand publishes the web tellings');
    await clickReloading(page, edit.getByRole('button', { name: 'Save name and description' }));
    await page
      .getByRole('status')
      .filter({ hasText: `Saved the name and description of ${clientId}.` })
      .waitFor();
    expect(await page.locator('p.description').textContent()).toBe('Reads nothing\nand publishes the web tellings');
    await expectAccessible(page);

    // The portal API refuses a value out of bounds with the documented 400, naming the field in words.
    const refused = await apiCall(page, 'PUT', `/api/portal/connections/${clientId}/details`, { name: 'two\nlines' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'admin.request_invalid',
      message: 'body "name" must be one line of text without control characters (no tab, newline, NUL, line separator or bidirectional control)',
    });
    const tooLong = await apiCall(page, 'POST', `/api/portal/apps/${DEMO_APP}/connections`, { kind: 'consumer', description: 'd'.repeat(501) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ message: 'body "description" must NOT have more than 500 characters' });
    const workspace = await apiCall(page, 'GET', `/api/portal/workspaces/${demoWorkspace}`);
    const listed = (workspace.body as { apps: Array<{ connections: Array<Record<string, unknown>> }> }).apps.flatMap((a) => a.connections);
    expect(listed.find((c) => c.client_id === clientId)).toMatchObject({
      name,
      description: 'Reads nothing\nand publishes the web tellings',
      last_used_at: used,
    });
    // A viewer may read it but not rename it.
    const viewer = await signIn('viewer', `/portal/connections/${clientId}`);
    expect(await viewer.page.getByRole('button', { name: 'Save name and description' }).count()).toBe(0);
    expect((await apiCall(viewer.page, 'PUT', `/api/portal/connections/${clientId}/details`, { name: 'Mine' })).status).toBe(403);
    await viewer.context.close();
    await context.close();
  }, 90_000);

  it('rotates a secret with an overlap: the page says until when the previous one works, and it stops after that', async () => {
    const { context, page } = await signIn('house-admin');
    const created = await apiCall(page, 'POST', `/api/portal/apps/${DEMO_APP}/connections`, { kind: 'producer' });
    const { client_id: clientId, client_secret: oldSecret } = created.body as { client_id: string; client_secret: string };
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    await page.locator(`#overlap-${clientId}`).fill('4');
    await page.getByRole('button', { name: `Rotate ${clientId}` }).click();
    await page.getByText('you will not see this again').waitFor();
    const newSecret = await page.locator('#secret-value').inputValue();
    // Said in the person's time zone with how long it has left; the instant itself is the time element's.
    expect(await page.locator('#secret-overlap').textContent()).toMatch(/^The previous secret keeps working until .+ \(in \d+ seconds?\)\.$/);
    const usableUntil = new Date((await page.locator('#secret-overlap time').getAttribute('datetime'))!).getTime();
    expect(usableUntil - Date.now()).toBeGreaterThan(0);
    expect(usableUntil - Date.now()).toBeLessThanOrEqual(4_000);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'workspace-rotated.png'), fullPage: true, ...NO_SECRETS(page) });

    expect((await tokenRequest(clientId, newSecret)).status).toBe(200);
    // The previous secret: accepted until the time shown, refused from then on.
    const seen: Array<{ status: number; at: number }> = [];
    await eventually(
      async () => {
        const status = (await tokenRequest(clientId, oldSecret)).status;
        seen.push({ status, at: Date.now() });
        return status;
      },
      (status) => status === 401,
      { timeoutMs: 20_000, intervalMs: 1_000, what: 'the previous secret to stop working' },
    );
    expect(seen[0]).toMatchObject({ status: 200 });
    expect(seen.filter((s) => s.status === 200).every((s) => s.at <= usableUntil + 1_000)).toBe(true);
    expect(seen.at(-1)!.at).toBeGreaterThanOrEqual(usableUntil);
    expect(seen.map((s) => s.status).filter((s) => s !== 200 && s !== 401)).toEqual([]);

    // Revoke, then remove: a second step the page offers only for a revoked connection. Afterwards the
    // row says removed and the current secret gets no token either.
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    expect(await page.getByRole('button', { name: `Remove ${clientId}` }).count()).toBe(0);
    // The confirmation is a native dialog: from the keyboard, Escape cancels and nothing changes.
    await page.getByRole('button', { name: `Revoke ${clientId}` }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').getByText(`Revoke connection ${clientId}?`).waitFor();
    await expectAccessible(page);
    await page.keyboard.press('Escape');
    await page.getByRole('status').filter({ hasText: 'Nothing was changed.' }).waitFor();
    expect((await tokenRequest(clientId, newSecret)).status).toBe(200);
    await confirmChange(
      page,
      page.getByRole('button', { name: `Revoke ${clientId}` }),
      /stop working at once/,
      `Revoked ${clientId}: its secrets no longer work.`,
    );
    // Removal asks for the client id typed: anything else keeps the dialog open and says so beside the field.
    await page.getByRole('button', { name: `Remove ${clientId}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/^Type /).fill('not the id');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.getByText(`Type ${clientId} exactly, or Cancel.`).waitFor();
    expect(await dialog.getByLabel(/^Type /).getAttribute('aria-invalid')).toBe('true');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await confirmChange(
      page,
      page.getByRole('button', { name: `Remove ${clientId}` }),
      /for good/,
      `Removed ${clientId}: its credentials are deleted.`,
      clientId,
    );
    await page
      .getByRole('row', { name: new RegExp(clientId) })
      .getByRole('cell', { name: 'removed' })
      .waitFor();
    expect((await tokenRequest(clientId, newSecret)).status).toBe(401);
    // Removed connections are hidden unless asked for; the text search finds one by its id.
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    expect(await page.getByRole('row', { name: new RegExp(clientId) }).count()).toBe(0);
    await page.getByLabel('Find connections').fill(clientId);
    await page.getByLabel('Show removed connections').check();
    await clickReloading(page, page.getByRole('button', { name: 'Filter' }));
    expect(await page.locator('#connection-count').textContent()).toMatch(/^Showing 1 of \d+ connections\.$/);
    expect(
      await page
        .getByRole('row', { name: new RegExp(clientId) })
        .getByRole('cell', { name: 'removed' })
        .count(),
    ).toBe(1);
    await expectAccessible(page);
    const audit = await apiCall(page, 'GET', '/api/portal/audit');
    const actions = (audit.body as { entries: Array<{ action: string; target: string }> }).entries.filter((e) => e.target === clientId).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['connection.revoke', 'connection.remove']));
    await context.close();
  }, 60_000);

  it("lets a house admin set what its vendor's app may publish; the vendor and a viewer are refused", async () => {
    const { context, page } = await signIn('house-admin');
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    const vendorApp = appSection(page, 'Demo vendor widget');
    // Chosen from the catalogue's message types and the workspace's system ids; emptying both asks first.
    for (const box of await vendorApp.getByRole('checkbox').all()) await box.uncheck();
    await vendorApp.getByRole('button', { name: 'Save permissions of Demo vendor widget' }).click();
    await page.getByRole('dialog').getByText('It can then publish nothing').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    // A system id not of the SOM's form: refused beside its field, in words, with the focus on it.
    await vendorApp.getByLabel('Other system ids').fill('Demo Vendor!');
    await vendorApp.getByRole('button', { name: 'Save permissions of Demo vendor widget' }).click();
    const other = vendorApp.getByLabel('Other system ids');
    await vendorApp.getByText('Enter dotted lowercase names such as storyteller.web, separated by commas.').waitFor();
    expect([await other.getAttribute('aria-invalid'), await other.evaluate((e) => e === e.ownerDocument.activeElement)]).toEqual(['true', true]);
    await expectAccessible(page);
    await vendorApp.getByRole('checkbox', { name: 'demo.vendor', exact: true }).check();
    await other.fill('demo.vendor.beta');
    await vendorApp.getByRole('checkbox', { name: 'telling.started', exact: true }).check();
    await vendorApp.getByRole('checkbox', { name: 'telling.ended', exact: true }).check();
    await clickReloading(page, vendorApp.getByRole('button', { name: 'Save permissions of Demo vendor widget' }));
    await page.getByRole('status').filter({ hasText: 'Saved what Demo vendor widget may publish.' }).waitFor();
    // The portal API refuses a message type the catalogue does not have, in words.
    const unknown = await apiCall(page, 'PUT', `/api/portal/apps/${VENDOR_APP}/permissions`, { system_ids: ['demo.vendor'], message_types: ['no.such_type'] });
    expect([unknown.status, (unknown.body as { message: string }).message]).toEqual([400, expect.stringContaining('not a message type of the catalogue')]);
    // The page reloads with the new lists.
    await appSection(page, 'Demo vendor widget')
      .getByText(/^May publish as system ids demo\.vendor, demo\.vendor\.beta; message types telling\.(ended, telling\.started|started, telling\.ended)\.$/)
      .waitFor();
    const seen = await apiCall(page, 'GET', `/api/portal/workspaces/${demoWorkspace}`);
    const app = (seen.body as { apps: Array<{ id: string; permissions: unknown }> }).apps.find((a) => a.id === VENDOR_APP);
    const { system_ids: systemIds, message_types: messageTypes } = app?.permissions as { system_ids: string[]; message_types: string[] };
    expect([[...systemIds].sort(), [...messageTypes].sort()]).toEqual([
      ['demo.vendor', 'demo.vendor.beta'],
      ['telling.ended', 'telling.started'],
    ]);
    await expectAccessible(page);
    await context.close();

    for (const login of ['vendor', 'viewer']) {
      const other = await signIn(login);
      await other.page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
      expect(await other.page.getByRole('button', { name: /Save permissions/ }).count()).toBe(0);
      const refused = await apiCall(other.page, 'PUT', `/api/portal/apps/${VENDOR_APP}/permissions`, { system_ids: ['demo.everything'] });
      expect(refused).toMatchObject({ status: 403, body: { code: 'portal.forbidden' } });
      await other.context.close();
    }
  }, 90_000);

  it("writes the admin API's changes to the audit log under the operator, with the organisation, for the house's admin to read", async () => {
    const created = await adminCall('POST', '/api/admin/connections', { app_id: DEMO_APP, kind: 'consumer' });
    const clientId = created.client_id as string;
    await adminCall('POST', `/api/admin/connections/${clientId}/revoke`);
    const { context, page } = await signIn('house-admin');
    const audit = await eventually(
      () => apiCall(page, 'GET', '/api/portal/audit'),
      (a) => a.text.includes(`/api/admin/connections/${clientId}/revoke`),
      { what: 'the admin changes in the audit log' },
    );
    expect((audit.body as { entries: unknown[] }).entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          actor_kind: 'operator_basic',
          actor: 'operator',
          action: 'POST /api/admin/connections',
          target: clientId,
          organisation_id: DEMO_HOUSE,
          status: 201,
        }),
        expect.objectContaining({
          actor_kind: 'operator_basic',
          action: `POST /api/admin/connections/${clientId}/revoke`,
          organisation_id: DEMO_HOUSE,
          status: 200,
        }),
      ]),
    );
    expect(audit.text).not.toContain(created.client_secret as string);
    await page.goto(`${portalUrl}/portal/audit`);
    expect(await page.content()).toContain(`/api/admin/connections/${clientId}/revoke`);
    await expectAccessible(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'audit.png'), fullPage: true });
    // Finding entries: who, what or target containing the text, whatever its case; % and _ are taken literally.
    const found = (await apiCall(page, 'GET', `/api/portal/audit?q=${clientId.toUpperCase()}`)).body as {
      entries: Array<{ actor: string; action: string; target: string }>;
    };
    expect(found.entries.length).toBeGreaterThanOrEqual(2);
    expect(found.entries.every((e) => [e.actor, e.action, e.target].some((field) => field.includes(clientId)))).toBe(true);
    expect((await apiCall(page, 'GET', '/api/portal/audit?q=%25_%25')).body).toEqual({ entries: [] });
    expect(await apiCall(page, 'GET', '/api/portal/audit?q=a%00b')).toMatchObject({ status: 400, body: { code: 'admin.request_invalid' } });
    await page.goto(`${portalUrl}/portal/audit?q=${encodeURIComponent(`${clientId}\u0000`)}`);
    expect(await page.getByLabel('Find (who, what or target contains)').inputValue()).toBe(clientId);
    await page.getByLabel('Find (who, what or target contains)').fill(clientId);
    await clickReloading(page, page.getByRole('button', { name: 'Find' }));
    const table = page.getByRole('table', { name: `The newest 100 changes you may read whose who, what or target contains “${clientId}”` });
    expect(await table.locator('tbody tr').count()).toBe(found.entries.length);
    await context.close();
  }, 60_000);

  it('answers an error of a page with an HTML page a person can read, and the portal API with JSON', async () => {
    const { context, page } = await signIn('house-admin');
    const missing = 'wnosuchspace2';
    const answer = await page.goto(`${portalUrl}/portal/workspaces/${missing}`);
    expect(answer!.status()).toBe(404);
    expect(answer!.headers()['content-type']).toMatch(/^text\/html/);
    await page.getByRole('heading', { name: /^404: / }).waitFor();
    await page.getByRole('link', { name: 'Back to the portal' }).waitFor();
    await expectAccessible(page);
    const api = await apiCall(page, 'GET', `/api/portal/workspaces/${missing}`, undefined, 'none');
    expect(api.status).toBe(404);
    expect(api.headers['content-type']).toMatch(/^application\/json/);
    expect(api.body).toMatchObject({ code: 'admin.not_found' });
    // A trace of an unknown message id: a not-found page that keeps the navigation.
    const unknownTrace = await page.goto(`${portalUrl}/portal/trace?workspace=${demoWorkspace}&message_id=${randomUUID()}`);
    expect(unknownTrace!.status()).toBe(404);
    await page.getByRole('heading', { name: /^404: / }).waitFor();
    expect(await navigationLinks(page)).toContain('Message trace');
    // A message id not of its form: said beside the field, in words, never as a pattern.
    const malformed = await page.goto(`${portalUrl}/portal/trace?workspace=${demoWorkspace}&message_id=not-a-uuid`);
    expect(malformed!.status()).toBe(400);
    const field = page.getByLabel('Message id');
    expect([await field.getAttribute('aria-invalid'), await field.inputValue()]).toEqual(['true', 'not-a-uuid']);
    await page.getByText('Enter the message id the producer published: a UUID').waitFor();
    await expectAccessible(page);
    // A sign-in that this browser did not start: a readable 400 with the way to start again.
    const forged = await page.goto(`${portalUrl}/portal/callback?state=forged&code=forged`);
    expect(forged!.status()).toBe(400);
    await page.getByRole('heading', { name: /^400: Sign-in failed/ }).waitFor();
    await context.close();
  }, 60_000);

  it('shows a viewer no change controls, and the server refuses the change itself with 403', async () => {
    const { context, page } = await signIn('viewer');
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    expect(await page.getByRole('button', { name: 'Create connection' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Rotate|Revoke|Remove/ }).count()).toBe(0);
    const refused = await apiCall(page, 'POST', `/api/portal/apps/${DEMO_APP}/connections`, { kind: 'producer' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'portal.forbidden' });
    const revoked = (await adminCall('POST', '/api/admin/connections', { app_id: DEMO_APP, kind: 'producer' })) as unknown as { client_id: string };
    await adminCall('POST', `/api/admin/connections/${revoked.client_id}/revoke`);
    const removal = await apiCall(page, 'POST', `/api/portal/connections/${revoked.client_id}/remove`);
    expect(removal.status).toBe(403);
    expect(removal.body).toMatchObject({ code: 'portal.forbidden' });
    await context.close();
  }, 60_000);

  it("shows a vendor its own app in the house's workspace, and nothing of the house's or another vendor's", async () => {
    // A second vendor invited into the same workspace, by the operator.
    const other = await adminCall('POST', '/api/admin/organisations', { name: 'Other vendor', kind: 'vendor' });
    const otherApp = await adminCall('POST', '/api/admin/apps', { workspace_id: demoWorkspace, organisation_id: other.id, name: 'Other vendor widget' });
    const { context, page } = await signIn('vendor');
    const seen = await apiCall(page, 'GET', `/api/portal/workspaces/${demoWorkspace}`);
    expect(seen.status).toBe(200);
    expect((seen.body as { apps: Array<{ id: string }> }).apps.map((a) => a.id)).toEqual([VENDOR_APP]);
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    const html = await page.content();
    expect(html).toContain(VENDOR_APP);
    expect(html).not.toContain(DEMO_APP);
    expect(html).not.toContain(otherApp.id);
    await expectAccessible(page);
    for (const app of [DEMO_APP, otherApp.id]) {
      const create = await apiCall(page, 'POST', `/api/portal/apps/${app}/connections`, { kind: 'producer' });
      expect(create.status).toBe(403);
    }
    await context.close();
  }, 60_000);

  describe('consumer and testing tools, and the skill library (docs/portal.md)', () => {
    /** A new producer connection of the demo app and its secret (created through the portal API as the person signed in on `page`). */
    async function demoProducer(page: Page): Promise<{ clientId: string; secret: string }> {
      const created = await apiCall(page, 'POST', `/api/portal/apps/${DEMO_APP}/connections`, { kind: 'producer' });
      const { client_id: clientId, client_secret: secret } = created.body as { client_id: string; client_secret: string };
      return { clientId, secret };
    }

    /** A producer's token for the demo app. */
    async function demoProducerToken(page: Page): Promise<{ clientId: string; token: string }> {
      const { clientId, secret } = await demoProducer(page);
      return { clientId, token: ((await (await tokenRequest(clientId, secret)).json()) as { access_token: string }).access_token };
    }

    async function publish(token: string, message: Record<string, unknown>): Promise<number> {
      const res = await fetch(`${bus.busUrl}/v1/tenants/${demoWorkspace}/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(message),
      });
      return res.status;
    }

    it("lets a house admin trace a published message to its consumer, see the consumer's queue, replay it from a chosen time and follow the replay until it succeeds", async () => {
      const { context, page } = await signIn('house-admin');
      const consumerId = await newConnection(page, 'consumer');
      const producer = await demoProducerToken(page);
      const publishedAt = Date.now();
      const messageId = randomUUID();
      const message = {
        ...(som.examples['story.context'] as Record<string, unknown>),
        system_id: 'demo.studio',
        message_id: messageId,
        correlation_id: randomUUID(),
        occurred_at: new Date().toISOString(),
      };
      expect(await publish(producer.token, message)).toBe(202);

      // The trace page: the message reaches the new consumer's queue.
      await eventually(
        async () => {
          await page.goto(`${portalUrl}/portal/trace?workspace=${demoWorkspace}&message_id=${messageId}`);
          // The row's cells: consumer, connection status, state, …
          return page
            .getByRole('row', { name: new RegExp(consumerId) })
            .getByRole('cell')
            .nth(2)
            .textContent();
        },
        (state) => state === 'queued',
        { what: 'the trace page to show the message queued for the new consumer' },
      );
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'message-trace.png'), fullPage: true });
      const trace = await apiCall(page, 'GET', `/api/portal/workspaces/${demoWorkspace}/messages/${messageId}`);
      expect(trace.status).toBe(200);
      expect((trace.body as { deliveries: Array<{ consumer_id: string; state: string }> }).deliveries).toContainEqual(
        expect.objectContaining({ consumer_id: consumerId, state: 'queued' }),
      );
      expect(trace.text).not.toContain('"payload"');

      // The consumer's page: its queue, and a replay from a minute before the publish.
      await page.goto(`${portalUrl}/portal/connections/${consumerId}`);
      expect(await page.getByRole('row', { name: /Depth/ }).getByRole('cell').textContent()).toBe('1');
      const queue = await apiCall(page, 'GET', `/api/portal/connections/${consumerId}/queue`);
      expect(queue.body).toMatchObject({ client_id: consumerId, depth: 1, in_flight: 0 });
      await expectAccessible(page);
      // The form takes the browser's local time; the page sends it as an instant.
      const since = await page.evaluate((at) => {
        const d = new Date(at);
        const two = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
      }, publishedAt - 60_000);
      // A time the archive cannot serve is said beside the field in the API's words, before anything starts.
      const tomorrow = await page.evaluate(() => {
        const d = new Date(Date.now() + 86_400_000);
        const two = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}:00`;
      });
      await page.getByLabel('Replay from').fill(tomorrow);
      await page.getByRole('button', { name: 'Start replay' }).click();
      await page.getByText('Replay from is in the future.').waitFor();
      expect(await page.getByLabel('Replay from').getAttribute('aria-invalid')).toBe('true');
      await page.getByLabel('Replay from').fill(since);
      // The confirmation says from when and about how many messages (the portal API's estimate).
      const estimate = await apiCall(
        page,
        'GET',
        `/api/portal/connections/${consumerId}/replays/estimate?since=${encodeURIComponent(new Date(publishedAt - 60_000).toISOString())}`,
      );
      const { messages } = estimate.body as { messages: number };
      expect(messages).toBeGreaterThanOrEqual(1);
      await page.getByRole('button', { name: 'Start replay' }).click();
      const dialog = page.getByRole('dialog');
      expect(await dialog.textContent()).toMatch(new RegExp(`workspace ${demoWorkspace} published since .+\\? About \\d+ messages`));
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForURL(/\/portal\/replays\/p[a-z2-7]{12}$/);
      await page.getByRole('status').filter({ hasText: 'Replay started' }).waitFor();
      const replayId = /(p[a-z2-7]{12})$/.exec(page.url())![1]!;
      // The page follows the replay by itself (its small poll) until it has succeeded.
      await page.locator('[data-field="status"]', { hasText: 'succeeded' }).waitFor({ timeout: 30_000 });
      const counts = await Promise.all(
        ['scanned', 'replayed', 'skipped', 'left_alone'].map(async (f) => Number(await page.locator(`[data-field="${f}"]`).textContent())),
      );
      // Every scanned message is accounted for: the one still queued for the consumer is left alone.
      expect(counts[0]).toBeGreaterThanOrEqual(1);
      expect(counts[3]).toBeGreaterThanOrEqual(1);
      expect(counts[1]! + counts[2]! + counts[3]!).toBe(counts[0]);
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'replay-progress.png'), fullPage: true });
      const replay = await apiCall(page, 'GET', `/api/portal/replays/${replayId}`);
      expect(replay.body).toMatchObject({
        replay_id: replayId,
        client_id: consumerId,
        status: 'succeeded',
        since: new Date(Math.floor((publishedAt - 60_000) / 1000) * 1000).toISOString(),
      });
      const audit = (await apiCall(page, 'GET', '/api/portal/audit')).body as {
        entries: Array<{ action: string; target: string; organisation_id: string | null }>;
      };
      expect(audit.entries).toContainEqual(
        expect.objectContaining({ action: expect.stringContaining(`connection.replay ${replayId}`), target: consumerId, organisation_id: DEMO_HOUSE }),
      );

      // The archive bounds the chosen time: not in the future, not before the archive's start.
      for (const refused of [new Date(Date.now() + 3_600_000), new Date(Date.now() - 400 * 86_400_000)]) {
        const answer = await apiCall(page, 'POST', `/api/portal/connections/${consumerId}/replays`, { since: refused.toISOString() });
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ code: 'admin.request_invalid' });
      }
      await context.close();
    }, 90_000);

    it('charts real traffic per minute on the connection and workspace pages, each chart drawn with its numbers in a table, for a house admin', async () => {
      const { context, page } = await signIn('house-admin');
      const created = await apiCall(page, 'POST', `/api/portal/apps/${DEMO_APP}/connections`, { kind: 'consumer' });
      const consumer = created.body as { client_id: string; client_secret: string };
      const consumerToken = ((await (await tokenRequest(consumer.client_id, consumer.client_secret)).json()) as { access_token: string }).access_token;
      const producer = await demoProducerToken(page);
      const story = () => ({
        ...(som.examples['story.context'] as Record<string, unknown>),
        system_id: 'demo.studio',
        message_id: randomUUID(),
        correlation_id: randomUUID(),
        occurred_at: new Date().toISOString(),
      });
      expect([await publish(producer.token, story()), await publish(producer.token, story())]).toEqual([202, 202]);
      const refused = await fetch(`${bus.busUrl}/v1/tenants/${demoWorkspace}/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${producer.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...story(), system_id: 'not.this.app' }),
      });
      expect(refused.status).toBe(403);
      const rule = ((await refused.json()) as { violations: Array<{ rule: string }> }).violations[0]!.rule;

      // The new consumer receives both and acks one.
      const queuePath = `${bus.busUrl}/v1/tenants/${demoWorkspace}/consumers/${consumer.client_id}`;
      const handles: string[] = [];
      await eventually(
        async () => {
          const res = await fetch(`${queuePath}/messages?wait_seconds=5&max_messages=10`, { headers: { Authorization: `Bearer ${consumerToken}` } });
          handles.push(...((await res.json()) as { messages: Array<{ receipt_handle: string }> }).messages.map((m) => m.receipt_handle));
          return handles.length;
        },
        (n) => n >= 2,
        { what: 'both messages received by the new consumer' },
      );
      const ack = await fetch(`${queuePath}/ack`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${consumerToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ receipt_handles: [handles[0]] }),
      });
      expect(ack.status).toBe(200);

      /** The figure of one chart once its script drew it: the canvas's size and its text alternative. */
      const chart = async (name: string) => {
        const figure = page.getByRole('figure', { name }).and(page.locator('[data-drawn="true"]'));
        await figure.waitFor();
        const box = await figure.locator('canvas').boundingBox();
        const details = figure.locator('details');
        if (!(await details.evaluate((d) => (d as unknown as { open: boolean }).open))) await details.getByText(/^The numbers of /).click();
        return { size: [box?.width ?? 0, box?.height ?? 0], summary: await figure.locator('.chart-summary').textContent(), table: figure.getByRole('table') };
      };
      const counted = async (route: string, name: string, expected: RegExp) =>
        eventually(
          async () => {
            await page.goto(`${portalUrl}${route}`);
            return (await chart(name)).summary ?? '';
          },
          (summary) => expected.test(summary),
          { timeoutMs: 30_000, what: `${route}: ${name} saying ${expected}` },
        );

      await counted(`/portal/connections/${consumer.client_id}`, 'Messages per minute', /: 0 published, 2 delivered, 1 acked\.$/);
      const messages = await chart('Messages per minute');
      expect(messages.size.every((n) => n > 0)).toBe(true);
      // The table lists the minutes with activity: their delivered and acked add up to the summary's.
      const rows = await messages.table
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => Number(td.textContent))));
      expect(rows.reduce((sum, [p, d, a]) => [sum[0]! + p!, sum[1]! + d!, sum[2]! + a!], [0, 0, 0])).toEqual([0, 2, 1]);
      const queue = await chart('Queue depth and oldest message');
      expect(queue.size.every((n) => n > 0)).toBe(true);
      expect(await page.getByRole('figure', { name: 'Refusals by rule' }).count()).toBe(0);
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'connection-activity.png'), fullPage: true });

      await counted(`/portal/connections/${producer.clientId}`, 'Refusals by rule', new RegExp(`refusals by rule: ${rule.replaceAll('.', '\\.')} 1\\.$`));
      const refusals = await chart('Refusals by rule');
      expect(refusals.size.every((n) => n > 0)).toBe(true);
      expect(await refusals.table.getByRole('columnheader').allTextContents()).toEqual(['Minute', rule]);
      expect((await chart('Messages per minute')).summary).toMatch(/: 2 published, 0 delivered, 0 acked\.$/);
      await expectAccessible(page);

      // The workspace's charts add up every connection of it, this producer's refusal among them.
      await counted(`/portal/workspaces/${demoWorkspace}`, 'Refusals by rule', new RegExp(`${rule.replaceAll('.', '\\.')} [1-9]`));
      for (const name of ['Messages per minute', 'Queue depth and oldest message', 'Refusals by rule']) {
        expect((await chart(name)).size.every((n) => n > 0)).toBe(true);
      }
      expect((await chart('Messages per minute')).summary).toMatch(/: [1-9]\d* published, [1-9]\d* delivered, [1-9]\d* acked\.$/);
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'workspace-activity.png'), fullPage: true });
      await context.close();
    }, 120_000);

    it("shows a producer connection's recent refusals without the refused body", async () => {
      const { context, page } = await signIn('house-admin');
      const producer = await demoProducerToken(page);
      const refusedId = randomUUID();
      const secretText = `never shown ${randomUUID()}`;
      expect(await publish(producer.token, { message_id: refusedId, message_type: 'story.context', note: secretText })).toBe(400);
      await eventually(
        async () => (await apiCall(page, 'GET', `/api/portal/connections/${producer.clientId}/refusals`)).body as { refusals: Array<{ message_id: string }> },
        (recent) => recent.refusals.some((r) => r.message_id === refusedId),
        { what: 'the refusal recorded' },
      );
      await page.goto(`${portalUrl}/portal/connections/${producer.clientId}`);
      expect(await page.getByRole('row', { name: new RegExp(refusedId) }).count()).toBe(1);
      expect(await page.content()).not.toContain(secretText);
      await expectAccessible(page);
      await context.close();
    }, 60_000);

    it("filters a producer's refusals by rule and by id, and links a refusal to its story's trace (a refused message has none of its own)", async () => {
      const { context, page } = await signIn('house-admin');
      const producer = await demoProducerToken(page);
      const story = `story-${randomUUID()}`;
      const base = {
        ...(som.examples['story.context'] as Record<string, unknown>),
        system_id: 'demo.studio',
        correlation_id: story,
        occurred_at: new Date().toISOString(),
      };
      const acceptedId = randomUUID();
      expect(await publish(producer.token, { ...base, message_id: acceptedId })).toBe(202);
      // Refused in the same story (no occurred_at: the schema), and in another (a system id the app may not use: policy).
      const { occurred_at: _dropped, ...incomplete } = base;
      const schemaRefusedId = randomUUID();
      expect(await publish(producer.token, { ...incomplete, message_id: schemaRefusedId })).toBe(400);
      const policyRefusedId = randomUUID();
      expect(await publish(producer.token, { ...base, message_id: policyRefusedId, correlation_id: `other-${randomUUID()}`, system_id: 'not.this.app' })).toBe(
        403,
      );
      const route = `/api/portal/connections/${producer.clientId}/refusals`;
      type Listed = { workspace_id: string; refusals: Array<{ message_id: string; story_message_id: string | null; violations: Array<{ rule: string }> }> };
      const all = await eventually(
        async () => (await apiCall(page, 'GET', route)).body as Listed,
        (recent) => recent.refusals.length === 2,
        { what: 'both refusals recorded' },
      );
      const schemaRefusal = all.refusals.find((r) => r.message_id === schemaRefusedId)!;
      const schemaRule = schemaRefusal.violations[0]!.rule;
      expect(schemaRule).toMatch(/^schema\./);
      // The refused message of the story names the story's accepted message; the other story has none.
      expect(schemaRefusal.story_message_id).toBe(acceptedId);
      expect(all.refusals.find((r) => r.message_id === policyRefusedId)!.story_message_id).toBeNull();

      const ids = async (query: string) => ((await apiCall(page, 'GET', `${route}?${query}`)).body as Listed).refusals.map((r) => r.message_id);
      expect(await ids(`rule=${schemaRule}`)).toEqual([schemaRefusedId]);
      expect(await ids('rule=policy.system_id_not_allowed')).toEqual([policyRefusedId]);
      expect(await ids(`q=${story.slice(0, 20).toUpperCase()}`)).toEqual([schemaRefusedId]);
      expect(await ids(`q=${policyRefusedId.slice(-12)}`)).toEqual([policyRefusedId]);
      // A control character or a rule not of a rule id's form: the documented 400, in words.
      const control = await apiCall(page, 'GET', `${route}?q=a%01b`);
      expect(control.status).toBe(400);
      expect(control.body).toMatchObject({ code: 'admin.request_invalid', message: 'query parameter "q" must be text without control characters' });
      const badRule = await apiCall(page, 'GET', `${route}?rule=not%20a%20rule`);
      expect(badRule.status).toBe(400);
      expect(badRule.body).toMatchObject({ message: expect.stringContaining('query parameter "rule" must be a rule id such as schema.required') });

      // The page: filter by rule, then follow the refusal to its story's trace.
      await page.goto(`${portalUrl}/portal/connections/${producer.clientId}`);
      expect(await page.getByRole('row', { name: new RegExp(policyRefusedId) }).count()).toBe(1);
      await page.getByLabel('Rule', { exact: true }).fill(schemaRule);
      await Promise.all([page.waitForURL(/rule=/), page.getByRole('button', { name: 'Filter refusals' }).click()]);
      expect(await page.getByRole('row', { name: new RegExp(policyRefusedId) }).count()).toBe(0);
      const refused = page.getByRole('row', { name: new RegExp(schemaRefusedId) });
      expect(await refused.locator('time').first().textContent()).toMatch(/\(.*\)$/);
      await expectAccessible(page);
      await Promise.all([page.waitForURL(/\/portal\/trace\?/), refused.getByRole('link', { name: 'Trace of its story' }).click()]);
      expect(new URL(page.url()).searchParams.get('message_id')).toBe(acceptedId);
      await page.getByRole('heading', { name: `Message ${acceptedId}` }).waitFor();
      expect(await page.content()).toContain(story);

      // The test message field: monospace, as wide as the page, and a long line wraps rather than clip.
      await page.goto(`${portalUrl}/portal/connections/${producer.clientId}`);
      await page.locator('#test-message').fill(JSON.stringify({ ...base, note: 'x'.repeat(400) }));
      expect(
        await page.locator('#test-message').evaluate((e) => ({
          fits: e.scrollWidth <= e.clientWidth,
          font: e.ownerDocument.defaultView!.getComputedStyle(e).fontFamily,
          wide: e.getBoundingClientRect().width >= e.closest('section')!.getBoundingClientRect().width - 2,
        })),
      ).toEqual({ fits: true, font: expect.stringContaining('monospace'), wide: true });
      await context.close();
    }, 60_000);

    it("lets a house admin run a simulated producer from a producer's page: a wrong secret is said beside its field, every planned message is accepted and reaches the consumer", async () => {
      const { context, page } = await signIn('house-admin');
      const consumerId = await newConnection(page, 'consumer');
      const { clientId: producerId, secret } = await demoProducer(page);
      await page.goto(`${portalUrl}/portal/connections/${producerId}`);
      const form = page.locator('section', { has: page.getByRole('heading', { name: 'Simulated producer' }) });
      await form.getByLabel('Stories').fill('3');
      await form.getByLabel('Messages a second, at most').fill('20');
      expect(await form.getByLabel('System id').inputValue()).toBe('demo.studio');
      await expectAccessible(page);
      const start = async (typedSecret: string) => {
        await form.getByLabel('Secret').fill(typedSecret);
        await form.getByRole('button', { name: 'Start simulation' }).click();
        const dialog = page.getByRole('dialog');
        expect(await dialog.textContent()).toContain(`Publish generated stories into workspace ${demoWorkspace} through ${producerId}?`);
        await dialog.getByRole('button', { name: 'Confirm' }).click();
      };
      // A wrong secret is refused before anything starts, in words beside its field.
      await start('sbs_not-the-secret');
      await form.getByText("Secret is not this connection's current secret").waitFor();
      expect(await form.getByLabel('Secret').getAttribute('aria-invalid')).toBe('true');

      await start(secret);
      await page.waitForURL(/\/portal\/simulations\/[0-9a-f-]{36}$/);
      await page.getByRole('status').filter({ hasText: 'Simulation started' }).waitFor();
      const simulationId = /([0-9a-f-]{36})$/.exec(page.url())![1]!;
      // The page follows the run by itself until it has succeeded; the counts add up.
      await page.locator('[data-field="status"]', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
      const count = async (field: string) => Number(await page.locator(`[data-field="${field}"]`).textContent());
      const planned = await count('messages');
      expect(planned).toBeGreaterThanOrEqual(3);
      expect([await count('accepted'), await count('refused'), await count('not_sent'), await count('stories_done')]).toEqual([planned, 0, 0, 3]);
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'simulation-progress.png'), fullPage: true });
      expect(await page.locator('[data-field="finished_at"] time').getAttribute('datetime')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      const simulation = await apiCall(page, 'GET', `/api/portal/simulations/${simulationId}`);
      expect(simulation.body).toMatchObject({
        simulation_id: simulationId,
        client_id: producerId,
        status: 'succeeded',
        accepted: planned,
        first_refusal: null,
      });
      // Published through the bus like any producer's messages: the workspace's new consumer has them all.
      await eventually(
        async () => (await apiCall(page, 'GET', `/api/portal/connections/${consumerId}/queue`)).body as { depth: number },
        (queue) => queue.depth === planned,
        { what: 'every simulated message queued for the consumer' },
      );
      // Audited with what was asked, never the secret; a consumer connection and a system id the app may not use are refused.
      const audit = await apiCall(page, 'GET', '/api/portal/audit');
      expect((audit.body as { entries: Array<{ action: string; target: string }> }).entries).toContainEqual(
        expect.objectContaining({ action: expect.stringContaining(`connection.simulate ${simulationId}: 3 stories, ${planned} messages`), target: producerId }),
      );
      expect(audit.text).not.toContain(secret);
      const body = { stories: 1, rate: 5, seed: 1, system_id: 'demo.studio', client_secret: secret };
      expect(await apiCall(page, 'POST', `/api/portal/connections/${consumerId}/simulations`, body)).toMatchObject({
        status: 409,
        body: { code: 'admin.conflict' },
      });
      const otherSystem = await apiCall(page, 'POST', `/api/portal/connections/${producerId}/simulations`, { ...body, system_id: 'demo.elsewhere' });
      expect(otherSystem).toMatchObject({
        status: 400,
        body: { code: 'admin.request_invalid', message: expect.stringContaining('body "system_id" is not one the app may publish for') },
      });
      await context.close();
    }, 90_000);

    it('validates a pasted message as its producer would send it, each violation at its path, and publishes it for whoever may; a viewer only validates', async () => {
      const { context, page } = await signIn('house-admin');
      const consumerId = await newConnection(page, 'consumer');
      const { clientId: producerId, secret } = await demoProducer(page);
      const message = {
        ...(som.examples['story.context'] as Record<string, unknown>),
        system_id: 'demo.studio',
        message_id: randomUUID(),
        correlation_id: randomUUID(),
        occurred_at: new Date().toISOString(),
      };
      await page.goto(`${portalUrl}/portal/connections/${producerId}`);
      const section = page.locator('section', { has: page.getByRole('heading', { name: 'Test message' }) });
      const send = async (text: string) => {
        await section.getByLabel('Message (JSON)').fill(text);
        await section.getByLabel('Secret').fill(secret);
        await section.getByRole('button', { name: 'Send test message' }).click();
      };
      // Refused: each violation at its path in the message.
      await send(JSON.stringify({ ...message, message_id: 'not-a-uuid' }, null, 2));
      await section.getByText(/^Refused \(400\): \d+ violation/).waitFor();
      expect(await section.getByRole('listitem').allTextContents()).toContainEqual(expect.stringMatching(/^\/message_id schema\.format: /));
      await expectAccessible(page);
      // Validated: a dry run; nothing reaches the consumer.
      await send(JSON.stringify(message));
      await section.getByText(`Validated: accepted (202), message id ${message.message_id}.`).waitFor();
      expect(((await apiCall(page, 'GET', `/api/portal/connections/${consumerId}/queue`)).body as { depth: number }).depth).toBe(0);
      // Published through the connection: the consumer has it, and the audit log says so.
      await section.getByLabel('Publish it through this connection').check();
      await send(JSON.stringify(message));
      await section.getByText(`Published: accepted (202), message id ${message.message_id}.`).waitFor();
      await page.screenshot({ path: path.join(SCREENSHOTS, 'producer-test-message.png'), fullPage: true });
      await eventually(
        async () => (await apiCall(page, 'GET', `/api/portal/connections/${consumerId}/queue`)).body as { depth: number },
        (queue) => queue.depth === 1,
        { what: 'the published test message queued for the consumer' },
      );
      const audit = await apiCall(page, 'GET', '/api/portal/audit');
      expect((audit.body as { entries: Array<{ action: string }> }).entries).toContainEqual(
        expect.objectContaining({ action: `connection.test_message accepted ${message.message_id} (202)`, target: producerId }),
      );
      expect(audit.text).not.toContain(secret);
      await context.close();

      // A viewer validates (its API answer checked against portal.json) but has no publish choice, and the server refuses one.
      const viewer = await signIn('viewer');
      await viewer.page.goto(`${portalUrl}/portal/connections/${producerId}`);
      await viewer.page.getByRole('heading', { name: 'Test message' }).waitFor();
      expect(await viewer.page.getByLabel('Publish it through this connection').count()).toBe(0);
      const body = { mode: 'validate', message: JSON.stringify({ ...message, message_id: randomUUID() }), client_secret: secret };
      expect(await apiCall(viewer.page, 'POST', `/api/portal/connections/${producerId}/test-messages`, body)).toMatchObject({
        status: 200,
        body: { mode: 'validate', outcome: 'accepted', status: 202 },
      });
      expect(await apiCall(viewer.page, 'POST', `/api/portal/connections/${producerId}/test-messages`, { ...body, mode: 'publish' })).toMatchObject({
        status: 403,
        body: { code: 'portal.forbidden' },
      });
      await viewer.context.close();
    }, 90_000);

    it("lets a viewer see a consumer's queue but not start a replay or a simulated producer: no control, and the server answers 403", async () => {
      const { context, page } = await signIn('viewer');
      const consumer = (await adminCall('POST', '/api/admin/connections', { app_id: DEMO_APP, kind: 'consumer' })) as unknown as { client_id: string };
      await page.goto(`${portalUrl}/portal/connections/${consumer.client_id}`);
      await page.getByRole('heading', { name: 'Queue' }).waitFor();
      expect(await page.getByRole('button', { name: 'Start replay' }).count()).toBe(0);
      const refused = await apiCall(page, 'POST', `/api/portal/connections/${consumer.client_id}/replays`, {
        since: new Date(Date.now() - 60_000).toISOString(),
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'portal.forbidden' });
      // Nor may a viewer run a simulated producer: no form on a producer's page, and 403 from the server.
      const producer = (await adminCall('POST', '/api/admin/connections', { app_id: DEMO_APP, kind: 'producer' })) as unknown as { client_id: string };
      await page.goto(`${portalUrl}/portal/connections/${producer.client_id}`);
      await page.getByRole('heading', { name: 'Recent refusals' }).waitFor();
      expect(await page.getByRole('button', { name: 'Start simulation' }).count()).toBe(0);
      const simulate = await apiCall(page, 'POST', `/api/portal/connections/${producer.client_id}/simulations`, {
        stories: 1,
        rate: 5,
        seed: 1,
        system_id: 'demo.studio',
        client_secret: 'sbs_whatever',
      });
      expect(simulate).toMatchObject({ status: 403, body: { code: 'portal.forbidden' } });
      await context.close();
    }, 60_000);

    it("lets a house admin browse a consumer's waiting and in-flight messages, and redrive and discard its dead letters, each asked first; a viewer sees them without controls and is refused with 403", async () => {
      const { context, page } = await signIn('house-admin');
      const consumer = (await adminCall('POST', '/api/admin/connections', { app_id: DEMO_APP, kind: 'consumer' })) as unknown as {
        client_id: string;
        client_secret: string;
      };
      await adminCall('PUT', `/api/admin/connections/${consumer.client_id}/dead-letter-policy`, { max_receives: 1 });
      const reader = new BusConsumer({ baseUrl: bus.busUrl, clientId: consumer.client_id, clientSecret: consumer.client_secret });
      await reader.ready();
      const producer = await demoProducerToken(page);
      const messageIds = [randomUUID(), randomUUID()];
      for (const messageId of messageIds)
        expect(
          await publish(producer.token, {
            ...(som.examples['story.context'] as Record<string, unknown>),
            system_id: 'demo.studio',
            message_id: messageId,
            correlation_id: randomUUID(),
            occurred_at: new Date().toISOString(),
          }),
        ).toBe(202);
      // Received once (the threshold) and nacked: each is dead-lettered instead of handed out again.
      await eventually(
        async () => (await apiCall(page, 'GET', `/api/portal/connections/${consumer.client_id}/queue`)).body as { depth: number },
        (q) => q.depth === 2,
        { what: 'both messages queued' },
      );
      // The message browser: both wait, in receive order, each shown as a receive hands it out; looking leases nothing.
      type Browse = { waiting: Array<{ message_id: string; lease_ends_at: string | null }>; in_flight: Array<{ message_id: string; lease_ends_at: string }> };
      const browsed = (await apiCall(page, 'GET', `/api/portal/connections/${consumer.client_id}/messages`)).body as Browse;
      expect(browsed.waiting.map((m) => m.message_id)).toEqual(messageIds);
      expect(browsed.in_flight).toEqual([]);
      await page.goto(`${portalUrl}/portal/connections/${consumer.client_id}`);
      const waiting = page.getByRole('table', { name: 'Waiting, in receive order' });
      const waitingRow = waiting.getByRole('row', { name: new RegExp(messageIds[0]!) });
      await waitingRow.getByText(/^Message \(\d+ bytes\)$/).click();
      expect(await waitingRow.locator('pre').textContent()).toContain(`"message_id": "${messageIds[0]}"`);
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'consumer-messages.png'), fullPage: true });
      const received = await reader.receive({ maxMessages: 10, waitSeconds: 1 });
      expect(received).toHaveLength(2);
      // Received: both are in flight until their leases end, and nothing waits.
      const leased = (await apiCall(page, 'GET', `/api/portal/connections/${consumer.client_id}/messages`)).body as Browse;
      expect(leased.waiting).toEqual([]);
      expect(leased.in_flight.map((m) => m.message_id)).toEqual(messageIds);
      expect(leased.in_flight.every((m) => Date.parse(m.lease_ends_at) > Date.now())).toBe(true);
      await page.reload();
      expect(
        await page
          .getByRole('table', { name: 'In flight (leased)' })
          .getByRole('row', { name: new RegExp(messageIds[1]!) })
          .count(),
      ).toBe(1);
      await reader.nack(received.map((m) => m.receipt_handle));
      type Letters = { dead_letters: Array<{ id: string; message_id: string }> };
      const letters = await eventually(
        async () => {
          await reader.receive({ maxMessages: 10, waitSeconds: 0 });
          return (await apiCall(page, 'GET', `/api/portal/connections/${consumer.client_id}/dead-letters`)).body as Letters;
        },
        (l) => l.dead_letters.length === 2,
        { what: 'both messages dead-lettered' },
      );
      expect(letters.dead_letters.map((d) => d.message_id).sort()).toEqual([...messageIds].sort());
      const [first, second] = letters.dead_letters as [{ id: string; message_id: string }, { id: string; message_id: string }];

      await page.goto(`${portalUrl}/portal/connections/${consumer.client_id}`);
      const row = page.getByRole('row', { name: new RegExp(first.message_id) });
      expect(await row.getByRole('link', { name: first.message_id }).getAttribute('href')).toBe(
        `/portal/trace?workspace=${demoWorkspace}&message_id=${first.message_id}`,
      );
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'dead-letters.png'), fullPage: true });
      await confirmChange(
        page,
        page.getByRole('button', { name: `Redrive ${first.id}` }),
        new RegExp(`Redrive dead letter ${first.id} \\(message ${first.message_id}\\)\\?`),
        `Redrove dead letter ${first.id}: it is queued again.`,
      );
      // Redriven: out of the dead letters, waiting again (the message browser lists it for the next receive).
      expect(
        await page
          .getByRole('table', { name: /Open dead letters/ })
          .getByRole('row', { name: new RegExp(first.message_id) })
          .count(),
      ).toBe(0);
      expect(
        await page
          .getByRole('table', { name: 'Waiting, in receive order' })
          .getByRole('row', { name: new RegExp(first.message_id) })
          .count(),
      ).toBe(1);
      await confirmChange(
        page,
        page.getByRole('button', { name: `Discard ${second.id}` }),
        new RegExp(`Discard dead letter ${second.id} \\(message ${second.message_id}\\)\\? .* never receives it`),
        `Discarded dead letter ${second.id}.`,
      );
      await page.getByRole('cell', { name: 'No dead letters' }).waitFor();
      // The redriven message is the consumer's again; the discarded one is gone.
      const again = await reader.receive({ maxMessages: 10, waitSeconds: 1 });
      expect(again.map((m) => m.message_id)).toEqual([first.message_id]);
      const audit = (await apiCall(page, 'GET', '/api/portal/audit')).body as { entries: Array<{ action: string; target: string }> };
      expect(audit.entries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ action: `dead_letter.redrive ${first.id} (message ${first.message_id})`, target: consumer.client_id }),
          expect.objectContaining({ action: `dead_letter.discard ${second.id} (message ${second.message_id})`, target: consumer.client_id }),
        ]),
      );
      // Resolved once: the same dead letter again, or an id that names none, is 404.
      for (const id of [first.id, '9684948080111671057'])
        expect((await apiCall(page, 'POST', `/api/portal/connections/${consumer.client_id}/dead-letters/${id}/discard`)).status).toBe(404);
      await context.close();

      // A viewer lists them but gets no control, and the server refuses the change.
      await reader.nack(again.map((m) => m.receipt_handle));
      const viewer = await signIn('viewer');
      const open = await eventually(
        async () => {
          await reader.receive({ maxMessages: 10, waitSeconds: 0 });
          return (await apiCall(viewer.page, 'GET', `/api/portal/connections/${consumer.client_id}/dead-letters`)).body as Letters;
        },
        (l) => l.dead_letters.length === 1,
        { what: 'the redriven message dead-lettered again' },
      );
      await viewer.page.goto(`${portalUrl}/portal/connections/${consumer.client_id}`);
      await viewer.page.getByRole('row', { name: new RegExp(first.message_id) }).waitFor();
      expect(await viewer.page.getByRole('button', { name: /^(Redrive|Discard) / }).count()).toBe(0);
      const refused = await apiCall(viewer.page, 'POST', `/api/portal/connections/${consumer.client_id}/dead-letters/${open.dead_letters[0]!.id}/redrive`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'portal.forbidden' });
      await viewer.context.close();
    }, 90_000);

    it("lets a house admin purge a consumer's queue from its message browser, asked first with what goes and the client id typed; what is published afterwards is received; a viewer has no control and is refused with 403", async () => {
      const { context, page } = await signIn('house-admin');
      const consumer = (await adminCall('POST', '/api/admin/connections', { app_id: DEMO_APP, kind: 'consumer' })) as unknown as {
        client_id: string;
        client_secret: string;
      };
      const reader = new BusConsumer({ baseUrl: bus.busUrl, clientId: consumer.client_id, clientSecret: consumer.client_secret });
      await reader.ready();
      const producer = await demoProducerToken(page);
      const story = randomUUID();
      const send = async (correlationId: string) => {
        const messageId = randomUUID();
        const message = {
          ...(som.examples['story.context'] as Record<string, unknown>),
          system_id: 'demo.studio',
          message_id: messageId,
          correlation_id: correlationId,
        };
        expect(await publish(producer.token, { ...message, occurred_at: new Date().toISOString() })).toBe(202);
        return messageId;
      };
      const sent = [await send(story), await send(story), await send(randomUUID())];
      const queue = async () =>
        (await apiCall(page, 'GET', `/api/portal/connections/${consumer.client_id}/queue`)).body as { depth: number; in_flight: number };
      await eventually(queue, (q) => q.depth === 3, { what: 'three messages queued' });
      const held = await reader.receive({ maxMessages: 1, waitSeconds: 1 });
      expect(held).toHaveLength(1);

      await page.goto(`${portalUrl}/portal/connections/${consumer.client_id}`);
      const waiting = page.getByRole('table', { name: 'Waiting, in receive order' });
      // The story's head is leased (the message behind it waits, not receivable yet); the other story's waits.
      expect(held.map((m) => m.message_id)).toEqual([sent[0]]);
      expect(await waiting.getByRole('row', { name: new RegExp(sent[2]!) }).count()).toBe(1);
      const purge = page.getByRole('button', { name: 'Purge queue' });
      const says = new RegExp(`removes 2 waiting and 1 in-flight messages of ${consumer.client_id}.*Dead letters stay`);
      // Cancelled: nothing changes.
      await purge.click();
      const dialog = page.getByRole('dialog');
      expect(await dialog.textContent()).toMatch(says);
      await expectAccessible(page);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('status').filter({ hasText: 'Nothing was changed.' }).waitFor();
      expect(await queue()).toMatchObject({ depth: 3, in_flight: 1 });
      // Anything but the client id typed keeps it refused, said beside the field.
      await purge.click();
      await dialog.getByLabel(/^Type /).fill('not the id');
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await dialog.getByText(`Type ${consumer.client_id} exactly, or Cancel.`).waitFor();
      expect(await dialog.getByLabel(/^Type /).getAttribute('aria-invalid')).toBe('true');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(await queue()).toMatchObject({ depth: 3, in_flight: 1 });

      await confirmChange(page, purge, says, `Purged the queue of ${consumer.client_id}: 3 messages removed.`, consumer.client_id);
      // The page came back with the browser empty.
      await waiting.getByRole('cell', { name: 'None' }).waitFor();
      expect(await page.getByRole('table', { name: 'In flight (leased)' }).getByRole('cell', { name: 'None' }).count()).toBe(1);
      expect(await queue()).toMatchObject({ depth: 0, in_flight: 0 });
      // The purged lease's handle is stale; a message published afterwards, in the purged story too, is received.
      expect(await reader.ack([held[0]!.receipt_handle])).toEqual([expect.objectContaining({ status: 'failed', code: 'receipt_handle.stale' })]);
      const after = await send(story);
      const received = await eventually(
        () => reader.receive({ maxMessages: 10, waitSeconds: 1 }),
        (m) => m.length > 0,
        { what: 'the message published after the purge received' },
      );
      expect(received.map((m) => m.message_id)).toEqual([after]);
      const audit = (await apiCall(page, 'GET', '/api/portal/audit')).body as { entries: Array<{ action: string; target: string }> };
      expect(audit.entries).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'connection.purge (3 removed)', target: consumer.client_id })]));
      await context.close();

      // A viewer sees the browser without the control, and the server refuses the purge.
      const viewer = await signIn('viewer');
      await viewer.page.goto(`${portalUrl}/portal/connections/${consumer.client_id}`);
      await viewer.page.getByRole('table', { name: 'Waiting, in receive order' }).waitFor();
      expect(await viewer.page.getByRole('button', { name: 'Purge queue' }).count()).toBe(0);
      const refused = await apiCall(viewer.page, 'POST', `/api/portal/connections/${consumer.client_id}/purge`);
      expect([refused.status, refused.body]).toEqual([403, expect.objectContaining({ code: 'portal.forbidden' })]);
      await viewer.context.close();
    }, 90_000);

    it("shows the skill library's versions, the skills of a version and a known skill's fields", async () => {
      const library = loadSkillLibrary();
      const skill = library.current.skills[0]!;
      const { context, page } = await signIn('vendor');
      await page.getByRole('link', { name: 'Skill library' }).click();
      await page.getByRole('link', { name: library.current.info.version, exact: true }).click();
      await expectAccessible(page);
      await page.getByRole('link', { name: skill.skill_id, exact: true }).click();
      await page.getByRole('heading', { name: new RegExp(`Skill ${skill.name}`) }).waitFor();
      const fields = page.getByRole('table', { name: `Fields of ${skill.skill_id}` });
      for (const field of skill.fields) {
        const row = fields.getByRole('row').filter({ has: page.getByRole('cell', { name: field.name, exact: true }) });
        expect(await row.getByRole('cell').nth(1).textContent()).toBe(field.kind);
      }
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'library-skill.png'), fullPage: true });
      await context.close();
    }, 60_000);
  });

  it('signs out of the identity provider too (RP-initiated logout with the ID token as hint): the next sign-in asks for the login again', async () => {
    const { context, page } = await signIn('viewer');
    const ending = page.waitForRequest((r) => /\/session\/end\?/.test(r.url()));
    await page.getByRole('button', { name: 'Sign out' }).click();
    const asked = new URL((await ending).url());
    expect([asked.searchParams.has('id_token_hint'), asked.searchParams.get('post_logout_redirect_uri')]).toEqual([true, `${portalUrl}/portal`]);
    // The provider's own confirmation, then back to the portal, signed out of both.
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${portalUrl}/portal`);
    expect((await apiCall(page, 'GET', '/api/portal/me', undefined, 'none')).status).toBe(401);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.locator('input[name="login"]').waitFor();
    await context.close();
  }, 60_000);

  it("refuses a change without the session's CSRF token", async () => {
    const { context, page } = await signIn('house-admin');
    const refused = await apiCall(page, 'POST', `/api/portal/apps/${DEMO_APP}/connections`, { kind: 'producer' }, 'none');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'portal.csrf' });
    await context.close();
  }, 60_000);

  it('ends a session left idle past PORTAL_SESSION_IDLE_TIMEOUT: the API answers 401 and the page offers sign-in', async () => {
    const { context, page } = await signIn('house-admin');
    expect((await apiCall(page, 'GET', '/api/portal/me')).status).toBe(200);
    // Idle for 31 minutes (the default timeout is 30): the session's last use moved into the past.
    await withClient(bus.env.DATABASE_URL!, (db) =>
      db.query("UPDATE portal_sessions SET last_seen_at = now() - interval '31 minutes' WHERE subject = 'house-admin'"),
    );
    const ended = await apiCall(page, 'GET', '/api/portal/me');
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ code: 'portal.sign_in_required' });
    await page.goto(`${portalUrl}/portal`);
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    await expectAccessible(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'sign-in.png') });
    await context.close();
  }, 60_000);

  it('ends a session PORTAL_SESSION_MAX_AGE after sign-in, however recently it was used', async () => {
    const { context, page } = await signIn('viewer');
    expect((await apiCall(page, 'GET', '/api/portal/me')).status).toBe(200);
    // Used a moment ago, but signed in longer ago than the absolute timeout allows.
    await withClient(bus.env.DATABASE_URL!, (db) => db.query("UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE subject = 'viewer'"));
    const ended = await apiCall(page, 'GET', '/api/portal/me');
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ code: 'portal.sign_in_required' });
    await page.goto(`${portalUrl}/portal`);
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    await context.close();
  }, 60_000);
});

describe('a sign-in callback the portal refuses, or cannot complete while the provider is down (docs/portal.md)', () => {
  const issuer = () => `http://127.0.0.1:${providerPort}`;

  it.each<[string, (callback: URL) => void]>([
    ['a wrong iss', (callback) => callback.searchParams.set('iss', 'http://127.0.0.1:1')],
    ['no iss', (callback) => callback.searchParams.delete('iss')],
    ['a repeated parameter', (callback) => callback.searchParams.append('code', 'extra')],
    ['a wrong code', (callback) => callback.searchParams.set('code', 'not-the-code')],
  ])(
    'answers a callback with %s 400 portal.sign_in_failed, a page saying to start again, and signs no one in',
    async (_what, change) => {
      const { context, page, callback } = await heldCallback('viewer');
      // The provider names itself in its answer (RFC 9207), which openid-client then requires.
      expect(callback.searchParams.get('iss')).toBe(issuer());
      change(callback);
      const answer = await page.goto(callback.href);
      expect(answer!.status()).toBe(400);
      await page.getByRole('heading', { name: /^400: Sign-in failed: the identity provider.*Start again at \/portal\/login$/ }).waitFor();
      expect((await apiCall(page, 'GET', '/api/portal/me', undefined, 'none')).body).toMatchObject({ code: 'portal.sign_in_required' });
      await context.close();
    },
    60_000,
  );

  it("answers 400 portal.sign_in_failed when the ID token was issued for another sign-in's request (its nonce)", async () => {
    const { context, page, callback } = await heldCallback('viewer', { authorization: (url) => url.searchParams.set('nonce', 'another-sign-ins-nonce') });
    const answer = await page.goto(callback.href);
    expect(answer!.status()).toBe(400);
    await page.getByRole('heading', { name: /^400: Sign-in failed: the identity provider's answer does not complete this sign-in/ }).waitFor();
    expect((await apiCall(page, 'GET', '/api/portal/me', undefined, 'none')).status).toBe(401);
    await context.close();
  }, 60_000);

  it('lands on /portal after a sign-in asked to return to a path that leaves the portal through a dot segment', async () => {
    const { context, page, callback } = await heldCallback('viewer', { query: `?return=${encodeURIComponent('/portal/../api/admin/organisations')}` });
    await page.goto(callback.href);
    expect(new URL(page.url()).pathname).toBe('/portal');
    await page.getByRole('heading', { name: 'Organisations and workspaces' }).waitFor();
    await context.close();
  }, 60_000);

  it('answers 503 portal.unavailable with Retry-After while the provider is unreachable, logging why, and signs in once it is back', async () => {
    const { context, page, callback } = await heldCallback('viewer');
    provider.kill('SIGTERM');
    await once(provider, 'exit');
    try {
      const answer = await page.goto(callback.href);
      expect([answer!.status(), answer!.headers()['retry-after']]).toEqual([503, '1']);
      await page.getByRole('heading', { name: /^503: The identity provider or the registry \(Postgres\) could not be reached/ }).waitFor();
      const requestId = await page.locator('p code').nth(1).textContent();
      const logged = bus.process
        .output()
        .split('\n')
        .find((line) => line.includes(`"request_id":"${requestId}"`) && line.includes('dependency unavailable'));
      expect(logged).toMatch(/ECONNREFUSED/);
    } finally {
      provider = await startProvider(providerPort, `${portalUrl}/portal/callback`, providerSecret);
    }
    await context.close();
    const again = await signIn('viewer');
    await again.context.close();
  }, 60_000);
});

describe("a connection's AWS principals, identity-provider bindings and skill registrations in a browser", () => {
  const ROLE_ARN = 'arn:aws:iam::123456789012:role/portal-publisher';
  /** A pacing instance whose value is not a number of milliseconds: the catalogue reports it. */
  const BROKEN_SKILLS = 'skills:\n  - skill_id: telling/pacing\n    instance_label: broken pacing\n    values:\n      max_segment_ms: fast\n';
  const VALID_SKILLS = 'skills:\n  - skill_id: telling/pacing\n    instance_label: web pacing\n    values:\n      max_segment_ms: { web: 1200 }\n';

  /**
   * Every portal API answer the page's own script receives (the challenge, the check, the saves…),
   * checked against portal.json on its way to the page (the page reloads after most changes, so the
   * answer is read before it gets there): what was seen, or how it is off the document.
   */
  async function observeApiAnswers(page: Page): Promise<() => string[]> {
    const seen: string[] = [];
    await page.route(`${portalUrl}/api/portal/**`, async (route) => {
      const response = await route.fetch();
      const path = new URL(route.request().url()).pathname;
      const method = route.request().method();
      // The activity charts' read is every workspace page's, not a change under test: checked, not listed.
      const listed = !(method === 'GET' && path.endsWith('/activity'));
      try {
        portalApi.check(method, path, { status: response.status(), headers: response.headers(), body: (await response.json()) as unknown });
        if (listed)
          seen.push(`${method} ${path.replace(/\/(connections|principals|bindings|registrations)\/(?!check$)[A-Za-z0-9]+/g, '/$1/:id')} ${response.status()}`);
      } catch (err) {
        seen.push(`off portal.json: ${method} ${path} ${response.status()}: ${String(err)}`);
      }
      await route.fulfill({ response });
    });
    return () => seen;
  }

  /** The row of one connection on the workspace page, and its link to one of the connection's pages. */
  async function openConnectionPage(page: Page, clientId: string, link: 'Principals and bindings' | 'Skill registrations'): Promise<void> {
    await page.goto(`${portalUrl}/portal/workspaces/${demoWorkspace}`);
    await page
      .getByRole('row', { name: new RegExp(clientId) })
      .getByRole('link', { name: link })
      .click();
    await page.waitForURL(new RegExp(`/portal/connections/${clientId}/`));
  }

  it('lets a house admin register an AWS principal with its secret shown once, issue a challenge shown once, and see the principal verified once it signs it', async () => {
    const { context, page } = await signIn('house-admin');
    const answers = await observeApiAnswers(page);
    const clientId = await newConnection(page, 'producer');
    await openConnectionPage(page, clientId, 'Principals and bindings');
    await expectAccessible(page);

    // The API's refusal of the ARN is said beside the field in words, never as its pattern.
    await page.getByLabel('IAM role ARN').fill('arn:aws:iam::12:user/me');
    await page.getByRole('button', { name: 'Register principal' }).click();
    await page.getByText('Enter an IAM role ARN such as arn:aws:iam::123456789012:role/name.').waitFor();
    expect(await page.getByLabel('IAM role ARN').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('main').textContent()).not.toMatch(/pattern|\^arn/);
    await page.getByLabel('IAM role ARN').fill(ROLE_ARN);
    await page.getByRole('button', { name: 'Register principal' }).click();
    await page.getByText('Copy the secret access key now: you will not see this again').waitFor();
    const accessKeyId = await page.locator('#principal-key-id').inputValue();
    const secretAccessKey = await page.locator('#principal-secret').inputValue();
    expect(accessKeyId).toMatch(/^AKIA[A-Z2-7]{16}$/);
    expect(secretAccessKey).toHaveLength(40);
    await page.getByRole('button', { name: 'Copy secret access key' }).click();
    await page.getByText('Copied to the clipboard').waitFor();
    expect(
      await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()),
    ).toBe(secretAccessKey);
    await expectAccessible(page);
    await page.screenshot({
      path: path.join(SCREENSHOTS, 'principal-secret-shown.png'),
      fullPage: true,
      mask: [page.locator('#principal-secret')],
      maskColor: '#c8c8c8',
    });

    // Shown once: after Done the page lists the principal, pending, and never the secret again.
    await clickReloading(page, page.getByRole('button', { name: 'Done' }));
    const row = page.getByRole('row', { name: new RegExp(accessKeyId) });
    await row.getByRole('cell', { name: 'pending' }).waitFor();
    expect(await page.content()).not.toContain(secretAccessKey);

    await row.getByRole('button', { name: `Issue challenge for ${accessKeyId}` }).click();
    await page.getByText('Copy the challenge now: you will not see this again').waitFor();
    const challenge = await page.locator('#challenge-value').inputValue();
    expect(challenge).toMatch(/^sbc_/);
    const expiresAt = new Date((await page.locator('#challenge-once [data-answer="expires_at"]').textContent())!).getTime();
    expect(expiresAt - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(10 * 60_000);

    // The principal signs principals/verify with the challenge (AWS's own signer); the page then says verified.
    const verifyPath = `/v1/tenants/${demoWorkspace}/principals/verify`;
    const body = JSON.stringify({ challenge });
    const headers = await signedHeaders(bus, { accessKeyId, secretAccessKey }, verifyPath, body, { region: 'us-east-1' });
    const verified = await fetch(`${bus.busUrl}${verifyPath}`, { method: 'POST', headers, body });
    expect(verified.status).toBe(200);
    await clickReloading(page, page.getByRole('button', { name: 'Done' }));
    await page
      .getByRole('row', { name: new RegExp(accessKeyId) })
      .getByRole('cell', { name: 'verified' })
      .waitFor();
    expect(await page.content()).not.toContain(challenge);

    // Revoke, then remove; each change is in the audit log with the house, and no secret is.
    await confirmChange(
      page,
      page.getByRole('button', { name: `Revoke ${accessKeyId}` }),
      /Requests it signs are refused/,
      `Revoked AWS principal ${accessKeyId}.`,
    );
    await page
      .getByRole('row', { name: new RegExp(accessKeyId) })
      .getByRole('cell', { name: 'revoked' })
      .waitFor();
    await confirmChange(page, page.getByRole('button', { name: `Remove ${accessKeyId}` }), /for good/, `Removed AWS principal ${accessKeyId}.`, accessKeyId);
    await page.getByRole('cell', { name: 'No AWS principals' }).waitFor();
    const audit = await apiCall(page, 'GET', '/api/portal/audit');
    const actions = (audit.body as { entries: Array<{ action: string; target: string; organisation_id: string | null }> }).entries.filter(
      (e) => e.target === accessKeyId,
    );
    expect(actions.map((e) => [e.action.split(' ')[0], e.organisation_id]).reverse()).toEqual([
      ['principal.register', DEMO_HOUSE],
      ['principal.challenge', DEMO_HOUSE],
      ['principal.revoke', DEMO_HOUSE],
      ['principal.remove', DEMO_HOUSE],
    ]);
    expect(audit.text).not.toContain(secretAccessKey);
    expect(audit.text).not.toContain(challenge);
    expect(answers()).toEqual([
      'POST /api/portal/connections/:id/principals 400',
      'POST /api/portal/connections/:id/principals 201',
      'POST /api/portal/connections/:id/principals/:id/challenge 201',
      'POST /api/portal/connections/:id/principals/:id/revoke 200',
      'POST /api/portal/connections/:id/principals/:id/remove 200',
    ]);
    await context.close();
  }, 90_000);

  it("lets a house admin bind a provider's client to a connection and remove the binding; the providers stay the operator's", async () => {
    const provider = await adminCall('POST', '/api/admin/identity-providers', {
      issuer: `https://idp-${randomUUID()}.example.com`,
      jwks_url: 'https://idp.example.com/jwks',
      audiences: ['message-bus'],
      client_claim: 'azp',
    });
    const { context, page } = await signIn('house-admin');
    const answers = await observeApiAnswers(page);
    const clientId = await newConnection(page, 'producer');
    await openConnectionPage(page, clientId, 'Principals and bindings');
    const client = `portal-client-${randomUUID()}`;
    await page.getByLabel('Identity provider').selectOption(provider.id);
    await page.getByLabel('Client claim value').fill(client);
    await clickReloading(page, page.getByRole('button', { name: 'Add binding' }));
    await page.getByRole('row', { name: new RegExp(client) }).waitFor();
    await expectAccessible(page);
    const listed = await apiCall(page, 'GET', `/api/portal/connections/${clientId}/bindings`);
    const [binding] = (listed.body as { bindings: Array<{ id: string; provider_id: string; client: string }> }).bindings;
    expect(binding).toMatchObject({ provider_id: provider.id, client, connection_id: clientId });
    // The operator's admin API sees the same binding.
    const operatorView = await adminCall('GET', `/api/admin/identity-providers/${provider.id}/bindings`);
    expect(operatorView.bindings).toEqual([expect.objectContaining({ id: binding!.id, connection_id: clientId })]);

    await confirmChange(
      page,
      page.getByRole('button', { name: `Remove binding ${binding!.id}` }),
      /no longer act as this connection/,
      `Removed binding ${binding!.id}.`,
    );
    await page.getByRole('cell', { name: 'No bindings' }).waitFor();
    expect((await adminCall('GET', `/api/admin/identity-providers/${provider.id}/bindings`)).bindings).toEqual([]);
    expect(answers()).toEqual(['POST /api/portal/connections/:id/bindings 201', 'POST /api/portal/connections/:id/bindings/:id/remove 200']);
    await context.close();
  }, 60_000);

  it("checks a skills file before saving it: a broken instance shows the catalogue's own problem and nothing is saved; a valid file is saved, listed and removed", async () => {
    const { context, page } = await signIn('house-admin');
    const answers = await observeApiAnswers(page);
    const clientId = await newConnection(page, 'consumer');
    await openConnectionPage(page, clientId, 'Skill registrations');
    await expectAccessible(page);

    const catalogue = await fetch(`${portalUrl}/api/skills/validate`, { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: BROKEN_SKILLS });
    const problems = ((await catalogue.json()) as { instances: Array<{ problems: string[] }> }).instances.flatMap((i) => i.problems);
    expect(problems.length).toBeGreaterThan(0);
    await page.getByLabel(/Or paste it/).fill(BROKEN_SKILLS);
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText('Checked: the catalogue reports problems; nothing was saved.').waitFor();
    const listed = page.locator('#check-result li');
    expect(await listed.allTextContents()).toEqual(problems.map((p) => `Instance 0 (broken pacing, skill telling/pacing): ${p}`));
    await expectAccessible(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'registration-checked.png'), fullPage: true });
    // Saving anyway is refused with the same answer, and nothing is registered.
    await page.getByRole('button', { name: 'Save registrations' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Refused: .+\(422\)$/ })
      .waitFor();
    expect(await listed.allTextContents()).toHaveLength(problems.length);
    expect((await apiCall(page, 'GET', `/api/portal/connections/${clientId}/registrations`)).body).toEqual({ registrations: [] });

    // A valid file, uploaded: checked clean, then saved and listed.
    await page.getByLabel('Upload a skills file').setInputFiles({ name: 'skills.yaml', mimeType: 'application/yaml', buffer: Buffer.from(VALID_SKILLS) });
    await eventually(
      () => page.getByLabel(/Or paste it/).inputValue(),
      (text) => text === VALID_SKILLS,
      { what: 'the uploaded file in the text field' },
    );
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText('Checked: no problems.').waitFor();
    await clickReloading(page, page.getByRole('button', { name: 'Save registrations' }));
    const registered = page.getByRole('row', { name: /web pacing/ });
    await registered.waitFor();
    const [registration] = (
      (await apiCall(page, 'GET', `/api/portal/connections/${clientId}/registrations`)).body as { registrations: Array<{ registration_id: string }> }
    ).registrations;
    await confirmChange(
      page,
      registered.getByRole('button', { name: `Remove ${registration!.registration_id}` }),
      /no longer receives for it/,
      `Removed registration ${registration!.registration_id}`,
    );
    await page.getByRole('cell', { name: 'No registrations' }).waitFor();
    const audit = await apiCall(page, 'GET', '/api/portal/audit');
    expect((audit.body as { entries: unknown[] }).entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'registration.add 1 (web pacing)', target: clientId, organisation_id: DEMO_HOUSE }),
        expect.objectContaining({ action: `registration.remove on ${clientId}`, target: registration!.registration_id, organisation_id: DEMO_HOUSE }),
      ]),
    );
    expect(answers()).toEqual([
      'POST /api/portal/connections/:id/registrations/check 200',
      'POST /api/portal/connections/:id/registrations 422',
      'POST /api/portal/connections/:id/registrations/check 200',
      'POST /api/portal/connections/:id/registrations 201',
      'POST /api/portal/connections/:id/registrations/:id/remove 200',
    ]);
    await context.close();
  }, 90_000);

  it("shows a viewer a house connection's principals and registrations without controls, and the server refuses the viewer's and a vendor's changes with 403", async () => {
    const consumer = await adminCall('POST', '/api/admin/connections', { app_id: DEMO_APP, kind: 'consumer' });
    const clientId = consumer.client_id as string;
    const principal = await adminCall('POST', `/api/admin/connections/${clientId}/principals`, { role_arn: ROLE_ARN });
    const accessKeyId = principal.access_key_id as string;
    const changes: Array<[string, unknown]> = [
      [`/api/portal/connections/${clientId}/principals`, { role_arn: ROLE_ARN }],
      [`/api/portal/connections/${clientId}/principals/${accessKeyId}/challenge`, undefined],
      [`/api/portal/connections/${clientId}/principals/${accessKeyId}/revoke`, undefined],
      [`/api/portal/connections/${clientId}/principals/${accessKeyId}/remove`, undefined],
      [`/api/portal/connections/${clientId}/bindings`, { provider_id: 'inosuchidp222', client: 'any' }],
      [`/api/portal/connections/${clientId}/registrations/check`, { yaml: VALID_SKILLS }],
      [`/api/portal/connections/${clientId}/registrations`, { yaml: VALID_SKILLS }],
    ];

    const viewer = await signIn('viewer');
    await viewer.page.goto(`${portalUrl}/portal/connections/${clientId}/principals`);
    await viewer.page.getByRole('cell', { name: accessKeyId }).waitFor();
    expect(await viewer.page.getByRole('button').filter({ hasNotText: 'Sign out' }).count()).toBe(0);
    await expectAccessible(viewer.page);
    await viewer.page.goto(`${portalUrl}/portal/connections/${clientId}/registrations`);
    expect(await viewer.page.getByRole('button', { name: /Check|Save/ }).count()).toBe(0);
    expect(await viewer.page.getByLabel('Upload a skills file').count()).toBe(0);
    for (const [route, body] of changes) {
      expect([route, await apiCall(viewer.page, 'POST', route, body)]).toEqual([
        route,
        expect.objectContaining({ status: 403, body: expect.objectContaining({ code: 'portal.forbidden' }) }),
      ]);
    }
    expect((await apiCall(viewer.page, 'GET', `/api/portal/connections/${clientId}/principals`)).status).toBe(200);
    await viewer.context.close();

    // The vendor may not even read the house's connection; on its own app's connection it may change them.
    const vendor = await signIn('vendor');
    const refusedPage = await vendor.page.goto(`${portalUrl}/portal/connections/${clientId}/principals`);
    expect(refusedPage!.status()).toBe(403);
    await vendor.page.goto(`${portalUrl}/portal`);
    for (const [route, body] of changes) {
      expect([route, (await apiCall(vendor.page, 'POST', route, body)).status]).toEqual([route, 403]);
    }
    const own = await newConnection(vendor.page, 'producer', VENDOR_APP);
    expect((await apiCall(vendor.page, 'POST', `/api/portal/connections/${own}/principals`, { role_arn: ROLE_ARN })).status).toBe(201);
    // Nothing of the refused changes happened.
    expect((await adminCall('GET', `/api/admin/connections/${clientId}/principals`)).principals).toEqual([
      expect.objectContaining({ access_key_id: accessKeyId, status: 'pending' }),
    ]);
    await vendor.context.close();
  }, 90_000);
});
