// "Add from URL" and the Sources list on the upload page: a site without a
// version is refused with the server's words; a small site served on
// loopback (the server runs with --allow-private-urls) is crawled with live
// progress, listed with its counts, refreshed with every page unchanged, and
// deleted with its version after a confirmation; a refresh started elsewhere
// shows its end on the open page. A Git repository on a real
// Git server on loopback (git http-backend, scripts/git-http-server.py) is
// added with the Git fields: its release tags tracked as versions.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { startServer } from '../lib/server.mjs';

const pages = {
  '/docs/': '<html><head><title>Pond guide</title></head><body><nav>Home · Blog</nav><main><h1>Pond guide</h1><p>Oxygenating plants keep a garden pond clear.</p><a href="/docs/fish.html">Fish</a></main></body></html>',
  '/docs/fish.html': '<html><head><title>Pond fish</title></head><body><main><h1>Pond fish</h1><p>Goldfish overwinter in a pond at least 80 cm deep.</p></main></body></html>',
};

/** Held back until a test lets it go: `/held/` answers only then. */
let heldPage = Promise.resolve();

let site;
let siteUrl;
let gitServer;
let gitRoot;
let server;
let browser;
let page;

before(async () => {
  site = http.createServer(async (req, res) => {
    if (req.url === '/held/') {
      await heldPage;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<html><head><title>Reeds</title></head><body><main><h1>Reeds</h1><p>Cut reeds back in early spring.</p></main></body></html>');
      return;
    }
    const body = pages[req.url];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${site.address().port}/docs/`;
  server = await startServer({ args: ['--allow-private-urls'] });
  browser = await openBrowser();
  page = await browser.context.newPage();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  site?.close();
  gitServer?.kill();
  if (gitRoot) fs.rmSync(gitRoot, { recursive: true, force: true });
});

/** A bare repository `garden.git` with docs at tags v1.0.0 and v1.1.0,
 * made by the git CLI and served by git http-backend: its base URL. */
async function startGitServer() {
  gitRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'docshelf-e2e-git-'));
  const work = path.join(gitRoot, 'work');
  const git = (...args) => execFileSync('git', ['-C', work, ...args], {
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' },
  });
  fs.mkdirSync(path.join(work, 'docs'), { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  fs.writeFileSync(path.join(work, 'docs', 'beds.md'), '# Raised beds\n\nLine raised beds with cardboard first.\n');
  git('add', '.');
  git('commit', '-q', '-m', 'one');
  git('tag', 'v1.0.0');
  fs.writeFileSync(path.join(work, 'docs', 'compost.md'), '# Compost\n\nTurn the compost heap every two weeks.\n');
  git('add', '.');
  git('commit', '-q', '-m', 'two');
  git('tag', 'v1.1.0');
  const served = path.join(gitRoot, 'served');
  fs.mkdirSync(served);
  execFileSync('git', ['clone', '-q', '--bare', work, path.join(served, 'garden.git')]);
  const script = path.join(import.meta.dirname, '..', '..', 'scripts', 'git-http-server.py');
  gitServer = spawn('python3', [script, served], { stdio: ['ignore', 'pipe', 'inherit'] });
  // The server's first line is its port, once it listens.
  const [port] = await readline.createInterface({ input: gitServer.stdout })[Symbol.asyncIterator]().next()
    .then(({ value }) => [value.trim()]);
  return `http://127.0.0.1:${port}`;
}

/** Fills the "Add from URL" form and submits it; the answer to the POST. */
async function addSource({ url, library, version = '' }) {
  await page.getByLabel('URL or package').fill(url);
  await page.getByLabel('Into library').fill(library);
  await page.getByLabel('As version').fill(version);
  const answered = page.waitForResponse((r) => r.url().endsWith('/api/sources') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  return answered;
}

test('a site without a version is refused with the server\'s words', async () => {
  await gotoHydrated(page, `${server.url}/upload`);
  await page.getByText('No sources yet').waitFor();
  const answer = await addSource({ url: siteUrl, library: 'pond' });
  assert.equal(answer.status(), 400);
  const form = page.getByRole('region', { name: 'Add from URL' });
  await form.getByRole('alert').waitFor();
});

test('a crawled site shows its progress, is listed, and refreshes unchanged', async () => {
  await gotoHydrated(page, `${server.url}/upload`);
  const answer = await addSource({ url: siteUrl, library: 'pond', version: '1.0' });
  assert.equal(answer.status(), 202);
  const form = page.getByRole('region', { name: 'Add from URL' });
  const done = form.getByText(/^Done: /);
  await done.waitFor({ timeout: 180_000 });
  assert.equal(await done.innerText(), 'Done: 2 stored, 0 failed.');

  const sources = page.getByRole('region', { name: 'Sources' });
  const card = sources.getByRole('listitem').filter({ hasText: siteUrl });
  await card.getByText(/^Last refreshed /).waitFor();
  assert.match(await card.innerText(), /pond 1\.0/);
  assert.match(await card.locator('dl.counts').innerText(), /Pages\s+2/);

  await card.getByRole('button', { name: 'Refresh pond 1.0 from its source' }).click();
  const refreshed = sources.getByText(/^Done: /);
  await refreshed.waitFor({ timeout: 180_000 });
  assert.equal(await refreshed.innerText(), 'Done: 0 stored, 2 unchanged, 0 failed.');
  await page.screenshot({ path: path.join(artifactsDir, 'sources.png'), fullPage: true });
});

test('a source is deleted with its version, after a confirmation', async () => {
  await gotoHydrated(page, `${server.url}/upload`);
  const sources = page.getByRole('region', { name: 'Sources' });
  const card = sources.getByRole('listitem').filter({ hasText: siteUrl });
  await card.getByText(/^Last refreshed /).waitFor();
  // Dismissed first: nothing is deleted.
  page.once('dialog', (dialog) => dialog.dismiss());
  await card.getByRole('button', { name: 'Delete the source of pond 1.0' }).click();
  assert.equal(await card.count(), 1);
  page.once('dialog', (dialog) => {
    assert.match(dialog.message(), /Delete the source of pond 1\.0 and the version it fills/);
    dialog.accept();
  });
  const answered = page.waitForResponse((r) => r.url().includes('/api/sources/') && r.request().method() === 'DELETE');
  await card.getByRole('button', { name: 'Delete the source of pond 1.0' }).click();
  assert.equal((await answered).status(), 200);
  await sources.getByText('Deleted the source of pond 1.0: 2 document(s)', { exact: false }).waitFor();
  await sources.getByText('No sources yet').waitFor();
  const libraries = await (await fetch(`${server.url}/api/libraries`)).json();
  assert.ok(!libraries.some((l) => l.name === 'pond'), JSON.stringify(libraries));
});

test('a refresh this page did not start shows its end without a reload, through a failed read', async () => {
  // Started through the API while the site holds its page back: the job
  // runs while the dashboard is open, and ends once the page is let go.
  let letGo;
  heldPage = new Promise((resolve) => { letGo = resolve; });
  const heldUrl = siteUrl.replace('/docs/', '/held/');
  try {
    const started = await fetch(`${server.url}/api/sources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: heldUrl, library: 'reeds', version: '1' }),
    });
    assert.equal(started.status, 202, await started.text());
    await gotoHydrated(page, `${server.url}/upload`);
    const panel = page.getByRole('region', { name: 'Sources' });
    const card = panel.getByRole('listitem').filter({ hasText: heldUrl });
    await card.getByText(/^Being refreshed now/).waitFor();
    // One of the list's reads fails on the way (a dropped connection): the
    // list shows the error, and still reads again until the job's end shows.
    let dropped = false;
    await page.route('**/api/sources', async (route) => {
      if (!dropped && route.request().method() === 'GET') {
        dropped = true;
        await route.abort('connectionreset');
      } else {
        await route.continue();
      }
    });
    await panel.getByRole('alert').waitFor();
    await page.unroute('**/api/sources');
  } finally {
    letGo();
  }
  const card = page.getByRole('region', { name: 'Sources' }).getByRole('listitem').filter({ hasText: heldUrl });
  await card.getByText(/^Last refreshed /).waitFor({ timeout: 180_000 });
  assert.equal(await card.getByText(/^Being refreshed now/).count(), 0);
  assert.match(await card.locator('dl.counts').innerText(), /Pages\s+1/);
});

test('a Git repository is added with its release tags tracked as versions', async () => {
  const gitBase = await startGitServer();
  await gotoHydrated(page, `${server.url}/upload`);
  const form = page.getByRole('region', { name: 'Add from URL' });
  await page.getByLabel('URL or package').fill(`${gitBase}/garden.git`);
  await page.getByLabel('Into library').fill('garden');
  // "from" is for packages: the server says so, in the form.
  await form.getByLabel("A package's docs from").selectOption('site');
  let answered = page.waitForResponse((r) => r.url().endsWith('/api/sources') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  let answer = await answered;
  assert.equal(answer.status(), 400);
  assert.equal(answer.request().postDataJSON().from, 'site');
  await form.getByRole('alert').filter({ hasText: 'it is for packages' }).waitFor();

  await form.getByLabel("A package's docs from").selectOption('auto');
  await form.getByText('Git and release options').click();
  await form.getByLabel('Track releases (tag or version pattern)').fill('v*');
  await form.getByLabel('Keep', { exact: true }).fill('2');
  answered = page.waitForResponse((r) => r.url().endsWith('/api/sources') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  answer = await answered;
  assert.equal(answer.status(), 202);
  const sent = answer.request().postDataJSON();
  assert.equal(sent.track, 'v*');
  assert.equal(sent.keep, 2);
  assert.equal(sent.from, undefined);
  const accepted = await answer.json();
  assert.equal(accepted.version, 'v1.1.0');
  assert.deepEqual(accepted.also.map((a) => a.version), ['v1.0.0']);
  const done = form.getByText(/^Done: /);
  await done.waitFor({ timeout: 180_000 });

  // The form follows the first release's job; the other release's ends on
  // its own. Wait for the server to say both are refreshed (an observable
  // state), then read the page afresh. The deadline only turns a hang into
  // a failure that shows what the server last said, like the waits above.
  const deadline = Date.now() + 180_000;
  for (;;) {
    const { sources: all } = await (await fetch(`${server.url}/api/sources`)).json();
    const garden = all.filter((s) => s.library === 'garden');
    if (garden.length === 2 && garden.every((s) => s.last_refresh && !s.running_job)) break;
    assert.ok(Date.now() < deadline, `the garden sources never both refreshed: ${JSON.stringify(garden)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await gotoHydrated(page, `${server.url}/upload`);

  // Both releases are listed as sources, each in the version its tag names.
  const sources = page.getByRole('region', { name: 'Sources' });
  for (const version of ['v1.1.0', 'v1.0.0']) {
    await sources.getByRole('listitem').filter({ hasText: `garden ${version}` }).getByText(/^Last refreshed /)
      .waitFor({ timeout: 180_000 });
  }
  const libraries = await (await fetch(`${server.url}/api/libraries`)).json();
  const garden = libraries.find((l) => l.name === 'garden');
  assert.deepEqual(garden.versions.map((v) => v.version), ['v1.1.0', 'v1.0.0']);
});
