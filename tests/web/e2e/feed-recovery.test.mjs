// The rider page when the live feed does not go as planned, in the system's headless Chromium.
// node feed-recovery.test.mjs --url http://127.0.0.1:P --admin-token TOKEN --artifacts DIR
// 1. The feed says the rider's booking is "unknown" (what a cluster node says while it has not
//    yet heard of a booking made through another node): the page asks GET /api/v1/bookings/{id}
//    (which falls back to the ledger) and keeps the booking while the server knows it; a 5xx
//    keeps it too and is asked again later, backing off; only a 404 ends it with a message.
//    The "unknown" is injected into the real server's feed (routeWebSocket): one server's fleet
//    holds every open booking its ledger holds (restored at start, never overwritten), so no
//    single server sends it for a booking its ledger knows.
// 2. The server refuses the feed right after the handshake (a proxy that rewrites Host, as nginx
//    does by default: the Origin no longer matches; close 1008): the page falls back to polling
//    and does not come back every 2 s, nor poll the nearby cars twice as often.
import { parseArgs } from 'node:util';
import { createChecks, launchChromium, liveBadge, overallTimeout, phase } from './harness.mjs';
import { startHostRewritingProxy } from './host-rewriting-proxy.mjs';

const { values: opt } = parseArgs({
  options: { url: { type: 'string' }, 'admin-token': { type: 'string' }, artifacts: { type: 'string', default: 'test-artifacts/web' } },
});
if (!opt.url || !opt['admin-token']) {
  console.error('usage: --url URL --admin-token TOKEN [--artifacts DIR]');
  process.exit(2);
}
overallTimeout(120_000);
const { check, finish } = createChecks();

const UNKNOWN_WINDOW_MS = 10_000; // how long the page is told "unknown" while the server knows the booking
const REFUSED_WINDOW_MS = 20_000; // how long the reconnects to a refusing feed are counted
const POLL_CARS_MS = 2000; // the page's nearby-cars polling interval (app.js)
const BOOKING_READ = /^\/api\/v1\/bookings\/\d+$/;
const OPEN = ['assigned', 'arriving', 'on_trip'];

// Passes the real feed to the page, but once `forge.on` every booking it carries says "unknown".
async function forgeUnknownBooking(page) {
  const forge = { on: false, sent: 0 };
  await page.routeWebSocket(/\/api\/v1\/stream$/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((message) => {
      if (forge.on && typeof message === 'string' && message.includes('"booking"')) {
        const msg = JSON.parse(message);
        if (msg.booking) {
          msg.booking = { booking_id: msg.booking.booking_id, state: 'unknown' };
          forge.sent += 1;
          message = JSON.stringify(msg);
        }
      }
      ws.send(message);
    });
  });
  return forge;
}

// Every GET of a booking the page makes: when, with which Authorization, its answer; and the
// most that were under way at once.
function watchBookingReads(page) {
  const reads = { list: [], inFlight: 0, mostInFlight: 0 };
  const isRead = (r) => r.method() === 'GET' && BOOKING_READ.test(new URL(r.url()).pathname);
  page.on('request', (r) => {
    if (!isRead(r)) return;
    reads.list.push({ at: Date.now(), auth: r.headers().authorization || '', status: null, state: null });
    reads.mostInFlight = Math.max(reads.mostInFlight, ++reads.inFlight);
  });
  const done = (r) => isRead(r) && (reads.inFlight -= 1);
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  page.on('response', async (res) => {
    if (!isRead(res.request())) return;
    const read = reads.list.findLast((x) => x.status === null);
    if (!read) return;
    read.status = res.status();
    read.state = await res.json().then((b) => b.state, () => null);
  });
  return reads;
}

// Opens the page on a live feed and books; answers the booking (its id and rider token).
async function book(page) {
  await page.goto(opt.url + '/');
  await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 10_000 });
  check(await liveBadge(page, 'live'), 'the page is on the live feed');
  const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/bookings');
  await page.click('#book');
  const booking = await (await answer).json();
  check(await page.waitForFunction((open) => open.includes(document.documentElement.dataset.phase), OPEN, { timeout: 10_000 })
    .then(() => true, () => false), `booked: booking ${booking.booking_id}, car ${booking.car_id}`);
  return booking;
}

