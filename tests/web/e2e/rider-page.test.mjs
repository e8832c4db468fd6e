// The rider page end to end in the system's headless Chromium, driven by playwright-core.
// node rider-page.test.mjs --url http://127.0.0.1:P --nocars-url http://127.0.0.1:Q --nocars-pid PID --artifacts DIR
//   --admin-token TOKEN (the main server's: the operator's cancel needs it)
// Steps: the loading state before any data; open, map and cars drawn, book, destination →
// quote, car arrives, I'm in, Leave → receipt, a booking whose answer is lost (retried with its
// Idempotency-Key: the same booking); a phone-sized screen (tap targets, ETA labels that
// never overlap); the failures (no car, destination outside the city, cancelled by the operator,
// server unreachable). A screenshot per step into DIR; every request the page makes must stay on
// the server's origin. Prints the time to interactive.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createChecks, launchChromium, overallTimeout, phase } from './harness.mjs';

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
overallTimeout(160_000); // the phone checks sample 1.5 s of frames four times; loaded CI machines are slow

const { check, report, finish } = createChecks();
Object.assign(report, { requests: 0, foreign: [] });
let shot = 0;

async function screenshot(page, name) {
  shot += 1;
  const file = path.join(opt.artifacts, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
}
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

// The map's ETA labels as drawn, one record per animation frame for `ms`: window.taxicoreMap.drawn
// is {labels: [{id, x, y, w, h, text, free}], pickup: {x, y, r}} in CSS px of the map (null: the
// page does not say where it drew them).
const labelFrames = (page, ms = 1500) => page.evaluate(async (ms) => {
  const frames = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await new Promise((r) => requestAnimationFrame(r));
    const d = window.taxicoreMap && window.taxicoreMap.drawn;
    frames.push(d ? JSON.parse(JSON.stringify(d)) : null);
  }
  return frames;
}, ms);
const boxesIntersect = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const boxTouchesCircle = (b, c) => {
  const dx = c.x - Math.max(b.x, Math.min(c.x, b.x + b.w));
  const dy = c.y - Math.max(b.y, Math.min(c.y, b.y + b.h));
  return dx * dx + dy * dy < c.r * c.r;
};
// Checks every frame: no two labels intersect, none covers the pickup dot, and (riding) no free
// taxi has one. Returns the most labels one frame had.
function checkLabels(frames, what, { riding }) {
  let most = 0, overlapping = 0, onPickup = 0, free = 0, unknown = 0;
  for (const f of frames) {
    if (!f) { unknown += 1; continue; }
    const ls = f.labels;
    most = Math.max(most, ls.length);
    for (let i = 0; i < ls.length; i++) for (let j = i + 1; j < ls.length; j++) if (boxesIntersect(ls[i], ls[j])) overlapping += 1;
    if (f.pickup) onPickup += ls.filter((l) => boxTouchesCircle(l, f.pickup)).length;
    free += ls.filter((l) => l.free).length;
  }
  check(unknown === 0, `${what}: the page says where it drew its labels (${frames.length - unknown}/${frames.length} frames)`);
  check(overlapping === 0, `${what}: no two ETA labels overlap (${overlapping} overlapping pairs in ${frames.length} frames)`);
  check(onPickup === 0, `${what}: no ETA label covers the pickup dot (${onPickup} in ${frames.length} frames)`);
  if (riding) check(free === 0, `${what}: free taxis' ETA labels are hidden during the ride (${free} shown in ${frames.length} frames)`);
  return most;
}

