// The dashboard on a server whose reads need a token (`--auth-reads`):
// sign-in and sign-out with a session cookie, a read-only user who sees no
// upload or delete controls, an admin who makes and revokes tokens on the
// settings page, and upload progress that still streams (an EventSource
// sends the cookie; the job's watch token stays for other clients). No
// token ever goes into a URL.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { startServer, uploadAndWait } from '../lib/server.mjs';

const TOKEN = 'e2e-reads-need-this';
// A credential the operator declares for private sources: the settings
// page lists its name and places, never its secret nor where it is kept.
const GIT_SECRET = 'glpat-e2e-never-shown';
const DECLARED = 'gitlab-ci=env:E2E_GITLAB_TOKEN@gitlab.example.com;libraries=team-*';

let server;
let browser;
let reader;

before(async () => {
  server = await startServer({
    args: ['--token', TOKEN, '--auth-reads', '--credential', DECLARED],
    env: { E2E_GITLAB_TOKEN: GIT_SECRET },
  });
  browser = await openBrowser();
  const made = await fetch(`${server.url}/api/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'reader', grants: [{ role: 'read', libraries: '*' }] }),
  });
  assert.equal(made.status, 201);
  reader = (await made.json()).token;
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The browser's one context, signed out (its cookies cleared). */
async function freshContext() {
  await browser.context.clearCookies();
  return browser.context;
}

/** Signs the page in with `token` from the top bar, and waits for the name. */
async function signIn(page, token, name) {
  await page.getByLabel('Token', { exact: true }).fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').filter({ hasText: name }).waitFor();
}

test('signed in, upload progress streams to the page; the token stays out of URLs and scripts', async () => {
  const context = await freshContext();
  const page = await context.newPage();
  await gotoHydrated(page, `${server.url}/upload`);
  await signIn(page, TOKEN, 'admin');
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'docshelf_session');
  assert.ok(session, 'a session cookie');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Strict');
  assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read it');

  await page.getByLabel('Library', { exact: true }).fill('locked');
  await page.getByLabel('Version', { exact: true }).fill('1.0');
  await page.getByLabel('Files').setInputFiles([
    { name: 'hinges.md', mimeType: 'text/markdown', buffer: Buffer.from('# Hinges\n\nOil the hinges of a garden gate each spring.\n') },
  ]);
  const events = page.waitForResponse((r) => r.url().includes('/events'));
  await page.getByRole('button', { name: 'Upload' }).click();
  const stream = await events;
  assert.equal(stream.status(), 200, 'the events stream is admitted');
  assert.ok(!stream.url().includes(TOKEN), 'the token stays out of URLs');
  const summary = page.getByText(/^Done: /);
  await summary.waitFor({ timeout: 120_000 });
  assert.equal(await summary.innerText(), 'Done: 1 stored, 0 failed.');
  await page.screenshot({ path: path.join(artifactsDir, 'auth-reads-upload.png'), fullPage: true });

  // The same stream without a token is refused: the guard is real.
  const id = new URL(stream.url()).pathname.split('/')[3];
  const bare = await fetch(`${server.url}/api/jobs/${id}/events`);
  assert.equal(bare.status, 401);
  assert.equal((await bare.json()).kind, 'unauthorized');
  // A token in the query string is refused, not read.
  const leaked = await fetch(`${server.url}/api/libraries?token=${TOKEN}`);
  assert.equal(leaked.status, 400);
  assert.equal((await leaked.json()).code, 'token_in_query');

  // Signing out clears the cookie: the page shows the sign-in form again.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  assert.equal((await context.cookies()).some((c) => c.name === 'docshelf_session'), false);
  await page.close();
});

test('server functions are guarded by their route and act as the signed-in token', async () => {
  // Straight at /rpc, as a client that is not a browser would call it: the
  // read and the write are refused without a token, in the page's words.
  const call = (name, body, token) =>
    fetch(`${server.url}/rpc/${name}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body,
    });
  for (const [name, body] of [['status', ''], ['delete', 'library=no-such-library']]) {
    const bare = await call(name, body);
    assert.equal(bare.status, 401, name);
    assert.deepEqual(await bare.json(), {
      code: 'missing_token',
      kind: 'unauthorized',
      error: 'this needs a token: sign in at the top of the page',
      link: 'docs/errors.md#missing_token',
    });
    const wrong = await call(name, body, 'not-the-token');
    assert.equal(wrong.status, 401, name);
    assert.equal((await wrong.json()).code, 'invalid_token');
    assert.notEqual((await call(name, body, TOKEN)).status, 401, name);
  }
  // A read token reads, and its delete is refused with 403.
  assert.equal((await call('status', '', reader)).status, 200);
  const refused = await call('delete', 'library=locked', reader);
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).code, 'not_permitted');

  // Signed out, the page shows the server's refusal; signed in, the library.
  const context = await freshContext();
  const page = await context.newPage();
  await gotoHydrated(page, `${server.url}/libraries`);
  await page.getByText('this needs a token: sign in at the top of the page').first().waitFor();
  await signIn(page, TOKEN, 'admin');
  await page.getByRole('heading', { name: 'locked' }).waitFor();
  await page.close();
});

