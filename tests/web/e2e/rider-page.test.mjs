// The rider page end to end in the system's headless Chromium, driven by playwright-core.
// node rider-page.test.mjs --url http://127.0.0.1:P --nocars-url http://127.0.0.1:Q --nocars-pid PID --artifacts DIR
//   --admin-token TOKEN (the main server's: the operator's cancel needs it)
// Steps: open, map and cars drawn, book, destination → quote, car arrives, I'm in, Leave →
// receipt; a phone-sized screen; the failures (no car, destination outside the city, cancelled
// by the operator, server unreachable). A screenshot per step into DIR; every request the page
// makes must stay on the server's origin. Prints the time to interactive.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' }, 'nocars-url': { type: 'string' }, 'nocars-pid': { type: 'string' },
    artifacts: { type: 'string', default: 'test-artifacts/web' },
    'admin-token': { type: 'string' },
  },
});
if (!opt.url || !opt['nocars-url'] || !opt['nocars-pid'] || !opt['admin-token']) {
  console.error('usage: --url URL --nocars-url URL --nocars-pid PID --admin-token TOKEN [--artifacts DIR]');
  process.exit(2);
}
fs.mkdirSync(opt.artifacts, { recursive: true });
const OVERALL_MS = 130_000;
setTimeout(() => {
  console.error(`FAIL: the test did not finish within ${OVERALL_MS / 1000} s`);
  process.exit(3);
}, OVERALL_MS).unref();

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const report = { steps: [], requests: 0, foreign: [] };
let failures = 0;
let shot = 0;

function check(ok, what) {
  if (!ok) failures += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  report.steps.push({ ok, what });
  return ok;
}
async function screenshot(page, name) {
  shot += 1;
  const file = path.join(opt.artifacts, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
}
const phase = (page, p, timeout = 10_000) =>
  page.waitForFunction((want) => document.documentElement.dataset.phase === want, p, { timeout }).then(() => true, () => false);
const visible = (page, sel, timeout = 10_000) => page.waitForSelector(sel, { state: 'visible', timeout }).then(() => true, () => false);
const text = (page, sel) => page.locator(sel).innerText().catch(() => '');
async function messageText(page, timeout = 10_000) {
  return (await visible(page, '#message', timeout)) ? text(page, '#message-text') : '';
}

// Every request and WebSocket must go to the page's own origin.
function watch(page, origin, label) {
  const wsOrigin = origin.replace(/^http/, 'ws');
  page.on('request', (r) => {
    report.requests += 1;
    const u = r.url();
    if (!u.startsWith(origin + '/') && !u.startsWith('data:')) report.foreign.push(`${label}: ${u}`);
  });
  page.on('websocket', (ws) => {
    if (!ws.url().startsWith(wsOrigin + '/')) report.foreign.push(`${label}: ${ws.url()}`);
  });
  page.on('pageerror', (e) => check(false, `${label}: no script error (${e.message})`));
}

// The roads canvas has drawn streets: enough pixels differ from the ground colour.
const roadPixels = (page) => page.evaluate(() => {
  const c = document.getElementById('roads');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 16) if (Math.abs(d[i] - 0xf4) + Math.abs(d[i + 1] - 0xf2) + Math.abs(d[i + 2] - 0xec) > 30) n++;
  return n;
});

async function clickMap(page, fx, fy) {
  const box = await page.locator('#overlay').boundingBox();
  await page.mouse.click(box.x + box.width * fx, box.y + box.height * fy);
}

