import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { startServer } from '../lib/server.mjs';

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await openBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the dashboard hydrates and shows the server status from a server function', async () => {
  const page = await browser.context.newPage();
  await gotoHydrated(page, `${server.url}/status`);

  const status = page.getByRole('status');
  await assert.doesNotReject(status.getByText('Not checked yet.').waitFor());

  // The answer must come from the running server: compare with its REST face.
  const expected = await (await fetch(`${server.url}/api/status`)).json();

  const rpc = page.waitForResponse((r) => r.url().endsWith('/rpc/status'));
  await page.getByRole('button', { name: 'Check server' }).click();
  assert.equal((await rpc).status(), 200);

  const table = page.getByRole('definition');
  await table.first().waitFor();
  const field = (name) => page.locator(`dd[data-field="${name}"]`).innerText();
  assert.equal(await field('version'), expected.version);
  assert.equal(await field('store'), server.dataDir);
  assert.equal(await field('store'), expected.store.location);
  assert.match(await field('model'), new RegExp(expected.embedding.model));
  // `make test` installs the real model, so the server must have loaded it.
  assert.equal(expected.embedding.loaded, true, expected.embedding.error ?? '');
  assert.equal(await field('backend'), expected.embedding.backend);
  // No --reranker-dir here: the built-in second stage, as the API says.
  assert.match(expected.reranker, /^lead prior/);
  assert.equal(await field('reranker'), expected.reranker);

  await page.screenshot({ path: path.join(artifactsDir, 'dashboard-status.png'), fullPage: true });
  await page.close();
});

test('an unknown path renders the not-found page with a 404', async () => {
  const page = await browser.context.newPage();
  const response = await page.goto(`${server.url}/no/such/page`);
  assert.equal(response.status(), 404);
  await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  await page.close();
});
