// What the browser tests of the rider page share: the system's Chromium, a check list that ends
// in report.json, and waits on the page's own markers (<html data-phase>, the live badge).
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    // Playwright gives every launch a fresh temporary --user-data-dir.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// A list of named checks: each prints "ok"/"FAIL" and is kept for the report.
export function createChecks() {
  const report = { steps: [] };
  let failures = 0;
  const check = (ok, what) => {
    if (!ok) failures += 1;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
    report.steps.push({ ok, what });
    return ok;
  };
  // Writes DIR/NAME, says PASSED or FAILED and exits with the verdict.
  const finish = (dir, name) => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, name), JSON.stringify(report, null, 2));
    console.log(failures ? `FAILED: ${failures} check(s)` : 'PASSED');
    process.exit(failures ? 1 : 0);
  };
  return { check, report, finish };
}

// Exits the test (code 3) when it has not finished in `ms`.
export function overallTimeout(ms) {
  setTimeout(() => {
    console.error(`FAIL: the test did not finish within ${ms / 1000} s`);
    process.exit(3);
  }, ms).unref();
}

export const phase = (page, p, timeout = 10_000) =>
  page.waitForFunction((want) => document.documentElement.dataset.phase === want, p, { timeout }).then(() => true, () => false);
export const liveBadge = (page, want, timeout = 10_000) =>
  page.waitForFunction((w) => document.getElementById('live').textContent === w, want, { timeout }).then(() => true, () => false);
