// What changed between two versions, on the libraries page, in a real
// browser against a real server: three versions uploaded, two picked, a
// changed section found and opened side by side.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { startServer, uploadAndWait } from '../lib/server.mjs';

const guide = (install) =>
  `# Guide\n\nHow to use widgets.\n\n## Install\n\n${install}\n\n## Configure\n\nSet WIDGETS_HOME to a folder.\n`;

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await openBrowser();
  for (const [version, files] of [
    ['1.0', [
      { name: 'guide.md', text: guide('Run pip install widgets and restart the shell.') },
      { name: 'old.md', text: '# Old loader\n\nThe old loader reads XML.\n' },
    ]],
    ['2.0', [
      { name: 'guide.md', text: guide('Run uv add widgets and restart the shell.') },
      { name: 'new.md', text: '# Plugins\n\nLoad plugins with `widgets.load()`.\n' },
      { name: 'CHANGES.md', text: '# Changes\n\n## 2.0\n\nInstalled with uv.\n' },
    ]],
    ['3.0', [
      { name: 'guide.md', text: guide('Run uv add widgets and restart the shell.') },
      { name: 'new.md', text: '# Plugins\n\nLoad plugins with `widgets.load()`, or list them.\n' },
    ]],
  ]) {
    const job = await uploadAndWait(server.url, { library: 'widgets', version, files });
    assert.equal(job.error ?? null, null);
  }
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('two versions picked on the libraries page show what changed, a section side by side', async () => {
  const page = await browser.context.newPage();
  await gotoHydrated(page, `${server.url}/libraries`);
  const library = page.getByRole('article', { name: 'widgets' });
  await library.waitFor();

  // Opened, it compares the two newest versions.
  let answered = page.waitForResponse((r) => r.url().endsWith('/rpc/changes'));
  await library.getByRole('button', { name: 'Compare versions of widgets' }).click();
  assert.equal((await answered).status(), 200);
  const from = library.getByLabel('From version');
  const to = library.getByLabel('To version');
  assert.equal(await from.inputValue(), '2.0');
  assert.equal(await to.inputValue(), '3.0');
  await library.getByText(/^From 2\.0 to 3\.0: 1 documents changed/).waitFor();

  // Picked: 1.0 to 2.0, each choice answered by the server.
  answered = page.waitForResponse((r) => r.url().endsWith('/rpc/changes'));
  await from.selectOption('1.0');
  assert.equal((await answered).status(), 200);
  answered = page.waitForResponse((r) => r.url().endsWith('/rpc/changes'));
  await to.selectOption('2.0');
  assert.equal((await answered).status(), 200);
  await library
    .getByText(/^From 1\.0 to 2\.0: 1 documents changed, 2 added, 1 removed, 0 moved, 0 unchanged; sections \d+ added, 1 removed, 1 changed\.$/)
    .waitFor();

  const listed = library.getByRole('list', { name: 'What changed in widgets from 1.0 to 2.0' });
  const documents = listed.locator(':scope > li > h3');
  assert.deepEqual(await documents.locator('a').allInnerTexts(), ['guide.md', 'CHANGES.md', 'new.md', 'old.md']);
  assert.deepEqual(await documents.locator('.change-kind').allInnerTexts(), ['changed', 'added', 'added', 'removed']);
  // The release notes the newer version holds, linked.
  const notes = library.getByRole('list', { name: 'Release notes' }).getByRole('link', { name: 'CHANGES.md' });
  assert.match(await notes.getAttribute('href'), /version=2\.0&file_path=CHANGES\.md$/);

  // The changed section, its diff inline, then side by side.
  const sections = library.getByRole('list', { name: 'Sections of guide.md' });
  const install = sections.getByRole('listitem').filter({ hasText: 'Guide > Install' });
  assert.match(await install.locator(':scope > p.word-diff').innerText(), /Run pip install uv add widgets/);
  assert.deepEqual(await install.locator(':scope > p.word-diff del').allInnerTexts(), ['pip install']);
  assert.deepEqual(await install.locator(':scope > p.word-diff ins').allInnerTexts(), ['uv add']);
  const open = install.getByRole('button', { name: 'Show Guide > Install side by side' });
  assert.equal(await open.getAttribute('aria-expanded'), 'false');
  const sides = install.getByRole('group', { name: 'Guide > Install: 1.0 and 2.0 side by side' });
  assert.equal(await sides.isVisible(), false);
  await open.click();
  await sides.waitFor();
  assert.equal(await open.getAttribute('aria-expanded'), 'true');
  const older = sides.getByRole('group', { name: 'Before (1.0)' });
  const newer = sides.getByRole('group', { name: 'After (2.0)' });
  assert.match(await older.innerText(), /Run pip install widgets and restart the shell\./);
  assert.deepEqual(await older.locator('del').allInnerTexts(), ['pip install']);
  assert.equal(await older.locator('ins').count(), 0);
  assert.match(await newer.innerText(), /Run uv add widgets and restart the shell\./);
  assert.deepEqual(await newer.locator('ins').allInnerTexts(), ['uv add']);
  assert.equal(await newer.locator('del').count(), 0);

  await page.screenshot({ path: path.join(artifactsDir, 'changes.png'), fullPage: true });
  await page.close();
});