// At phone size every visible control is at least 44 × 44 px and inside the screen, and the
// panel's text is not cut (nothing wider than its box).
async function checkControls(page, what, viewport) {
  const found = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('#app button, #app label, #app input')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || el.closest('[hidden]')) continue;
      if (el.tagName === 'INPUT' && el.closest('label')) continue; // the label is the target
      out.push({ name: el.id || el.textContent.trim() || el.tagName, x: r.x, y: r.y, w: r.width, h: r.height });
    }
    const cut = [...document.querySelectorAll('#panel *')].filter((el) => el.scrollWidth > el.clientWidth + 1 &&
      getComputedStyle(el).overflowX !== 'visible').map((el) => el.id || el.tagName);
    return { controls: out, cut };
  });
  const small = found.controls.filter((c) => c.w < 44 || c.h < 44).map((c) => `${c.name} ${Math.round(c.w)}×${Math.round(c.h)}`);
  const off = found.controls.filter((c) => c.x < 0 || c.x + c.w > viewport.width + 0.5).map((c) => c.name);
  check(small.length === 0, `${what}: every control is at least 44×44 px` + (small.length ? ` (${small.join(', ')})` : ''));
  check(off.length === 0, `${what}: every control is on screen` + (off.length ? ` (${off.join(', ')})` : ''));
  check(found.cut.length === 0, `${what}: no text is cut in the panel` + (found.cut.length ? ` (${found.cut.join(', ')})` : ''));
}

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