// The car goes back to the fleet, whatever the page thinks of the booking.
async function cancelOnServer(booking) {
  await fetch(`${opt.url}/api/v1/bookings/${booking.booking_id}/cancel`, {
    method: 'POST', headers: { Authorization: `Bearer ${opt['admin-token']}` },
  }).catch(() => {});
}

// Answers the page's reads of its booking (GET) with `answer(route)`; its moves go on to the server.
const answerBookingReads = (page, answer) => page.route((u) => BOOKING_READ.test(u.pathname),
  (route) => (route.request().method() !== 'GET' ? route.continue() : answer(route)));

// A page of its own that booked, its feed's booking updates to be turned "unknown" (forge.on).
async function bookedPage() {
  const context = await browser.newContext({ viewport: { width: 1024, height: 700 } });
  const page = await context.newPage();
  const forge = await forgeUnknownBooking(page);
  const booking = await book(page);
  return { context, page, forge, booking };
}

const isOpenOnPage = (page) => page.evaluate((open) => open.includes(document.documentElement.dataset.phase), OPEN);

const messageSaysGone = (page) => page.evaluate(() => !document.getElementById('message').hidden &&
  /no longer known/.test(document.getElementById('message-text').textContent));

const browser = await launchChromium();
try {
  // ── 1a. "unknown" from the feed, the server knows the booking: it stays ──
  {
    const { context, page, forge, booking } = await bookedPage();
    const reads = watchBookingReads(page);
    // The first read fails as a ledger away would (503); the page must keep the booking and ask
    // again later. The others reach the server.
    let refused = 0;
    await answerBookingReads(page, (route) => (refused++ > 0 ? route.continue()
      : route.fulfill({ status: 503, contentType: 'application/json',
        body: JSON.stringify({ error: 'ledger_unavailable', message: 'the ledger is not answering' }) })));
    const before = reads.list.length;
    forge.on = true;
    const started = Date.now();
    const askedTwice = await (async () => {
      while (Date.now() - started < UNKNOWN_WINDOW_MS) {
        if (reads.list.length - before >= 2 && reads.list.at(-1).status !== null) return true;
        if (!(await isOpenOnPage(page))) return false;
        await page.waitForTimeout(100);
      }
      return false;
    })();
    check(askedTwice, 'told "unknown", the page asks the server about the booking (and again after a 503)');
    // The rest of the window: the feed keeps saying "unknown" every update; the page keeps the booking.
    await page.waitForTimeout(Math.max(0, UNKNOWN_WINDOW_MS - (Date.now() - started)));
    const mine = reads.list.slice(before);
    for (let i = 0; i < 50 && mine.some((r) => r.status === null); i++) await page.waitForTimeout(100); // the last answer
    const lastKnown = mine.filter((r) => r.status === 200).at(-1);
    const shows = lastKnown && OPEN.includes(lastKnown.state) && await phase(page, lastKnown.state, 2000);
    check(forge.sent > 0, `the feed told the page ${forge.sent} times that booking ${booking.booking_id} is unknown`);
    check(!(await messageSaysGone(page)), 'the page does not say the booking is gone');
    check(shows, `the page shows the booking as the server answered: ${await page.evaluate(() => document.documentElement.dataset.phase)}` +
      ` (GET said ${lastKnown ? lastKnown.state : 'nothing'})`);
    check(mine.length > 0 && mine.every((r) => r.auth === `Bearer ${booking.rider_token}`), 'each read carries the rider token');
    check(mine[0] && mine[0].status === 503 && mine.length >= 2, `after a 503 the page asks again (answers: ${mine.map((r) => r.status).join(', ')})`);
    const gaps = mine.slice(1).map((r, i) => r.at - mine[i].at);
    check(mine.length <= 4 && gaps.every((g) => g >= 2500),
      `the reads back off: ${mine.length} in ${UNKNOWN_WINDOW_MS / 1000} s of "unknown" every update, gaps ${gaps.join(', ')} ms (each ≥ 2500)`);
    check(reads.mostInFlight === 1, `one read at a time (at most ${reads.mostInFlight} under way)`);
    await cancelOnServer(booking);
    await context.close();
  }

  // ── 1b. "unknown" from the feed and 404 from the server: the booking ends with a message ──
  {
    const { context, page, forge, booking } = await bookedPage();
    // A booking the ledger does not know either (as after a server lost its data).
    await answerBookingReads(page, (route) => route.fulfill({ status: 404, contentType: 'application/json',
      body: JSON.stringify({ error: 'booking_not_found', message: `there is no booking ${booking.booking_id}` }) }));
    forge.on = true;
    const gone = await page.waitForFunction(() => /no longer known/.test(document.getElementById('message-text').textContent) &&
      !document.getElementById('message').hidden, null, { timeout: 8000 }).then(() => true, () => false);
    check(gone, 'a booking the server does not know (404) ends with "no longer known"');
    check(await phase(page, 'cancelled', 1000) && await page.locator('#again').isVisible(), '"New ride" is offered');
    await cancelOnServer(booking);
    await context.close();
  }

  // ── 1c. "unknown" from the feed and a 404 that is not the server's (a proxy in front, a path
  //        misrouted during a deploy): the booking may be live, so the page keeps it ──
  {
    const { context, page, forge, booking } = await bookedPage();
    let proxyReads = 0;
    await answerBookingReads(page, (route) => {
      proxyReads += 1;
      return route.fulfill({ status: 404, contentType: 'text/html', body: '<html><body>404 Not Found</body></html>' });
    });
    forge.on = true;
    const readBy = Date.now() + 8000;
    while (proxyReads === 0 && Date.now() < readBy) await page.waitForTimeout(100);
    check(proxyReads > 0, 'the page read the booking when the feed called it unknown');
    await page.waitForTimeout(1500); // what is tested is that nothing happens after the answer
    check(await isOpenOnPage(page), `a 404 that is not the server's (${proxyReads} reads) keeps the booking open`);
    check(!(await messageSaysGone(page)), 'no "no longer known" message');
    await cancelOnServer(booking);
    await context.close();
  }

  // ── 2. A feed the server refuses after the handshake: back off, poll at the usual pace ──
  {
    const proxy = await startHostRewritingProxy(opt.url);
    const context = await browser.newContext({ viewport: { width: 1024, height: 700 } });
    const page = await context.newPage();
    let closed = 0;
    page.on('websocket', (ws) => ws.on('close', () => (closed += 1)));
    const started = Date.now();
    await page.goto(proxy.url + '/');
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 10_000 });
    const refusedOnce = await (async () => {
      while (closed === 0 && Date.now() - started < 5000) await page.waitForTimeout(100);
      return closed > 0;
    })();
    check(refusedOnce, 'the server closes the page\'s feed (Host rewritten: the Origin is not its own)');
    await page.waitForTimeout(Math.max(0, REFUSED_WINDOW_MS - (Date.now() - started)));
    const within = (x) => x.at >= started && x.at < started + REFUSED_WINDOW_MS;
    const handshakes = proxy.seen.handshakes.filter(within).length;
    const polls = proxy.seen.requests.filter((r) => within(r) && r.url.startsWith('/api/v1/cars/nearby')).length;
    const mostPolls = REFUSED_WINDOW_MS / POLL_CARS_MS + 2;
    check(handshakes >= 1 && handshakes <= 2, `a refused feed is not retried every few seconds: ${handshakes} handshakes in ${REFUSED_WINDOW_MS / 1000} s (at most 2)`);
    check(polls >= 5 && polls <= mostPolls, `the nearby cars are polled at the usual pace: ${polls} polls in ${REFUSED_WINDOW_MS / 1000} s (5 to ${mostPolls})`);
    check(Number(await page.evaluate(() => document.documentElement.dataset.cars)) > 0, 'the page shows taxis from polling');
    check(await liveBadge(page, 'polling', 1000), 'the badge says polling');
    await context.close();
    proxy.close();
  }
} catch (e) {
  check(false, `unexpected: ${e.stack || e}`);
} finally {
  await browser.close().catch(() => {});
}
finish(opt.artifacts, 'feed-recovery-report.json');
