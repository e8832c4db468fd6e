'use strict';
// TaxiCore rider page: find nearby taxis, book the nearest, pick a destination for a quote,
// watch the car come, get in, leave, read the receipt. Live data comes over the WebSocket feed
// (/api/v1/stream), with polling of the REST API when the feed is not there. Every failure ends
// as a message in the panel, never as a blank page.
(function () {
  const API = '/api/v1';
  // The bundled city until /api/v1/map says otherwise (central Gothenburg).
  const DEFAULT_BOUNDS = { south: 57.65, north: 57.76, west: 11.86, east: 12.09 };
  const NEARBY_RADIUS_M = 3000;
  const NEARBY_LIMIT = 30;
  const POLL_CARS_MS = 2000;
  const POLL_BOOKING_MS = 1000;
  // Reconnecting the feed: jittered, so that the riders a server dropped together do not all come
  // back in the same second. A close that says "not you" (1008 policy: origin, too many clients)
  // or "later" (1013) is not a network blip: the page polls meanwhile and asks again much later.
  const FEED_RETRY_MIN_MS = 1000;
  const FEED_RETRY_MAX_MS = 15000;
  const FEED_REFUSED_MIN_MS = 30000;
  const FEED_REFUSED_MAX_MS = 60000;
  const FEED_REFUSED_CODES = new Set([1008, 1013]);
  // The feed says a booking is "unknown" when its node's copy of the fleet does not hold it (yet):
  // GET asks the ledger, at once the first time, then at most every 3 s, 6 s, … 30 s while the feed
  // keeps saying so.
  const BOOKING_CHECK_MIN_MS = 3000;
  const BOOKING_CHECK_MAX_MS = 30000;
  const REQUEST_TIMEOUT_MS = 8000;
  const BOOKING_RETRIES = 2; // a booking whose answer was lost is sent again this many times, same key
  const RETRIED = new Set(['unreachable', 'idempotency_key_in_progress']); // sent again at once, same key
  const KEEPS_KEY = new Set(['no_car_available', 'too_many_bookings', 'idempotency_key_in_progress']);
  // What the rider does to the map: a tap on a touch screen, else a click.
  const POINT = window.matchMedia && matchMedia('(pointer: coarse)').matches ? 'Tap' : 'Click';
  const FRIENDLY = {
    no_car_available: 'No taxi is available right now. Please try again in a moment.',
    booking_capacity: 'Too many bookings at the moment. Please try again shortly.',
    outside_service_area: 'That place is outside the service area (central Gothenburg). Pick a point inside the city.',
    unreachable: 'Cannot reach the TaxiCore server. Check your connection; the page keeps trying.',
    no_route: 'No road leads there. Pick a point on a street.',
    too_many_bookings: 'Too many bookings from your connection. Please wait a minute and try again.',
    rider_token_required: 'This page no longer holds the key to your booking. Please book again.',
    not_your_booking: 'This page no longer holds the key to your booking. Please book again.',
  };

  const $ = (id) => document.getElementById(id);
  const ui = {
    status: $('status'), message: $('message'), messageText: $('message-text'), live: $('live'),
    trip: $('trip'), quote: $('quote'), receipt: $('receipt'), receiptFacts: $('receipt-facts'),
    book: $('book'), pickup: $('pickup'), leave: $('leave'), cancel: $('cancel'), again: $('again'),
    mapLoading: $('map-loading'), clickMode: $('click-mode'),
  };

  const state = {
    riderId: riderId(),
    bounds: DEFAULT_BOUNDS,
    pickup: null,
    pickupChosen: false,
    destination: null,
    quote: null,
    cars: [],
    carsKnown: false, // a real answer about the nearby cars came (until then: loading, not "no taxi")
    booking: null, // the latest view of our booking
    riderToken: null, // the booking's rider_token: reading it (GET, the feed), pickup, complete and cancel need it
    bookingKey: null, // { key, order }: the Idempotency-Key of a booking not answered yet (postBooking)
    phase: 'idle', // idle | booking | assigned | arriving | on_trip | completed | cancelled | expired
    cancelledByMe: false,
    busy: false,
    unreachable: false,
    feed: { ws: null, failures: 0, live: false, retry: 0 },
    timers: { cars: 0, booking: 0 },
    lastCarsPollMs: -Infinity, // when pollCars last asked (a reconnect does not ask again so soon)
    bookingRead: false, // a GET of the booking is under way (one at a time)
    unknownCheck: { bookingId: null, notBefore: 0, delayMs: BOOKING_CHECK_MIN_MS },
  };

  const centre = { lat: (DEFAULT_BOUNDS.south + DEFAULT_BOUNDS.north) / 2, lng: (DEFAULT_BOUNDS.west + DEFAULT_BOUNDS.east) / 2 };
  const map = new window.TaxiMap($('map-wrap'), $('roads'), $('overlay'), centre);
  map.setReservedElements([document.querySelector('#map-wrap .zoom'), $('attribution')]);
  window.taxicoreMap = map; // the browser test reads map.drawn: where the labels went
  document.querySelector('#click-mode legend').textContent = `A ${POINT.toLowerCase()} on the map sets`;

  // ── formatting ──
  function riderId() {
    try {
      let id = localStorage.getItem('taxicore-rider');
      if (!id) localStorage.setItem('taxicore-rider', (id = 'rider-' + Math.random().toString(36).slice(2, 10)));
      return id;
    } catch (e) {
      return 'rider-' + Math.random().toString(36).slice(2, 10);
    }
  }
  const distance = (m) => (m < 1000 ? Math.round(m) + ' m' : (m / 1000).toFixed(1) + ' km');
  function duration(s) {
    s = Math.max(0, Math.round(s));
    if (s < 60) return s + ' s';
    const min = Math.floor(s / 60), sec = s % 60;
    return min < 60 ? min + ' min' + (sec ? ' ' + sec + ' s' : '') : Math.floor(min / 60) + ' h ' + (min % 60) + ' min';
  }
  const eta = (s) => (s == null ? '—' : s < 60 ? 'under a minute' : Math.round(s / 60) + ' min');
  function money(amount, currency) {
    try {
      return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency || 'SEK' }).format(amount);
    } catch (e) {
      return amount.toFixed(2) + ' ' + (currency || '');
    }
  }
  function facts(dl, rows) {
    dl.replaceChildren();
    for (const [label, value, cls] of rows) {
      const dt = document.createElement('dt');
      const dd = document.createElement('dd');
      dt.textContent = label;
      dd.textContent = value;
      if (cls) dd.className = cls;
      dl.append(dt, dd);
    }
    dl.hidden = rows.length === 0;
  }
  const inside = (p) => p.lat >= state.bounds.south && p.lat <= state.bounds.north && p.lng >= state.bounds.west && p.lng <= state.bounds.east;

  // ── messages ──
  function showMessage(text, kind) {
    ui.messageText.textContent = text;
    ui.message.className = kind === 'info' ? 'info' : '';
    ui.message.dataset.kind = kind || 'error';
    ui.message.hidden = false;
  }
  function hideMessage() {
    ui.message.hidden = true;
  }
  $('message-close').addEventListener('click', hideMessage);
  function showError(err) {
    showMessage(FRIENDLY[err.code] || err.message || 'Something went wrong.', 'error');
  }

  // ── HTTP ──
  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }
  // `token`: the booking's rider_token, sent as a bearer token (only its rider may move it).
  async function api(method, path, body, token, extraHeaders) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), REQUEST_TIMEOUT_MS);
    let res;
    try {
      res = await fetch(API + path, {
        method, cache: 'no-store', signal: abort.signal,
        headers: {
          ...(body ? { 'Content-Type': 'application/json' } : {}),
          ...(token ? { Authorization: 'Bearer ' + token } : {}),
          ...(extraHeaders || {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch (e) {
      setUnreachable(true);
      throw new ApiError(0, 'unreachable', FRIENDLY.unreachable);
    } finally {
      clearTimeout(timer);
    }
    setUnreachable(false);
    let data = null;
    try {
      data = await res.json();
    } catch (e) {
      data = null;
    }
    if (!res.ok) throw new ApiError(res.status, (data && data.error) || 'http_' + res.status, (data && data.message) || 'The server answered ' + res.status + '.');
    return data;
  }
  function setUnreachable(down) {
    if (down === state.unreachable) return;
    state.unreachable = down;
    if (down) {
      showMessage(FRIENDLY.unreachable, 'error');
      ui.message.dataset.kind = 'unreachable';
    } else if (ui.message.dataset.kind === 'unreachable') {
      showMessage('Connected to the server again.', 'info');
    }
    if (down) {
      onCars([], false); // stale positions would mislead
      state.carsKnown = false; // the next answer decides again whether taxis are near
    }
    renderLive();
    renderStatus();
  }

  // ── live feed (WebSocket) with polling as the fallback ──
  function connectFeed() {
    clearTimeout(state.feed.retry);
    if (!('WebSocket' in window)) return startPolling();
    let ws;
    try {
      ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + API + '/stream');
    } catch (e) {
      return startPolling();
    }
    state.feed.ws = ws;
    // Open is not yet live: a server that refuses a client (origin, too many clients) accepts the
    // handshake and then closes. Only its first hello or update makes the feed live.
    ws.onopen = subscribe;
    ws.onmessage = (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      if (!state.feed.live && (msg.type === 'hello' || msg.type === 'update')) feedLive();
      if (msg.type === 'update') {
        setUnreachable(false);
        onCars(msg.cars || []);
        if (msg.booking) onFeedBooking(msg.booking);
      } else if (msg.type === 'follow') {
        // The followed car changed between updates: move it at once (and the booking, if it moved).
        if (msg.booking) onFeedBooking(msg.booking);
        else if (msg.car && state.booking && msg.booking_id === state.booking.booking_id && isOpen(state.phase)) {
          state.booking = Object.assign({}, state.booking, { car: msg.car });
          drawCars();
        }
      } else if (msg.type === 'error') {
        console.warn('feed:', msg.error, msg.message);
        // The feed follows a booking only for its rider token: without it the booking cannot be followed.
        if (FRIENDLY[msg.error] && state.booking && msg.booking_id === state.booking.booking_id) showMessage(FRIENDLY[msg.error], 'error');
      }
    };
    ws.onclose = (ev) => {
      if (state.feed.ws !== ws) return;
      state.feed.ws = null;
      state.feed.live = false;
      state.feed.failures += 1;
      startPolling();
      renderLive();
      state.feed.retry = setTimeout(connectFeed, feedRetryDelay(ev.code));
    };
  }
  function feedLive() {
    state.feed.failures = 0;
    state.feed.live = true;
    stopPolling();
    renderLive();
  }
  function feedRetryDelay(closeCode) {
    const between = (min, max) => min + Math.random() * (max - min);
    if (FEED_REFUSED_CODES.has(closeCode)) return between(FEED_REFUSED_MIN_MS, FEED_REFUSED_MAX_MS);
    const ceiling = Math.min(FEED_RETRY_MAX_MS, FEED_RETRY_MIN_MS * 2 ** Math.min(state.feed.failures, 4));
    return between(ceiling / 2, ceiling);
  }
  function subscribe() {
    const ws = state.feed.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || !state.pickup) return;
    const sub = { lat: state.pickup.lat, lng: state.pickup.lng, radius_m: NEARBY_RADIUS_M, limit: NEARBY_LIMIT };
    if (state.booking && isOpen(state.phase)) {
      sub.booking_id = state.booking.booking_id;
      sub.rider_token = state.riderToken; // a browser cannot set Authorization on a WebSocket
    }
    ws.send(JSON.stringify({ subscribe: sub }));
  }
  function startPolling() {
    if (!state.timers.cars) {
      if (performance.now() - state.lastCarsPollMs >= POLL_CARS_MS) pollCars();
      state.timers.cars = setInterval(pollCars, POLL_CARS_MS);
    }
    if (!state.timers.booking) state.timers.booking = setInterval(readBooking, POLL_BOOKING_MS);
  }
  function stopPolling() {
    clearInterval(state.timers.cars);
    clearInterval(state.timers.booking);
    state.timers.cars = state.timers.booking = 0;
  }
  async function pollCars() {
    if (!state.pickup) return;
    state.lastCarsPollMs = performance.now();
    try {
      const q = `lat=${state.pickup.lat.toFixed(6)}&lng=${state.pickup.lng.toFixed(6)}&radius_m=${NEARBY_RADIUS_M}&limit=${NEARBY_LIMIT}`;
      onCars((await api('GET', '/cars/nearby?' + q)).cars || []);
    } catch (e) {
      if (e.code !== 'unreachable') console.warn(e);
    }
  }
  // GET answers from this node's fleet, else from the ledger: the truth about the booking. Only
  // its 404 ends the booking on the page; a network error or a 5xx keeps it (asked again later).
  async function readBooking() {
    if (!state.booking || !isOpen(state.phase) || state.bookingRead) return;
    const id = state.booking.booking_id;
    state.bookingRead = true;
    try {
      onBooking(await api('GET', '/bookings/' + id, null, state.riderToken));
    } catch (e) {
      // The server's own 404 for this booking, not one of a proxy in front (a misrouted path
      // during a deploy): the booking may be live, and the rider would book a second car.
      if (e.status === 404 && e.code === 'booking_not_found' && state.booking && state.booking.booking_id === id && isOpen(state.phase)) {
        showMessage('Your booking is no longer known to the server.', 'error');
        finish('cancelled');
      } else if (e.code !== 'unreachable') {
        console.warn(e);
      }
    } finally {
      state.bookingRead = false;
    }
  }
  // "unknown" from the feed means its node does not hold the booking (a cluster node not yet told
  // of it, or cut off from the others), not that it is gone: the page keeps it and asks the
  // ledger, backing off while the feed says so.
  function onFeedBooking(b) {
    if (b.state !== 'unknown') {
      state.unknownCheck.bookingId = null; // the feed knows it again: its next "unknown" is checked at once
      return onBooking(b);
    }
    if (!state.booking || b.booking_id !== state.booking.booking_id || !isOpen(state.phase)) return;
    const check = state.unknownCheck;
    if (check.bookingId !== b.booking_id) Object.assign(check, { bookingId: b.booking_id, notBefore: 0, delayMs: BOOKING_CHECK_MIN_MS });
    const now = performance.now();
    if (now < check.notBefore || state.bookingRead) return;
    check.notBefore = now + check.delayMs;
    check.delayMs = Math.min(BOOKING_CHECK_MAX_MS, check.delayMs * 2);
    readBooking();
  }
  const isOpen = (phase) => phase === 'assigned' || phase === 'arriving' || phase === 'on_trip';

  // ── data in ──
  // `answer`: the server's word on the nearby cars (false: cleared while it is unreachable).
  function onCars(cars, answer = true) {
    state.cars = cars;
    if (answer) state.carsKnown = true;
    drawCars();
    if (state.phase === 'idle') renderStatus();
    if (answer) document.documentElement.dataset.cars = String(cars.length);
  }
  function drawCars() {
    // Free taxis may carry an ETA label (the map shows those that fit, soonest first) only while
    // the rider chooses: during a ride they are no longer news, and after it they would count
    // from the old pickup. The rider's car is labelled while it comes (its ETA to the pickup).
    const labelFree = state.phase === 'idle';
    let cars = state.cars.map((c) => (labelFree && c.state === 'available' ? Object.assign({ label: true }, c) : c));
    const mine = state.booking && state.booking.car;
    const myEta = state.phase === 'assigned' ? state.booking.eta_s : null;
    if (mine && isOpen(state.phase)) cars = cars.filter((c) => c.id !== mine.id).concat([Object.assign({}, mine, { eta_s: myEta })]);
    map.setCars(cars);
  }
  function onBooking(b) {
    if (!state.booking || b.booking_id !== state.booking.booking_id) return;
    if (b.state === 'unknown') return; // only the feed says so (onFeedBooking)
    // The ledger's view has no ETA (its eta_s is 0): the last one known stays.
    if (b.from_ledger) b = Object.assign({}, b, { eta_s: state.booking.eta_s });
    state.booking = Object.assign({}, state.booking, b);
    if (b.car && isOpen(b.state)) map.setAssignedCar(b.car.id);
    const before = state.phase;
    if (b.state !== before) {
      if (b.state === 'cancelled' && !state.cancelledByMe && isOpen(before)) {
        showMessage('Your booking was cancelled by the operator. Sorry! You can book again.', 'error');
        ui.message.dataset.kind = 'cancelled';
      }
      if (b.state === 'arriving') map.setRoute('approach', null);
      if (b.state === 'on_trip') showTrip();
      if (b.state === 'completed' && !state.receiptShown) showReceipt(b);
      state.phase = b.state;
      if (!isOpen(b.state)) {
        remember(null);
        map.setAssignedCar(null);
        map.setRoute('approach', null);
        subscribe();
      }
    }
    drawCars();
    render();
  }

  // ── actions ──
  async function act(button, fn) {
    if (state.busy) return;
    state.busy = true;
    button.disabled = true;
    try {
      await fn();
    } catch (e) {
      showError(e);
    } finally {
      state.busy = false;
      button.disabled = false;
      render();
    }
  }

  ui.book.addEventListener('click', () => act(ui.book, async () => {
    hideMessage();
    const body = { rider_id: state.riderId, pickup: state.pickup };
    if (state.destination) body.dropoff = state.destination;
    state.phase = 'booking';
    render();
    let b;
    try {
      b = await postBooking(body);
    } catch (e) {
      state.phase = 'idle';
      throw e;
    }
    state.booking = b;
    state.riderToken = b.rider_token; // shown once by the server: kept for this booking's moves
    remember(b.booking_id, b.rider_token);
    state.cancelledByMe = false;
    state.receiptShown = false;
    state.phase = b.state || 'assigned';
    if (b.quote && !state.quote) state.quote = { fare: b.quote, currency: b.quote.currency };
    map.setAssignedCar(b.car && b.car.id);
    setClickMode('dropoff');
    subscribe();
    drawCars();
    showApproach();
  }));
  ui.cancel.addEventListener('click', () => act(ui.cancel, async () => {
    state.cancelledByMe = true;
    const b = await api('POST', `/bookings/${state.booking.booking_id}/cancel`, null, state.riderToken);
    hideMessage();
    onBooking(b);
  }));
  ui.pickup.addEventListener('click', () => act(ui.pickup, async () => {
    onBooking(await api('POST', `/bookings/${state.booking.booking_id}/pickup`, null, state.riderToken));
    hideMessage();
  }));
  ui.leave.addEventListener('click', () => act(ui.leave, async () => {
    const b = await api('POST', `/bookings/${state.booking.booking_id}/complete`, null, state.riderToken);
    showReceipt(b);
    onBooking(b);
  }));
  ui.again.addEventListener('click', () => finish('idle'));

  // The open booking (and its rider token) survives a reload of the page (same tab).
  // A booking goes with an Idempotency-Key, and a request whose answer never came (the network,
  // a timeout) is sent again with the same key: the server answers with the booking it made, if
  // it made one, instead of booking a second car. The key is kept for the same order until an
  // answer comes, so pressing Book again after "unreachable" is a retry too.
  async function postBooking(body) {
    const order = JSON.stringify(body);
    if (!state.bookingKey || state.bookingKey.order !== order) state.bookingKey = { key: newKey(), order };
    const headers = { 'Idempotency-Key': state.bookingKey.key };
    for (let attempt = 0; ; attempt++) {
      try {
        const b = await api('POST', '/bookings', body, null, headers);
        state.bookingKey = null;
        return b;
      } catch (e) {
        // Only an answer that booked nothing for good frees the key (a bad order, a key used for
        // another order). After a lost answer, a 5xx, 429 or "no car" the first try may still
        // stand: pressing Book again for this order must send the same key.
        if (e.status >= 400 && e.status < 500 && !KEEPS_KEY.has(e.code)) state.bookingKey = null;
        if (!RETRIED.has(e.code) || attempt >= BOOKING_RETRIES) throw e;
        await new Promise((resolve) => setTimeout(resolve, 1000 * (attempt + 1)));
      }
    }
  }
  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID(); // secure contexts only
    const bytes = new Uint8Array(16);
    if (window.crypto && crypto.getRandomValues) crypto.getRandomValues(bytes);
    else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
    return Array.from(bytes, (x) => x.toString(16).padStart(2, '0')).join('');
  }
  function remember(id, token) {
    try {
      if (id) sessionStorage.setItem('taxicore-booking', String(id));
      else sessionStorage.removeItem('taxicore-booking');
      if (id && token) sessionStorage.setItem('taxicore-rider-token', token);
      else sessionStorage.removeItem('taxicore-rider-token');
    } catch (e) {
      /* storage disabled: no resume after a reload */
    }
  }
  async function resume() {
    let id = null;
    try {
      id = sessionStorage.getItem('taxicore-booking');
      state.riderToken = sessionStorage.getItem('taxicore-rider-token');
    } catch (e) {
      return;
    }
    if (!id) return;
    if (!state.riderToken) return remember(null); // the server shows a booking only to its rider
    try {
      const b = await api('GET', '/bookings/' + encodeURIComponent(id), null, state.riderToken);
      if (!isOpen(b.state) || state.phase !== 'idle') return remember(null);
      state.booking = b;
      state.phase = b.state;
      state.pickupChosen = true;
      setPickup(b.pickup, true);
      map.centreOn(b.pickup);
      map.setAssignedCar(b.car && b.car.id);
      setClickMode('dropoff');
      if (b.dropoff) setDestination(b.dropoff);
      if (b.state === 'on_trip') showTrip();
      subscribe();
      drawCars();
      render();
    } catch (e) {
      if (e.code !== 'unreachable') remember(null);
    }
  }

  function finish(phase) {
    state.phase = phase;
    if (phase === 'idle') {
      state.booking = null;
      state.destination = null;
      state.quote = null;
      state.receiptShown = false;
      ui.receipt.hidden = true;
      map.setDestination(null);
      map.setAssignedCar(null);
      map.setRoute('trip', null);
      map.setRoute('approach', null);
      setClickMode('pickup');
      hideMessage();
    }
    subscribe();
    drawCars();
    render();
  }

  // The ride starts: the view takes in the car, the pickup and the destination, so the pin is
  // not left off the edge of a phone's map.
  function showTrip() {
    const b = state.booking;
    const points = [state.pickup, state.destination, b && b.car].filter(Boolean);
    if (points.length > 1) map.fit(points);
  }

  async function showApproach() {
    const b = state.booking;
    if (!b || !b.car) return;
    try {
      const r = await api('GET', `/route?from_lat=${b.car.lat}&from_lng=${b.car.lng}&to_lat=${b.pickup.lat}&to_lng=${b.pickup.lng}`);
      if (state.booking === b || (state.booking && state.booking.booking_id === b.booking_id && state.phase === 'assigned'))
        map.setRoute('approach', r.polyline.map(([lat, lng]) => ({ lat, lng })), '#e07b00', [6, 6]);
    } catch (e) {
      /* the route is decoration: the server may have no road network */
    }
  }

  function showReceipt(b) {
    state.receiptShown = true;
    const fare = b.fare || {};
    const rows = [
      ['Distance', distance(b.distance_m || 0)],
      ['Duration', duration(b.duration_s || 0)],
    ];
    if (typeof fare.base === 'number') rows.push(['Base fare', money(fare.base, fare.currency)]);
    if (typeof fare.distance_charge === 'number') rows.push(['Distance charge', money(fare.distance_charge, fare.currency)]);
    if (typeof fare.time_charge === 'number') rows.push(['Time charge', money(fare.time_charge, fare.currency)]);
    const parts = (fare.base || 0) + (fare.distance_charge || 0) + (fare.time_charge || 0);
    if (typeof fare.minimum === 'number' && fare.minimum > parts && fare.total <= fare.minimum + 0.005)
      rows.push(['Minimum fare', money(fare.minimum, fare.currency)]);
    if (typeof fare.total === 'number') rows.push(['Price', money(fare.total, fare.currency), 'total']);
    else if (typeof b.fare_total === 'number') rows.push(['Price', money(b.fare_total), 'total']);
    facts(ui.receiptFacts, rows);
    ui.receipt.hidden = false;
    // On a phone the panel is a short sheet: bring the receipt up rather than leave it below.
    requestAnimationFrame(() => ui.receipt.scrollIntoView({ block: 'nearest' }));
  }

  // ── map clicks: the pickup before booking, the destination otherwise ──
  function clickMode() {
    return document.querySelector('input[name="click-mode"]:checked').value;
  }
  function setClickMode(mode) {
    document.querySelector(`input[name="click-mode"][value="${mode}"]`).checked = true;
  }
  map.onClick = (p) => {
    if (clickMode() === 'pickup' && state.phase === 'idle') setPickup(p, true);
    else if (state.phase !== 'completed') setDestination(p);
  };
  function setPickup(p, chosen) {
    if (!inside(p)) return showMessage(FRIENDLY.outside_service_area, 'error');
    if (ui.message.dataset.kind === 'error' && !state.unreachable) hideMessage();
    state.pickup = p;
    state.pickupChosen = state.pickupChosen || chosen;
    document.documentElement.dataset.pickup = p.lat.toFixed(5) + ',' + p.lng.toFixed(5);
    map.setRider(p);
    subscribe();
    if (!state.feed.live) pollCars();
    if (state.destination) quote();
    render();
  }
  function setDestination(p) {
    state.destination = p;
    map.setDestination(p);
    quote();
  }
  async function quote() {
    const from = state.pickup, to = state.destination;
    const qs = `from_lat=${from.lat.toFixed(6)}&from_lng=${from.lng.toFixed(6)}&to_lat=${to.lat.toFixed(6)}&to_lng=${to.lng.toFixed(6)}`;
    try {
      const q = await api('GET', '/quote?' + qs);
      if (state.destination !== to) return;
      state.quote = q;
      if (ui.message.dataset.kind === 'error') hideMessage();
      render();
      api('GET', '/route?' + qs)
        .then((r) => state.destination === to && map.setRoute('trip', r.polyline.map(([lat, lng]) => ({ lat, lng })), '#1e6ee6'))
        .catch(() => map.setRoute('trip', null));
    } catch (e) {
      if (state.destination !== to) return;
      state.destination = null;
      state.quote = null;
      map.setDestination(null);
      map.setRoute('trip', null);
      showError(e);
      render();
    }
  }

  // ── rendering the panel ──
  function renderLive() {
    const l = ui.live;
    l.className = 'pill ' + (state.unreachable ? 'offline' : state.feed.live ? 'live' : 'polling');
    l.textContent = state.unreachable ? 'offline' : state.feed.live ? 'live' : 'polling';
  }
  function renderStatus() {
    const b = state.booking;
    let text;
    switch (state.phase) {
    case 'idle': {
      if (state.unreachable) {
        text = 'Waiting for the server: taxis show again as soon as it answers.';
        break;
      }
      if (!state.carsKnown) {
        text = 'Looking for taxis near you…';
        break;
      }
      const free = state.cars.filter((c) => c.state === 'available');
      const etas = free.map((c) => c.eta_s).filter((s) => s != null);
      // The server answers at most NEARBY_LIMIT cars: a full answer may leave some out.
      const count = free.length + (state.cars.length >= NEARBY_LIMIT ? '+' : '');
      text = free.length === 0
        ? 'No free taxi near you right now.'
        : `${count} free ${free.length === 1 ? 'taxi' : 'taxis'} nearby · the nearest is ${eta(etas.length ? Math.min(...etas) : null)} away.`;
      if (!state.pickupChosen) text += ` ${POINT} the map to move your pickup.`;
      break;
    }
    case 'booking': text = 'Booking the nearest taxi…'; break;
    case 'assigned': text = `Taxi ${b.car_id} is on its way — arriving in ${eta(b.eta_s)}.`; break;
    case 'arriving': text = `Taxi ${b.car_id} is here! Get in and tap “I'm in”.`; break;
    case 'on_trip': text = `On your way with taxi ${b.car_id}.`; break;
    case 'completed': text = 'Thank you for riding with TaxiCore.'; break;
    case 'cancelled': text = 'The booking was cancelled.'; break;
    case 'expired': text = 'Nobody got in before the pickup time ran out: the booking expired.'; break;
    default: text = '';
    }
    ui.status.textContent = text;
    const loading = state.phase === 'idle' && !state.unreachable && !state.carsKnown;
    if (loading) ui.status.setAttribute('aria-busy', 'true');
    else ui.status.removeAttribute('aria-busy');
  }
  function render() {
    const phase = state.phase;
    document.documentElement.dataset.phase = phase;
    document.documentElement.dataset.booking = state.booking ? String(state.booking.booking_id) : '';
    renderStatus();
    ui.book.hidden = !(phase === 'idle' || phase === 'booking');
    ui.book.disabled = state.busy || !state.pickup || phase === 'booking';
    ui.cancel.hidden = !(phase === 'assigned' || phase === 'arriving');
    ui.pickup.hidden = phase !== 'arriving';
    ui.leave.hidden = phase !== 'on_trip';
    ui.again.hidden = !(phase === 'completed' || phase === 'cancelled' || phase === 'expired');
    document.querySelector('input[name="click-mode"][value="pickup"]').disabled = phase !== 'idle';
    // After the ride a click on the map does nothing until "New ride": no switch for it then.
    ui.clickMode.hidden = !(phase === 'idle' || phase === 'booking' || isOpen(phase));

    const b = state.booking;
    const trip = [];
    if (b && isOpen(phase)) {
      trip.push(['Taxi', '#' + b.car_id]);
      if (phase === 'assigned') trip.push(['Arrives in', eta(b.eta_s)]);
      if (phase === 'on_trip') {
        trip.push(['Distance so far', distance(b.distance_m || 0)], ['Time so far', duration(b.duration_s || 0)]);
        if (b.fare) trip.push(['Fare so far', money(b.fare.total, b.fare.currency)]);
      }
    }
    facts(ui.trip, trip);

    const q = state.quote;
    if (q && state.destination && phase !== 'completed') {
      const fare = q.fare || {};
      facts(ui.quote, [
        ['Destination', distance(q.distance_m) + ' · ' + (q.duration_s < 60 ? 'under a minute' : 'about ' + eta(q.duration_s))],
        ['Fare estimate', money(fare.total, fare.currency || q.currency), 'total'],
      ]);
    } else {
      facts(ui.quote, []);
    }
  }

  // ── start: interactive first (centre + Book), then the map and the rider's real position ──
  setPickup(centre, false);
  map.centreOn(centre, 3500);
  render();
  renderLive();
  connectFeed();
  resume();
  document.documentElement.dataset.ready = '1';
  window.taxicoreTimings = { interactiveMs: performance.now() };
  $('zoom-in').addEventListener('click', () => map.zoomBy(1.5));
  $('zoom-out').addEventListener('click', () => map.zoomBy(1 / 1.5));
  $('recentre').addEventListener('click', () => state.pickup && map.centreOn(state.pickup, 3500));

  fetch(API + '/map')
    .then((res) => {
      if (!res.ok) throw new Error('map ' + res.status);
      return res.json();
    })
    .then((doc) => {
      map.setRoads(doc);
      state.bounds = map.bounds;
      ui.mapLoading.hidden = true;
      document.documentElement.dataset.map = '1';
      window.taxicoreTimings.mapMs = performance.now();
    })
    .catch(() => {
      ui.mapLoading.textContent = 'The street map could not be loaded; taxis are still shown.';
    });

  if (navigator.geolocation) {
    navigator.geolocation.getCurrentPosition((pos) => {
      const p = { lat: pos.coords.latitude, lng: pos.coords.longitude };
      if (state.pickupChosen || state.phase !== 'idle') return;
      if (inside(p)) {
        setPickup(p, false);
        map.centreOn(p);
      } else {
        showMessage(`You seem to be outside the service area, so your pickup is the city centre. ${POINT} the map to move it.`, 'info');
      }
    }, () => { /* no permission or no fix: the city centre it is */ }, { timeout: 5000, maximumAge: 60000 });
  }
})();
