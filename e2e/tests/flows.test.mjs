// The dashboard's main flows in a real browser against a real server with
// the real model: upload (every format, one corrupt file), libraries and
// counts, search, the sticky library across queries and reloads, reading a
// document, feedback, and deleting a document.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { repoRoot, startServer, uploadAndWait } from '../lib/server.mjs';

const pdfDir = path.join(repoRoot, '..', 'shared', 'data', 'pdf');
const fixtures = path.join(repoRoot, 'e2e', 'fixtures');

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await openBrowser();
  page = await browser.context.newPage();
  page.on('dialog', (dialog) => dialog.accept());
  // A second library, through the API, for the sticky-library flows.
  await uploadAndWait(server.url, {
    library: 'kitchen',
    version: '2.0',
    files: [
      { name: 'bins.md', text: '# Compost bins\n\nA kitchen compost bin with a carbon filter keeps scraps from smelling.\n' },
      { name: 'knives.md', text: '# Knives\n\nHone a chef knife weekly and sharpen it twice a year.\n' },
    ],
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const shot = (name) => page.screenshot({ path: path.join(artifactsDir, `${name}.png`), fullPage: true });

/** Submits a search from the page and waits for its answer. */
async function searchFor(query, { library } = {}) {
  if (library !== undefined) await page.getByLabel('Library', { exact: true }).fill(library);
  await page.getByRole('searchbox', { name: 'Query' }).fill(query);
  const answered = page.waitForResponse((r) => r.url().endsWith('/rpc/search'));
  await page.getByRole('searchbox', { name: 'Query' }).press('Enter');
  assert.equal((await answered).status(), 200);
  await page.getByText(/\d+ results? in \d+ ms|No results/).waitFor();
}

/** The result titles, in order. */
const resultTitles = () => page.getByRole('listitem').getByRole('heading', { level: 3 }).allInnerTexts();
const resultSources = () => page.locator('li.hit .source').allInnerTexts();

test('uploading every format shows live progress; a corrupt PDF fails alone', async () => {
  await gotoHydrated(page, `${server.url}/upload`);
  await page.getByLabel('Library', { exact: true }).fill('garden');
  await page.getByLabel('Version', { exact: true }).fill('1.0');
  await page.getByLabel('Files').setInputFiles([
    { name: 'roses.md', mimeType: 'text/markdown', buffer: Buffer.from('# Roses\n\nPrune roses in late winter, just above an outward-facing bud.\n') },
    {
      name: 'compost.html',
      mimeType: 'text/html',
      buffer: Buffer.from('<html><head><title>Compost heaps</title></head><body><h1>Compost heaps</h1><p>A compost heap turns garden leaves into humus within a year.</p></body></html>'),
    },
    { name: 'crazyones.pdf', mimeType: 'application/pdf', buffer: await readFile(path.join(pdfDir, 'pypdf-crazyones.pdf')) },
    { name: 'bundle.zip', mimeType: 'application/zip', buffer: await readFile(path.join(fixtures, 'bundle.zip')) },
    { name: 'broken.pdf', mimeType: 'application/pdf', buffer: await readFile(path.join(pdfDir, '03-invalid.pdf')) },
  ]);
  await page.getByRole('button', { name: 'Upload' }).click();
  const summary = page.getByText(/^Done: /);
  await summary.waitFor({ timeout: 180_000 });
  assert.equal(await summary.innerText(), 'Done: 5 stored, 1 failed.');
  const files = page.getByRole('table', { name: 'Files' });
  const row = (name) => files.getByRole('row').filter({ hasText: name });
  for (const name of ['roses.md', 'compost.html', 'crazyones.pdf', 'watering/tomatoes.md', 'notes.txt']) {
    assert.match(await row(name).innerText(), /stored \(\d+ chunks, \d+ new\)/, name);
  }
  assert.match(await row('broken.pdf').innerText(), /failed: .+/);
  await shot('upload-done');
});

test('the libraries page lists both libraries with their counts', async () => {
  await gotoHydrated(page, `${server.url}/libraries`);
  const garden = page.getByRole('article', { name: 'garden' });
  await garden.waitFor();
  assert.match(await garden.innerText(), /5 documents/);
  const kitchen = page.getByRole('article', { name: 'kitchen' });
  assert.match(await kitchen.innerText(), /2 documents/);
  await garden.getByRole('button', { name: 'garden 1.0', exact: true }).click();
  const docs = page.getByRole('list', { name: 'Documents of garden 1.0' });
  await docs.waitFor();
  assert.deepEqual(
    (await docs.getByRole('link').allInnerTexts()).sort(),
    ['compost.html', 'crazyones.pdf', 'notes.txt', 'roses.md', 'watering/tomatoes.md'],
  );
  await shot('libraries');
});

test('search finds the right document first and a liked result counts the vote', async () => {
  await gotoHydrated(page, server.url);
  await searchFor('when should I prune roses');
  assert.equal((await resultTitles())[0], 'Roses');
  const first = page.getByRole('listitem').filter({ has: page.getByRole('heading', { level: 3 }) }).first();
  const marked = await first.locator('.snippet mark').allInnerTexts();
  assert.ok(marked.some((m) => /^prune$/i.test(m)) && marked.some((m) => /^roses$/i.test(m)), String(marked));
  await first.getByRole('button', { name: 'Like this result', exact: true }).click();
  await first.getByText('Thanks! 1 like(s), 0 dislike(s) so far.').waitFor();
  await searchFor('things they invent and imagine');
  assert.match((await resultSources())[0], /crazyones\.pdf · page 1/);
  await shot('search');
});

test('the sticky library follows the next query and a reload, until cleared', async () => {
  await gotoHydrated(page, server.url);
  await searchFor('compost', { library: 'kitchen' });
  const chip = page.getByRole('status', { name: 'Sticky library' });
  await chip.waitFor();
  assert.match(await chip.innerText(), /kitchen/);
  assert.ok((await resultSources()).every((s) => s.startsWith('kitchen ')));

  // The next query names no library: still kitchen only.
  await searchFor('turning scraps into humus', { library: '' });
  assert.ok((await resultSources()).every((s) => s.startsWith('kitchen ')), String(await resultSources()));
  await page.getByRole('note').filter({ hasText: 'Searched kitchen only' }).waitFor();

  // A reload keeps the URL's query and the session's sticky library.
  const answered = page.waitForResponse((r) => r.url().endsWith('/rpc/search'));
  await page.reload();
  await page.locator('.app[data-hydrated="true"]').waitFor();
  await answered;
  await chip.waitFor();
  await page.getByText(/\d+ results? in/).waitFor();
  assert.ok((await resultSources()).every((s) => s.startsWith('kitchen ')));
  await shot('search-sticky');

  await page.getByRole('button', { name: 'Clear sticky library kitchen' }).click();
  await chip.waitFor({ state: 'detached' });
  await searchFor('compost', { library: '' });
  const sources = await resultSources();
  assert.ok(sources.some((s) => s.startsWith('garden ')) && sources.some((s) => s.startsWith('kitchen ')), String(sources));
  await page.getByRole('note').filter({ hasText: 'Found in' }).waitFor();
  assert.equal(await page.getByRole('region', { name: /Results from/ }).count(), 2);
});

test('opening a result shows the whole document scrolled to the highlighted hit', async () => {
  await gotoHydrated(page, server.url);
  await searchFor('water tomato plants deeply', { library: 'garden' });
  await page.getByRole('link', { name: 'Open' }).first().click();
  await page.waitForURL(/\/doc\?/);
  const hit = page.locator('mark#hit');
  await hit.waitFor();
  assert.match(await hit.innerText(), /Water tomato plants deeply/);
  assert.ok(await hit.isVisible());
  assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /Watering tomatoes/);
  await shot('document');
});

test('deleting a document removes it from search', async () => {
  await gotoHydrated(page, `${server.url}/libraries`);
  await page.getByRole('button', { name: 'garden 1.0', exact: true }).click();
  const deleted = page.waitForResponse((r) => r.url().endsWith('/rpc/delete'));
  await page.getByRole('button', { name: 'Delete document roses.md' }).click();
  assert.equal((await deleted).status(), 200);
  await page.getByText(/Deleted roses\.md: 1 document/).waitFor();
  await gotoHydrated(page, `${server.url}/?q=${encodeURIComponent('prune roses in winter')}&library=garden`);
  await page.getByText(/\d+ results? in \d+ ms|No results/).waitFor();
  assert.ok(!(await resultSources()).some((s) => s.includes('roses.md')));
});

test('pages fit a phone-width screen without sideways scrolling', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    for (const url of [`/?q=${encodeURIComponent('compost heap')}`, '/upload', '/libraries']) {
      await gotoHydrated(page, `${server.url}${url}`);
      if (url.startsWith('/?')) await page.getByText(/\d+ results? in/).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${url} overflows by ${overflow}px`);
    }
    await gotoHydrated(page, `${server.url}/?q=${encodeURIComponent('compost heap')}`);
    await page.getByText(/\d+ results? in/).waitFor();
    await shot('search-phone');
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
});
