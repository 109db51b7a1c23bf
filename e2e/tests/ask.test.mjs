// The Ask page in Chromium against a real docshelf and a real model
// (llama-server, SmolLM2-135M): the answer streams in with its sources
// linked to their documents, the library sticks, Stop stops the model,
// Retry and New conversation work, and without a model the page says how
// to turn Ask on. A 135M model writes poor prose: the tests check the
// plumbing, not the wording.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { artifactsDir, gotoHydrated, openBrowser } from '../lib/browser.mjs';
import { startLlamaServer } from '../lib/llm.mjs';
import { startServer, uploadAndWait } from '../lib/server.mjs';

let llama;
let server;
let browser;
let page;

before(async () => {
  llama = await startLlamaServer();
  server = await startServer({ args: ['--llm-url', llama.url, '--llm-max-tokens', '400'] });
  browser = await openBrowser();
  page = await browser.context.newPage();
  await uploadAndWait(server.url, {
    library: 'tools',
    version: '1.0',
    files: [
      { name: 'widgets.md', text: '# Frobnicating widgets\n\nTo frobnicate a widget, run `widget frob --level 3`.\n' },
      { name: 'gadgets.md', text: '# Gadget calibration\n\nCalibrate a gadget with `gadget cal` after every firmware update.\n' },
    ],
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await llama?.stop();
});

const shot = (name) => page.screenshot({ path: path.join(artifactsDir, `${name}.png`), fullPage: true });
const exchanges = () => page.locator('li.exchange');
/** The `n`th exchange (from 0) once it is in one of `states`. */
const exchangeIn = (n, ...states) =>
  page.locator(states.map((s) => `li.exchange[data-progress="${s}"]`).join(', ')).and(exchanges().nth(n));

async function ask(question) {
  await page.getByRole('textbox', { name: 'Question' }).fill(question);
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
}

test('an answer streams in with its sources, and the library sticks', async () => {
  await gotoHydrated(page, `${server.url}/ask`);
  await page.getByLabel('Library', { exact: true }).fill('tools');
  await ask('How do I frobnicate a widget?');
  const first = exchanges().first();
  await exchangeIn(0, 'done').waitFor({ timeout: 120_000 });
  assert.match(await first.getByTestId('answer').innerText(), /\S/);
  const sources = first.locator('details.sources');
  await sources.locator('summary').click();
  const links = sources.getByRole('link');
  assert.ok((await links.count()) >= 1);
  assert.match(await links.first().getAttribute('href'), /^\/doc\?library=tools&version=1\.0&file_path=widgets\.md&chunk=\d+$/);
  await page.getByRole('status', { name: 'Sticky library' }).getByText('tools').waitFor();
  await shot('ask-answer');

  // The source opens its document.
  await links.first().click();
  await page.getByText('To frobnicate a widget').waitFor();
});

test('Stop ends the answer and the model stops; Retry and New conversation', async () => {
  await gotoHydrated(page, `${server.url}/ask`);
  await ask('Write a long, detailed guide to frobnicating widgets, with many numbered steps.');
  await exchangeIn(0, 'writing').waitFor({ timeout: 60_000 });
  await exchanges().first().getByTestId('answer').getByText(/\S/).first().waitFor({ timeout: 60_000 });
  await page.getByRole('button', { name: 'Stop' }).click();
  await exchangeIn(0, 'stopped').waitFor();
  const deadline = Date.now() + 10_000;
  while (await llama.busy()) {
    assert.ok(Date.now() < deadline, 'the model kept generating after Stop');
    await new Promise((r) => setTimeout(r, 100));
  }

  await page.getByRole('button', { name: 'Retry' }).click();
  assert.equal(await exchanges().count(), 2);
  assert.equal(await exchanges().nth(1).locator('.question').innerText(), await exchanges().nth(0).locator('.question').innerText());
  await exchangeIn(1, 'writing', 'done').waitFor({ timeout: 60_000 });
  const stop = page.getByRole('button', { name: 'Stop' });
  if (await stop.isEnabled()) await stop.click();
  await exchangeIn(1, 'stopped', 'done').waitFor({ timeout: 60_000 });

  await page.getByRole('button', { name: 'New conversation' }).click();
  assert.equal(await exchanges().count(), 0);
});

test('without a model the page says how to turn Ask on', async () => {
  const plain = await startServer();
  try {
    await gotoHydrated(page, `${plain.url}/ask`);
    const note = page.getByTestId('ask-off');
    await note.waitFor();
    assert.match(await note.innerText(), /--llm-url/);
    await ask('anything');
    await page.getByRole('alert').getByText(/--llm-url/).waitFor();
    await shot('ask-off');
  } finally {
    await plain.stop();
  }
});
