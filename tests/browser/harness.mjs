// What the browser tests share: Debian's Chromium, headless, in a throwaway
// profile, through playwright-core (it downloads no browser of its own), and
// a check() that prints each result and remembers the failures.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

// A persistent context in a temporary profile; close() also removes the profile.
export async function launchChromium(options = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'proflaunch-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--no-first-run', '--disable-sync'],
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

// A page that may read file: URLs only: every other request is aborted and
// listed in `external`; script errors and console errors go to `errors`.
export async function offlinePage(context) {
  const external = [];
  await context.route('**/*', route => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    external.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(e.message));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  return { page, external, errors };
}

export function checker() {
  const failures = [];
  function check(condition, message) {
    if (!condition) failures.push(message);
    console.log((condition ? 'ok   ' : 'FAIL ') + message);
  }
  // Exits 1 when a check failed.
  check.finish = () => {
    if (failures.length) {
      console.error(`${failures.length} check(s) failed`);
      process.exit(1);
    }
    console.log('all checks passed');
  };
  return check;
}