const browser = await launchChromium();
const PHONE = { width: 390, height: 844 };
try {
  // ── 0. Before any data: a loading state, never a false "no taxi" ──
  {
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    watch(page, opt.url, 'loading');
    // The feed opens (mocked here) but says nothing yet, and the REST fallback does not answer.
    let feed = null;
    await page.routeWebSocket(/\/api\/v1\/stream$/, (ws) => { feed = ws; });
    await page.route(/\/api\/v1\/cars\/nearby/, () => { /* held: no answer */ });
    await page.goto(opt.url + '/');
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 10_000 });
    await page.waitForTimeout(500);
    const loading = await text(page, '#status');
    check(/Looking for taxis/.test(loading) && !/No free taxi/.test(loading), `before any data the status says it is loading: "${loading}"`);
    check(await page.locator('#status[aria-busy="true"]').count() === 1, 'the status is marked busy while loading');
    check(!(await page.evaluate(() => 'cars' in document.documentElement.dataset)), 'no car count before the first answer');
    await screenshot(page, 'phone-loading');
    // A real answer with no cars: now, and only now, "no taxi".
    check(feed !== null, 'the page opened the live feed');
    feed?.send(JSON.stringify({ type: 'update', t: Date.now(), cars: [] }));
    const none = await page.waitForFunction(() => /No free taxi/.test(document.getElementById('status').textContent), null, { timeout: 5000 })
      .then(() => true, () => false);
    check(none, `after an answer with zero cars: "${await text(page, '#status')}"`);
    check(await page.locator('#status[aria-busy="true"]').count() === 0, 'the status is no longer busy after the answer');
    await context.close();
  }

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
    checkLabels(await labelFrames(page, 1000), 'desktop, no ride', { riding: false });
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
    // Nobody but its rider (and the operator) may read it or cancel it.
    const peek = await fetch(`${opt.url}/api/v1/bookings/${open}`);
    check(peek.status === 401, `a read without a token is refused (HTTP ${peek.status})`);
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

    // The answer to a booking is lost on the way (the server booked, the page sees a network
    // error): the page sends it again with the same Idempotency-Key and is answered with that
    // booking, not a second one.
    await page.click('#again');
    const keys = [];
    let firstId = null;
    await page.route('**/api/v1/bookings', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      keys.push(route.request().headers()['idempotency-key']);
      if (firstId !== null) return route.continue();
      const answer = await route.fetch(); // the server books...
      firstId = (await answer.json()).booking_id;
      return route.abort('connectionreset'); // ...and its answer never reaches the page
    });
    const replayed = [];
    const onResponse = (r) => {
      if (r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/bookings') replayed.push(r.headers()['idempotent-replayed']);
    };
    page.on('response', onResponse);
    await page.click('#book');
    check(await phase(page, 'assigned', 15_000) || await phase(page, 'arriving', 100), 'booked although the first answer was lost');
    const shown = Number(await page.evaluate(() => document.documentElement.dataset.booking));
    check(keys.length === 2 && /^[!-~]{16,255}$/.test(keys[0] || '') && keys[0] === keys[1],
      `the retry carries the first request's Idempotency-Key (${keys.join(', ')})`);
    check(firstId !== null && shown === firstId, `the page shows the booking the lost request made (${shown}, made ${firstId})`);
    check(replayed.length === 1 && replayed[0] === 'true', `the server answered the retry as a replay (${replayed.join(', ')})`);
    page.off('response', onResponse);
    await page.unroute('**/api/v1/bookings');
    await page.click('#cancel');
    check(await phase(page, 'cancelled'), 'the rider cancels the retried booking');
    await context.close();
  }

  // ── 2. A phone-sized screen ──
  {
    // The phone's GPS puts the rider inside the city: the pickup starts there.
    const here = { latitude: 57.6969, longitude: 11.9865 };
    const context = await browser.newContext({
      viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2,
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
    await checkControls(page, 'phone', PHONE);
    await page.waitForFunction(() => Number(document.documentElement.dataset.cars) > 0, null, { timeout: 10_000 }).catch(() => {});
    const idleLabels = checkLabels(await labelFrames(page), 'phone, no ride', { riding: false });
    check(idleLabels > 0, `phone: free taxis have ETA labels before booking (up to ${idleLabels} at once)`);
    await screenshot(page, 'phone-map');
    const box = await page.locator('#overlay').boundingBox();
    await page.touchscreen.tap(box.x + box.width * 0.4, box.y + box.height * 0.6);
    check(/(Click|Tap) the map/.test(await text(page, '#status')) === false, 'phone: a tap moves the pickup');
    await page.tap('input[name="click-mode"][value="dropoff"]');
    await page.touchscreen.tap(box.x + box.width * 0.8, box.y + box.height * 0.15);
    check(await visible(page, '#quote'), 'phone: a tap sets the destination, quote shown before booking');
    await page.tap('#book');
    check(await phase(page, 'assigned', 10_000) || await phase(page, 'arriving', 100), 'phone: booked with the destination');
    checkLabels(await labelFrames(page), 'phone, taxi coming', { riding: true });
    await checkControls(page, 'phone, taxi coming', PHONE);
    await screenshot(page, 'phone-booked');
    check(await phase(page, 'arriving', 60_000), 'phone: the taxi arrives');
    await page.tap('#pickup');
    check(await phase(page, 'on_trip'), 'phone: on trip');
    // The booking has a dropoff, so the simulated car drives there: wait for some distance.
    await page.waitForFunction(() => /\d+(\.\d)? km|[1-9]\d* m/.test(document.getElementById('trip').textContent), null, { timeout: 20_000 }).catch(() => {});
    const tripFrames = await labelFrames(page);
    checkLabels(tripFrames, 'phone, on trip', { riding: true });
    // On the trip the rider's car has no ETA to show (the one to the pickup is past).
    const tripLabels = tripFrames.reduce((n, f) => n + (f ? f.labels.length : 0), 0);
    check(tripLabels === 0, `phone, on trip: no ETA label at all (${tripLabels} in ${tripFrames.length} frames)`);
    const last = tripFrames[tripFrames.length - 1];
    const pin = last && last.destination;
    check(!!pin && pin.x >= 0 && pin.x <= last.width && pin.y - 34 >= 0 && pin.y <= last.height,
      `phone, on trip: the destination pin is on the map (${pin ? `${Math.round(pin.x)},${Math.round(pin.y)} in ${last.width}×${last.height}` : 'none'})`);
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
console.log(`time to interactive: median ${report.interactiveMedianMs} ms of ${report.interactiveSamplesMs} (navigation start → Book enabled), map drawn at ${report.mapDrawnMs} ms, ` +
  `transferred ${report.pageBytes} bytes, feed ${report.liveFeed}; screenshots in ${opt.artifacts}`);
finish(opt.artifacts, 'report.json');