{
  const probe = await fetch(opt.url + '/').catch((e) => ({ status: 0, statusText: String(e) }));
  if (probe.status !== 200) {
    console.error(`FAIL: ${opt.url}/ answers ${probe.status}: the rider page is not served (registerStaticRoutes not wired?)`);
    process.exit(1);
  }
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  timeout: 30_000,
  // Playwright gives every launch a fresh temporary --user-data-dir.
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  // ── 1. The whole ride on a desktop screen ──
  {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    watch(page, opt.url, 'desktop');
    const t0 = Date.now();
    await page.goto(opt.url + '/carbooking.html', { waitUntil: 'commit' });
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 10_000 });
    const wall = Date.now() - t0;
    const timings = await page.evaluate(() => window.taxicoreTimings);
    report.interactiveMs = Math.round(timings.interactiveMs);
    report.interactiveWallMs = wall;
    console.log(`     first load: interactive ${Math.round(timings.interactiveMs)} ms after navigation start (${wall} ms wall clock)`);
    check(await page.waitForFunction(() => document.documentElement.dataset.map === '1', null, { timeout: 10_000 }).then(() => true, () => false), 'the street map is loaded');
    report.mapDrawnMs = Math.round(await page.evaluate(() => window.taxicoreTimings.mapMs));
    await page.waitForTimeout(150);
    check((await roadPixels(page)) > 2000, 'streets are drawn on the canvas');
    check(await page.waitForFunction(() => Number(document.documentElement.dataset.cars) > 0, null, { timeout: 10_000 }).then(() => true, () => false), 'nearby taxis are shown');
    check(/free tax/.test(await text(page, '#status')), `status lists the free taxis: "${await text(page, '#status')}"`);
    check((await text(page, '#attribution')).includes('© OpenStreetMap contributors'), 'OSM attribution is visible');
    const live = await page.waitForFunction(() => document.getElementById('live').textContent === 'live', null, { timeout: 5000 }).then(() => true, () => false);
    console.log(`     live feed: ${live ? 'WebSocket' : 'polling fallback'}`);
    report.liveFeed = live ? 'websocket' : 'polling';
    await page.evaluate(() => performance.getEntriesByType('resource').length); // settle
    report.pageBytes = await page.evaluate(() => performance.getEntriesByType('resource')
      .concat(performance.getEntriesByType('navigation')).reduce((s, e) => s + (e.transferSize || 0), 0));
    await screenshot(page, 'map');

    await page.click('#book');
    check(await phase(page, 'assigned', 10_000) || await phase(page, 'arriving', 100), 'booked: a car is assigned');
    check(/Taxi \d+ is (on its way|here)/.test(await text(page, '#status')), `status names the car and ETA: "${await text(page, '#status')}"`);
    check((await text(page, '#trip')).includes('Taxi'), 'trip panel shows the taxi');
    check(await page.locator('#cancel').isVisible(), 'a cancel button is offered');
    await screenshot(page, 'booked');

    await clickMap(page, 0.75, 0.3);
    check(await visible(page, '#quote'), 'a click sets the destination and a quote appears');
    check(/Fare estimate/.test(await text(page, '#quote')), `quote: "${(await text(page, '#quote')).replace(/\s+/g, ' ')}"`);
    await screenshot(page, 'quote');

    await page.reload();
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 10_000 });
    // One wait for either phase: on a loaded machine the car may arrive while the page resumes.
    const resumed = await page.waitForFunction(() => ['assigned', 'arriving'].includes(document.documentElement.dataset.phase),
      null, { timeout: 10_000 }).then(() => true, () => false);
    check(resumed, 'a reload of the page keeps the booking');

    check(await phase(page, 'arriving', 60_000), 'the taxi arrives');
    check(await page.locator('#pickup').isVisible(), '"I\'m in" is offered');
    await screenshot(page, 'arrived');
    await page.click('#pickup');
    check(await phase(page, 'on_trip'), 'on trip after "I\'m in"');
    await page.waitForTimeout(1500);
    await screenshot(page, 'on-trip');
    await page.click('#leave');
    check(await phase(page, 'completed'), 'trip completed after "Leave"');
    check(await visible(page, '#receipt'), 'a receipt is shown');
    const receipt = (await text(page, '#receipt')).replace(/\s+/g, ' ');
    check(/Distance/.test(receipt) && /Duration/.test(receipt) && /Price/.test(receipt), `receipt: "${receipt}"`);
    await screenshot(page, 'receipt');

    // A destination outside the city → a message, not a quote.
    await page.click('#again');
    await phase(page, 'idle');
    await page.check('input[name="click-mode"][value="dropoff"]');
    for (let i = 0; i < 12; i++) await page.click('#zoom-out');
    await clickMap(page, 0.97, 0.05);
    const outside = await messageText(page);
    check(/outside the service area/.test(outside), `destination outside the city: "${outside}"`);
    await screenshot(page, 'outside-city');

    // Cancelled by the operator while the car comes.
    await page.click('#message-close');
    await page.click('#recentre');
    await page.click('#book');
    check(await phase(page, 'assigned', 10_000) || await phase(page, 'arriving', 100), 'booked again');
    const open = await page.evaluate(() => document.documentElement.dataset.booking);
    // Nobody but its rider (and the operator) may cancel it.
    const stranger = await fetch(`${opt.url}/api/v1/bookings/${open}/cancel`, { method: 'POST' });
    check(stranger.status === 401, `a cancel without a token is refused (HTTP ${stranger.status})`);
    const cancelled = await fetch(`${opt.url}/api/v1/bookings/${open}/cancel`, {
      method: 'POST', headers: { Authorization: `Bearer ${opt['admin-token']}` },
    });
    check(cancelled.status === 200, `the operator cancels booking ${open} (HTTP ${cancelled.status})`);
    const cancelMessage = await messageText(page, 5000);
    check(/cancelled by the operator/.test(cancelMessage), `operator cancel is reported: "${cancelMessage}"`);
    check(await page.locator('#again').isVisible(), '"New ride" is offered after the cancel');
    await screenshot(page, 'operator-cancelled');

    // The rider cancels: not blamed on the operator.
    await page.click('#again');
    await page.click('#book');
    check(await phase(page, 'assigned', 10_000) || await phase(page, 'arriving', 100), 'booked a third time');
    await page.click('#cancel');
    check(await phase(page, 'cancelled'), 'the rider cancels');
    check(!(await page.locator('#message').isVisible()), 'a rider cancel shows no error');
    await context.close();
  }

  // ── 2. A phone-sized screen ──
  {
    // The phone's GPS puts the rider inside the city: the pickup starts there.
    const here = { latitude: 57.6969, longitude: 11.9865 };
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2,
      geolocation: here, permissions: ['geolocation'],
    });
    const page = await context.newPage();
    watch(page, opt.url, 'phone');
    await page.goto(opt.url + '/');
    await page.waitForFunction(() => document.documentElement.dataset.map === '1', null, { timeout: 10_000 });
    const located = await page.waitForFunction((want) => document.documentElement.dataset.pickup === want,
      `${here.latitude.toFixed(5)},${here.longitude.toFixed(5)}`, { timeout: 5000 }).then(() => true, () => false);
    check(located, 'phone: the pickup starts at the geolocation (inside the city)');
    const mapBox = await page.locator('#map-wrap').boundingBox();
    const bookBox = await page.locator('#book').boundingBox();
    check(mapBox.width === 390 && mapBox.height >= 250, `phone: the map spans the screen (${Math.round(mapBox.width)}×${Math.round(mapBox.height)})`);
    check(bookBox && bookBox.y + bookBox.height <= 844 && bookBox.height >= 40, 'phone: "Book" is on screen and finger-sized');
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    check(scrollWidth <= 390, `phone: no horizontal scrolling (${scrollWidth} px)`);
    const box = await page.locator('#overlay').boundingBox();
    await page.touchscreen.tap(box.x + box.width * 0.4, box.y + box.height * 0.6);
    check(/Click the map/.test(await text(page, '#status')) === false, 'phone: a tap moves the pickup');
    await page.tap('input[name="click-mode"][value="dropoff"]');
    await page.touchscreen.tap(box.x + box.width * 0.8, box.y + box.height * 0.15);
    check(await visible(page, '#quote'), 'phone: a tap sets the destination, quote shown before booking');
    await page.tap('#book');
    check(await phase(page, 'assigned', 10_000) || await phase(page, 'arriving', 100), 'phone: booked with the destination');
    await screenshot(page, 'phone-booked');
    check(await phase(page, 'arriving', 60_000), 'phone: the taxi arrives');
    await page.tap('#pickup');
    check(await phase(page, 'on_trip'), 'phone: on trip');
    // The booking has a dropoff, so the simulated car drives there: wait for some distance.
    await page.waitForFunction(() => /\d+(\.\d)? km|[1-9]\d* m/.test(document.getElementById('trip').textContent), null, { timeout: 20_000 }).catch(() => {});
    await screenshot(page, 'phone-on-trip');
    await page.tap('#leave');
    check(await phase(page, 'completed'), 'phone: trip completed');
    const receipt = (await text(page, '#receipt')).replace(/\s+/g, ' ');
    check(/Distance ([1-9]\d* m|\d+\.\d km)/.test(receipt), `phone: the receipt has a distance driven: "${receipt}"`);
    await page.locator('#receipt').scrollIntoViewIfNeeded();
    await screenshot(page, 'phone-receipt');
    await context.close();
  }

  // ── Time to interactive: median of three loads in fresh contexts (no cache) ──
  {
    const samples = [report.interactiveMs];
    for (let i = 0; i < 2; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      watch(page, opt.url, 'timing');
      await page.goto(opt.url + '/');
      await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 10_000 });
      samples.push(Math.round(await page.evaluate(() => window.taxicoreTimings.interactiveMs)));
      await context.close();
    }
    samples.sort((a, b) => a - b);
    report.interactiveSamplesMs = samples;
    report.interactiveMedianMs = samples[1];
    check(samples[1] < 1000, `interactive in ${samples[1]} ms (median of ${samples.join(', ')} ms; navigation start → "Book" enabled; < 1000)`);
  }

  // ── 3. No car available, then the server gone ──
  {
    // This rider is in London: the pickup stays at the city centre, with a word about it.
    const context = await browser.newContext({
      viewport: { width: 1024, height: 700 }, geolocation: { latitude: 51.5074, longitude: -0.1278 }, permissions: ['geolocation'],
    });
    const page = await context.newPage();
    watch(page, opt['nocars-url'], 'no-cars');
    await page.goto(opt['nocars-url'] + '/');
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 10_000 });
    const far = await messageText(page, 5000);
    check(/outside the service area/.test(far), `a rider located outside the city is told so: "${far}"`);
    await page.click('#message-close');
    await page.click('#book');
    const noCar = await messageText(page);
    check(/No taxi is available/.test(noCar), `no car available: "${noCar}"`);
    check(await phase(page, 'idle'), 'back to idle after a refused booking');
    await screenshot(page, 'no-car');

    process.kill(Number(opt['nocars-pid']), 'SIGTERM');
    const gone = await (async () => {
      for (let i = 0; i < 100; i++) {
        try { process.kill(Number(opt['nocars-pid']), 0); } catch { return true; }
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    })();
    check(gone, 'the server is stopped');
    await page.click('#message-close');
    await page.click('#book');
    const down = await messageText(page);
    check(/Cannot reach the TaxiCore server/.test(down), `server unreachable: "${down}"`);
    check(await page.waitForFunction(() => document.getElementById('live').textContent === 'offline', null, { timeout: 5000 }).then(() => true, () => false), 'the live badge says offline');
    await screenshot(page, 'unreachable');
    await context.close();
  }
} catch (e) {
  check(false, `unexpected: ${e.stack || e}`);
} finally {
  await browser.close().catch(() => {});
}

check(report.foreign.length === 0, `no request left the origin (${report.requests} requests)` + (report.foreign.length ? ': ' + report.foreign.join(', ') : ''));
fs.writeFileSync(path.join(opt.artifacts, 'report.json'), JSON.stringify(report, null, 2));
console.log(`time to interactive: median ${report.interactiveMedianMs} ms of ${report.interactiveSamplesMs} (navigation start → Book enabled), map drawn at ${report.mapDrawnMs} ms, ` +
  `transferred ${report.pageBytes} bytes, feed ${report.liveFeed}; screenshots in ${opt.artifacts}`);
console.log(failures ? `FAILED: ${failures} check(s)` : 'PASSED');
process.exit(failures ? 1 : 0);