test('a read-only user sees no upload, delete or token controls', async () => {
  const context = await freshContext();
  const page = await context.newPage();
  await gotoHydrated(page, `${server.url}/libraries`);
  await signIn(page, reader, 'reader');
  await page.getByRole('heading', { name: 'locked' }).waitFor();
  await page.locator('[data-viewer="true"]').waitFor();
  const nav = page.getByRole('navigation', { name: 'Main' });
  assert.equal(await nav.getByRole('link', { name: 'Upload' }).count(), 0);
  assert.equal(await nav.getByRole('link', { name: 'Settings' }).count(), 0);
  assert.equal(await page.getByRole('button', { name: /^Delete/ }).count(), 0);
  await page.getByRole('button', { name: 'locked 1.0' }).click();
  await page.getByRole('link', { name: 'hinges.md' }).waitFor();
  assert.equal(await page.getByRole('button', { name: /^Delete/ }).count(), 0);

  await gotoHydrated(page, `${server.url}/upload`);
  await page.getByText('may only read').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Upload' }).isVisible(), false);
  await page.close();
});

test('an admin makes a token on the settings page, sees it once, and revokes it', async () => {
  const context = await freshContext();
  const page = await context.newPage();
  await gotoHydrated(page, `${server.url}/libraries`);
  await signIn(page, TOKEN, 'admin');
  await page.getByRole('button', { name: 'Delete library locked' }).waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Name', { exact: true }).fill('ci-locked');
  await page.getByLabel('Grants').fill('write:locked');
  await page.getByRole('button', { name: 'Make token' }).click();
  const secret = await page.getByTestId('new-token').innerText();
  assert.match(secret, /^dsk_/);
  const table = page.getByRole('table', { name: 'Tokens' });
  await table.getByRole('cell', { name: 'ci-locked', exact: true }).waitFor();
  assert.ok(!(await table.innerText()).includes(secret), 'the list never shows a secret');

  // The new token writes to its library.
  const form = new FormData();
  form.set('library', 'locked');
  form.set('version', '2.0');
  form.append('file', new Blob(['# Gate\n\nA gate.\n']), 'gate.md');
  const upload = await fetch(`${server.url}/api/upload`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${secret}` },
  });
  assert.equal(upload.status, 202);

  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: 'Revoke token ci-locked' }).click();
  await page.getByText('Token ci-locked revoked.').waitFor();
  const after = await fetch(`${server.url}/api/libraries`, { headers: { authorization: `Bearer ${secret}` } });
  assert.equal(after.status, 401);
  assert.equal((await after.json()).code, 'token_revoked');
  await page.getByRole('table', { name: 'Audit log' }).getByText('revoke_token').first().waitFor();

  // The operator's credentials: name, host and libraries; nothing else.
  const credentials = page.getByRole('table', { name: 'Credentials' });
  await credentials.getByRole('cell', { name: 'gitlab-ci', exact: true }).waitFor();
  const listed = await credentials.innerText();
  assert.match(listed, /gitlab\.example\.com/);
  assert.match(listed, /team-\*/);
  const whole = await page.content();
  assert.ok(!whole.includes(GIT_SECRET) && !whole.includes('E2E_GITLAB_TOKEN'), 'no secret, no reference');
  await page.close();
});
