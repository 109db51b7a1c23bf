// Search results as pages in a real browser: one card per page, the page's
// other matching sections listed under it as links into the document, and
// snippets rendered from their Markdown (code blocks formatted, no raw
// fences or emphasis markers).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { startServer, uploadAndWait } from '../lib/server.mjs';

let server;
let browser;
let page;

/** A long page about sourdough: every section mentions starters. */
function handbook() {
  const sections = ['Feeding', 'Storing', 'Reviving', 'Baking'].map((name, i) => {
    const prose = Array.from({ length: 8 }, (_, j) =>
      `Step ${j + 1}: your sourdough starter needs flour and water at the same time each day (${name.toLowerCase()} note ${i}-${j}).`,
    ).join('\n\n');
    return `## ${name} a starter\n\n${prose}\n\n\`\`\`sh\nstarter --feed --ratio 1:1:1   # ${name}\n\`\`\`\n`;
  });
  return `# Sourdough handbook\n\n**Note:** keep a sourdough starter warm.\n\n${sections.join('\n')}`;
}

before(async () => {
  server = await startServer();
  browser = await openBrowser();
  page = await browser.context.newPage();
  await uploadAndWait(server.url, {
    library: 'bakery',
    version: '1',
    files: [
      { name: 'handbook.md', text: handbook() },
      { name: 'rye.md', text: '# Rye bread\n\nRye loaves use a sourdough starter and rest overnight.\n' },
      { name: 'ovens.md', text: '# Ovens\n\nPreheat a stone for an hour before baking bread.\n' },
    ],
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('results are pages with their matching sections and formatted snippets', async () => {
  await gotoHydrated(page, `${server.url}/?q=${encodeURIComponent('feed the sourdough starter')}&library=bakery`);
  await page.getByText(/\d+ results? in \d+ ms/).waitFor();
  const cards = page.locator('li.hit');
  const titles = await cards.locator('h3').allInnerTexts();
  assert.equal(new Set(titles).size, titles.length, `one card per page: ${titles}`);
  assert.ok(titles.includes('Sourdough handbook'), String(titles));

  const handbookCard = cards.filter({ has: page.getByRole('heading', { name: 'Sourdough handbook' }) });
  const sections = handbookCard.getByRole('list', { name: 'Other matches in this page' });
  await sections.waitFor();
  const links = sections.getByRole('link');
  assert.ok((await links.count()) >= 1);
  assert.match(await links.first().getAttribute('href'), /^\/doc\?library=bakery&version=1&file_path=handbook\.md&chunk=\d+$/);

  // Snippets are rendered Markdown: code in <pre><code>, no fences or **.
  const snippets = await page.locator('li.hit .snippet').allInnerTexts();
  assert.ok(snippets.every((s) => !s.includes('```') && !s.includes('**')), JSON.stringify(snippets));
  assert.ok((await page.locator('li.hit .snippet pre code').count()) >= 1, 'a code block is formatted');
  assert.ok((await page.locator('li.hit .snippet mark').count()) >= 1, 'query terms are marked');
  await page.screenshot({ path: path.join(artifactsDir, 'results-pages.png'), fullPage: true });

  // A section link opens the document at that chunk.
  await links.first().click();
  await page.waitForURL(/\/doc\?/);
  await page.getByText('Sourdough handbook').first().waitFor();
});
