// A hostile web page in real Chromium: a page served by a second local
// server (another origin) tries the dashboard's delete form, an upload form
// and fetches with credentials against docshelf. Every attempt must be
// refused, and the store must be unchanged.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';

import { openBrowser } from '../lib/browser.mjs';
import { startServer, uploadAndWait } from '../lib/server.mjs';

let server;
let browser;
let attacker;

/** The attacker's page: forms into iframes and no-cors fetches. */
function attackPage(target) {
  return `<!doctype html><html><head><title>cute cats</title></head><body>
<form id="del" method="POST" action="${target}/rpc/delete" target="f1">
  <input name="library" value="keep">
</form>
<form id="up" method="POST" action="${target}/api/upload" enctype="multipart/form-data" target="f2">
  <input name="library" value="planted"><input name="version" value="1">
  <input type="file" name="file">
</form>
<iframe name="f1"></iframe><iframe name="f2"></iframe>
<script>
  document.getElementById('del').submit();
  const up = document.getElementById('up');
  const files = new DataTransfer();
  files.items.add(new File(['# Planted\\n\\nPut here by another site.\\n'], 'planted.md', { type: 'text/markdown' }));
  up.file.files = files.files;
  up.submit();
  Promise.allSettled([
    // Preflighted: without CORS for this origin the browser never sends it.
    fetch('${target}/api/libraries/keep', { method: 'DELETE', credentials: 'include' }),
    fetch('${target}/rpc/delete', {
      method: 'POST', credentials: 'include', mode: 'no-cors',
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'library=keep',
    }),
  ]).then(() => { document.title = 'done'; });
</script></body></html>`;
}

before(async () => {
  server = await startServer();
  await uploadAndWait(server.url, {
    library: 'keep',
    version: '1',
    files: [{ name: 'a.md', text: '# Keep me\n\nThis library must survive.\n' }],
  });
  attacker = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(attackPage(server.url));
  });
  await new Promise((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  browser = await openBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  attacker?.close();
});

async function libraryNames() {
  const res = await fetch(`${server.url}/api/libraries`);
  assert.equal(res.status, 200);
  return (await res.json()).map((l) => l.name).sort();
}

for (const [label, host] of [
  ['another site (localhost vs 127.0.0.1)', 'localhost'],
  ['the same site on another port', '127.0.0.1'],
]) {
  test(`a page from ${label} cannot delete or upload`, async () => {
    const page = await browser.context.newPage();
    const statuses = [];
    page.on('response', (r) => {
      if (r.url().startsWith(server.url)) statuses.push([r.request().method(), new URL(r.url()).pathname, r.status()]);
    });
    const { port } = attacker.address();
    await page.goto(`http://${host}:${port}/`);
    await page.waitForFunction(() => document.title === 'done', null, { timeout: 30_000 });
    // The fetches are settled; wait for the two form posts' answers too:
    // the delete form, the upload form and the form-encoded fetch reach
    // the server (the DELETE fetch is stopped by the browser's preflight).
    const attempts = () => statuses.filter(([m]) => m === 'POST' || m === 'DELETE');
    for (let i = 0; i < 100 && attempts().length < 3; i++) await page.waitForTimeout(100);
    await page.waitForTimeout(500);
    assert.ok(attempts().length >= 3, JSON.stringify(statuses));
    assert.ok(attempts().every(([, , s]) => s === 403), JSON.stringify(attempts()));
    assert.deepEqual(await libraryNames(), ['keep']);
    await page.close();
  });
}
