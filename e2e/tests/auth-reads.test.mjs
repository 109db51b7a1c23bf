// The dashboard on a server whose reads need the token (`--auth-reads`):
// upload progress must still stream. The page follows the job with an
// EventSource, which cannot send a bearer header, so it uses the job's own
// watch token; the access token never goes into a URL.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { startServer } from '../lib/server.mjs';

const TOKEN = 'e2e-reads-need-this';

let server;
let browser;

before(async () => {
  server = await startServer({ args: ['--token', TOKEN, '--auth-reads'] });
  browser = await openBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('upload progress streams to the page when reads need the token', async () => {
  const page = await browser.context.newPage();
  await gotoHydrated(page, `${server.url}/upload`);
  await page.getByLabel('Access token').fill(TOKEN);
  await page.getByLabel('Access token').press('Tab');
  await page.getByLabel('Library', { exact: true }).fill('locked');
  await page.getByLabel('Version', { exact: true }).fill('1.0');
  await page.getByLabel('Files').setInputFiles([
    { name: 'hinges.md', mimeType: 'text/markdown', buffer: Buffer.from('# Hinges\n\nOil the hinges of a garden gate each spring.\n') },
  ]);
  const events = page.waitForResponse((r) => r.url().includes('/events'));
  await page.getByRole('button', { name: 'Upload' }).click();
  const stream = await events;
  assert.equal(stream.status(), 200, 'the events stream is admitted by the watch token');
  assert.ok(!stream.url().includes(TOKEN), 'the access token stays out of URLs');
  const summary = page.getByText(/^Done: /);
  await summary.waitFor({ timeout: 120_000 });
  assert.equal(await summary.innerText(), 'Done: 1 stored, 0 failed.');
  await page.screenshot({ path: path.join(artifactsDir, 'auth-reads-upload.png'), fullPage: true });

  // The same stream without a token is refused: the guard is real.
  const id = new URL(stream.url()).pathname.split('/')[3];
  const bare = await fetch(`${server.url}/api/jobs/${id}/events`);
  assert.equal(bare.status, 401);
  assert.equal((await bare.json()).kind, 'unauthorized');
});

test('server functions are guarded by their route, with the token the page sends as a bearer header', async () => {
  // Straight at /rpc, as a client that is not a browser would call it: the
  // read and the write are refused without the token, in the page's words.
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
      error: 'this needs the access token: enter it at the top of the page',
      link: 'docs/errors.md#missing_token',
    });
    const wrong = await call(name, body, 'not-the-token');
    assert.equal(wrong.status, 401, name);
    assert.equal((await wrong.json()).error, 'the access token is wrong');
    assert.notEqual((await call(name, body, TOKEN)).status, 401, name);
  }

  // The page sends the token it was given with every server function.
  const page = await browser.context.newPage();
  await gotoHydrated(page, `${server.url}/libraries`);
  await page.getByLabel('Access token').fill(TOKEN);
  await page.getByLabel('Access token').press('Tab');
  const listed = page.waitForResponse((r) => r.url().endsWith('/rpc/libraries'));
  await page.reload();
  const response = await listed;
  assert.equal(response.status(), 200);
  assert.equal(await response.request().headerValue('authorization'), `Bearer ${TOKEN}`);
  await page.getByRole('heading', { name: 'locked' }).waitFor();

  // Without it, the page shows the server's refusal.
  await page.getByLabel('Access token').fill('');
  await page.getByLabel('Access token').press('Tab');
  await page.reload();
  await page.getByText('this needs the access token: enter it at the top of the page').first().waitFor();
  await page.close();
});
