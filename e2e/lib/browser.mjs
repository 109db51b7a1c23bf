// Debian's Chromium driven by playwright-core: no browser download, a fresh
// profile per test run, and the flags that keep it off the (closed) network.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const artifactsDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'artifacts',
);

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Opens a browser context; call `close()` when done. */
export async function openBrowser() {
  const profile = await mkdtemp(path.join(tmpdir(), 'docshelf-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  await mkdir(artifactsDir, { recursive: true });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Loads `url` and waits until the Leptos app has hydrated. */
export async function gotoHydrated(page, url) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(url);
  try {
    await page.locator('.app[data-hydrated="true"]').waitFor({ timeout: 30_000 });
  } catch (err) {
    throw new Error(`the page did not hydrate: ${err.message}\npage errors: ${errors.join('\n')}`);
  }
}
