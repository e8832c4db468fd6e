'use strict';
// A small offline map on two canvases: the city's streets from /api/v1/map (no tile server;
// redrawn only when the view changes) and, above them, the cars, the rider, the destination and
// routes (redrawn while cars glide between live updates). Pan by dragging, zoom with the wheel,
// pinch or the buttons; a click (not a drag) reports its position through onClick.
(function () {
  const M_PER_DEG_LAT = 110540;
  const M_PER_DEG_LNG_EQ = 111320;
  const TWEEN_MS = 500;
  const MIN_SCALE = 0.01; // px per metre
  const MAX_SCALE = 4;
  // ETA labels: a white box LABEL_H px high beside its car. A label is drawn only where it
  // overlaps no other label, no labelled car, neither the rider's car, the rider's dot (with its
  // halo), the destination pin nor the map's buttons; it tries the four sides and the four
  // corners of its car, else it is left out. At most MAX_LABELS, the soonest cars first.
  const MAX_LABELS = 8;
  const LABEL_H = 16;
  const LABEL_PAD = 4;
  const LABEL_GAP = 2; // between a car's marker and its label
  const RIDER_DOT_R = 7;
  const RIDER_HALO_R = 16;
  const CAR_R = 6;
  const ASSIGNED_CAR_R = 9;
  const OTHERS_ALPHA_DURING_RIDE = 0.55; // the other cars fade while the rider's car is coming
  const FIT_PADDING = 48; // px kept free around what fit() shows (the destination pin is 34 px tall)

  // [colour, width in CSS px] by road class name; the rest use `other`.
  const ROAD_STYLE = {
    motorway: ['#e59b45', 3.4], trunk: ['#eeb05c', 3.0], primary: ['#f4cb72', 2.6],
    secondary: ['#f8e08f', 2.2], tertiary: ['#ffffff', 2.0], residential: ['#ffffff', 1.4],
    unclassified: ['#ffffff', 1.4], living_street: ['#ffffff', 1.2], service: ['#ffffff', 0.9],
    other: ['#ffffff', 1.1],
  };
  const CAR_COLOUR = { available: '#1f9d55', to_pickup: '#e07b00', waiting: '#e07b00', on_trip: '#7b3fc4', offline: '#8a949e' };

  class TaxiMap {
    constructor(wrap, roadsCanvas, overlayCanvas, origin) {
      this.wrap = wrap;
      this.roadsCanvas = roadsCanvas;
      this.canvas = overlayCanvas;
      this.origin = origin;
      this.kx = M_PER_DEG_LNG_EQ * Math.cos(origin.lat * Math.PI / 180);
      this.view = { x: 0, y: 0, s: 0.12 };
      this.minScale = MIN_SCALE;
      this.bounds = null;
      this.roadLayers = []; // [{style, path}] drawn in order, minor roads first
      this.cars = new Map(); // id → {car, from:{x,y}, to:{x,y}, t0}
      this.rider = null;
      this.destination = null;
      this.assignedCarId = null;
      this.routes = {}; // name → {points:[{x,y}], colour, dash}
      this.onClick = null;
      this.reservedElements = []; // DOM controls over the map: no label goes under them
      this.reserved = []; // their boxes in map pixels, measured on resize
      this.labelSides = new Map(); // car id → the side its label had last frame (less jumping)
      // What the last frame drew, in CSS px of the map (the browser test reads it):
      // labels [{id, x, y, w, h, text, free}], pickup {x, y, r} (r: the dot's halo), destination
      // {x, y} (the pin's tip), width, height.
      this.drawn = { labels: [], pickup: null, destination: null, width: 0, height: 0 };
      this.roadsDirty = true;
      this.frame = 0;
      this.pointers = new Map();
      this.gesture = null;
      this.fitted = null; // {points, padding} while the view follows fit()
      this.installInput();
      new ResizeObserver(() => this.resize()).observe(wrap);
      this.resize();
    }

    // ── projection: equirectangular around the origin, metres, y grows southwards ──
    project(p) {
      return { x: (p.lng - this.origin.lng) * this.kx, y: (this.origin.lat - p.lat) * M_PER_DEG_LAT };
    }
    unproject(w) {
      return { lat: this.origin.lat - w.y / M_PER_DEG_LAT, lng: this.origin.lng + w.x / this.kx };
    }
    toScreen(w) {
      return { x: (w.x - this.view.x) * this.view.s + this.width / 2, y: (w.y - this.view.y) * this.view.s + this.height / 2 };
    }
    toWorld(sx, sy) {
      return { x: (sx - this.width / 2) / this.view.s + this.view.x, y: (sy - this.height / 2) / this.view.s + this.view.y };
    }
    contains(p) {
      const b = this.bounds;
      return !!b && p.lat >= b.south && p.lat <= b.north && p.lng >= b.west && p.lng <= b.east;
    }

    // The /api/v1/map document: integer coordinates × 1/scale, deltas running on across roads.
    setRoads(doc) {
      const k = 1 / doc.scale;
      this.bounds = { south: doc.bounds[0] * k, west: doc.bounds[1] * k, north: doc.bounds[2] * k, east: doc.bounds[3] * k };
      const paths = doc.classes.map(() => new Path2D());
      let lat = 0, lng = 0;
      const ox = this.origin.lng, oy = this.origin.lat, kx = this.kx;
      for (const road of doc.roads) {
        const path = paths[road[0]] || paths[paths.length - 1];
        for (let i = 1; i + 1 < road.length; i += 2) {
          lat += road[i];
          lng += road[i + 1];
          const x = (lng * k - ox) * kx, y = (oy - lat * k) * M_PER_DEG_LAT;
          if (i === 1) path.moveTo(x, y); else path.lineTo(x, y);
        }
      }
      // Draw minor classes first so main roads lie on top.
      this.roadLayers = doc.classes
        .map((name, i) => ({ style: ROAD_STYLE[name] || ROAD_STYLE.other, path: paths[i] }))
        .sort((a, b) => a.style[1] - b.style[1]);
      // Zooming out stops when the whole city fits about twice across the view.
      const span = Math.max((this.bounds.east - this.bounds.west) * this.kx, (this.bounds.north - this.bounds.south) * M_PER_DEG_LAT);
      this.minScale = Math.max(MIN_SCALE, Math.min(this.width, this.height) / (span * 2.5));
      this.view.s = Math.max(this.view.s, this.minScale);
      this.roadsDirty = true;
      this.requestDraw();
    }

    centreOn(p, metresAcross) {
      this.fitted = null;
      const w = this.project(p);
      this.view.x = w.x;
      this.view.y = w.y;
      if (metresAcross) this.view.s = Math.min(MAX_SCALE, Math.max(this.minScale, Math.min(this.width, this.height) / metresAcross));
      this.viewChanged();
    }
    // The smallest view (within the zoom limits) that shows every point `padding` px inside the edges.
    // The view keeps fitting them when the map changes size (a phone's panel grows as the trip
    // starts), until the rider moves or zooms the map.
    fit(points, padding = FIT_PADDING) {
      this.fitted = { points, padding };
      const w = points.map((p) => this.project(p));
      const xs = w.map((p) => p.x), ys = w.map((p) => p.y);
      const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
      const sx = Math.max(1, this.width - 2 * padding) / Math.max(1, x1 - x0);
      const sy = Math.max(1, this.height - 2 * padding) / Math.max(1, y1 - y0);
      this.view.x = (x0 + x1) / 2;
      this.view.y = (y0 + y1) / 2;
      this.view.s = Math.min(MAX_SCALE, Math.max(this.minScale, Math.min(sx, sy)));
      this.viewChanged();
    }
    zoomBy(factor, sx = this.width / 2, sy = this.height / 2) {
      this.fitted = null;
      const before = this.toWorld(sx, sy);
      this.view.s = Math.min(MAX_SCALE, Math.max(this.minScale, this.view.s * factor));
      const after = this.toWorld(sx, sy);
      this.view.x += before.x - after.x;
      this.view.y += before.y - after.y;
      this.viewChanged();
    }
    viewChanged() {
      this.roadsDirty = true;
      this.requestDraw();
    }

    setRider(p) { this.rider = p; this.requestDraw(); }
    setDestination(p) { this.destination = p; this.requestDraw(); }
    setAssignedCar(id) { this.assignedCarId = id; this.requestDraw(); }
    setRoute(name, latLngs, colour, dash) {
      if (!latLngs) delete this.routes[name];
      else this.routes[name] = { points: latLngs.map((p) => this.project(p)), colour, dash };
      this.requestDraw();
    }
    // Cars glide from where they are drawn to their new position over one update interval.
    setCars(cars) {
      const now = performance.now();
      const next = new Map();
      for (const car of cars) {
        const to = this.project(car);
        const old = this.cars.get(car.id);
        const from = old ? this.carPosition(old, now) : to;
        next.set(car.id, { car, from, to, t0: now });
      }
      this.cars = next;
      this.requestDraw();
    }
    carPosition(entry, now) {
      const t = Math.min(1, (now - entry.t0) / TWEEN_MS);
      return { x: entry.from.x + (entry.to.x - entry.from.x) * t, y: entry.from.y + (entry.to.y - entry.from.y) * t };
    }

    resize() {
      const dpr = window.devicePixelRatio || 1;
      this.width = this.wrap.clientWidth;
      this.height = this.wrap.clientHeight;
      for (const c of [this.roadsCanvas, this.canvas]) {
        c.width = Math.max(1, Math.round(this.width * dpr));
        c.height = Math.max(1, Math.round(this.height * dpr));
      }
      this.dpr = dpr;
      this.measureReserved();
      if (this.fitted) this.fit(this.fitted.points, this.fitted.padding);
      this.viewChanged();
    }
    setReservedElements(elements) {
      this.reservedElements = elements.filter(Boolean);
      this.measureReserved();
      this.requestDraw();
    }
    measureReserved() {
      const origin = this.wrap.getBoundingClientRect();
      this.reserved = this.reservedElements.map((el) => {
        const r = el.getBoundingClientRect();
        return { x: r.left - origin.left, y: r.top - origin.top, w: r.width, h: r.height };
      }).filter((r) => r.w > 0 && r.h > 0);
    }

    requestDraw() {
      if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
    }

    draw() {
      this.frame = 0;
      if (this.roadsDirty) this.drawRoads();
      const now = performance.now();
      this.drawOverlay(now);
      for (const e of this.cars.values()) {
        if (now - e.t0 < TWEEN_MS) { this.requestDraw(); break; }
      }
    }

    drawRoads() {
      this.roadsDirty = false;
      const ctx = this.roadsCanvas.getContext('2d');
      const { s, x, y } = this.view;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.fillStyle = '#f4f2ec';
      ctx.fillRect(0, 0, this.roadsCanvas.width, this.roadsCanvas.height);
      if (!this.roadLayers.length) return;
      const k = s * this.dpr;
      ctx.setTransform(k, 0, 0, k, (this.width / 2 - x * s) * this.dpr, (this.height / 2 - y * s) * this.dpr);
      ctx.lineCap = 'round';
      ctx.lineJoin = 'round';
      // Casing under the fill makes white streets visible on the pale ground.
      const zoomWidth = Math.max(0.45, Math.min(1.6, s * 6));
      for (const layer of this.roadLayers) {
        ctx.strokeStyle = '#cfc9bd';
        ctx.lineWidth = (layer.style[1] * zoomWidth + 1.2) / s;
        ctx.stroke(layer.path);
      }
      for (const layer of this.roadLayers) {
        ctx.strokeStyle = layer.style[0];
        ctx.lineWidth = (layer.style[1] * zoomWidth) / s;
        ctx.stroke(layer.path);
      }
    }

    drawOverlay(now) {
      const ctx = this.canvas.getContext('2d');
      ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
      ctx.clearRect(0, 0, this.width, this.height);
      for (const name of Object.keys(this.routes)) this.drawRoute(ctx, this.routes[name]);
      // Everything a label must not cover, as boxes in map pixels.
      const obstacles = this.reserved.slice();
      let pin = null;
      if (this.destination) {
        pin = this.toScreen(this.project(this.destination));
        this.drawPin(ctx, pin, '#d23c2f', 'B');
        obstacles.push({ x: pin.x - 12, y: pin.y - 34, w: 24, h: 35 });
      }
      const wanted = []; // {id, p, half, text, eta, free, highlighted}
      let assigned = null;
      ctx.save();
      if (this.assignedCarId != null) ctx.globalAlpha = OTHERS_ALPHA_DURING_RIDE;
      for (const e of this.cars.values()) {
        if (e.car.id === this.assignedCarId) { assigned = e; continue; }
        this.drawCar(ctx, e, now, false, obstacles, wanted);
      }
      ctx.restore();
      if (assigned) this.drawCar(ctx, assigned, now, true, obstacles, wanted);
      if (assigned && !wanted.some((l) => l.highlighted)) this.pushMarker(obstacles, assigned, now, true);
      let pickup = null;
      if (this.rider) {
        const p = this.toScreen(this.project(this.rider));
        this.drawRider(ctx, p);
        pickup = { x: p.x, y: p.y, r: RIDER_HALO_R };
        obstacles.push({ x: p.x - RIDER_HALO_R, y: p.y - RIDER_HALO_R, w: 2 * RIDER_HALO_R, h: 2 * RIDER_HALO_R });
      }
      this.drawn = { labels: this.drawLabels(ctx, wanted, obstacles), pickup, destination: pin, width: this.width, height: this.height };
    }

    // Places the labels greedily: the rider's car first, then the soonest. A car whose marker
    // lies under a label already placed gets none (it would point at a hidden car); else its
    // label takes the first side (last frame's first) that is on the map and free, and its
    // marker becomes an obstacle for the labels after it.
    drawLabels(ctx, wanted, obstacles) {
      ctx.font = '600 11px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      wanted.sort((a, b) => (b.highlighted - a.highlighted) || (a.eta - b.eta));
      const placed = [];
      const blocked = obstacles.slice();
      const sides = new Map();
      for (const l of wanted) {
        if (placed.length >= MAX_LABELS + (l.highlighted ? 1 : 0)) break;
        const marker = { x: l.p.x - l.half, y: l.p.y - l.half, w: 2 * l.half, h: 2 * l.half };
        if (placed.some((o) => overlaps(o, marker))) continue;
        if (l.highlighted) blocked.push(marker); // the rider's car stays uncovered, label or not
        const w = Math.ceil(ctx.measureText(l.text).width) + 2 * LABEL_PAD;
        const d = l.half + LABEL_GAP;
        const candidates = {
          right: { x: l.p.x + d, y: l.p.y - LABEL_H / 2 },
          left: { x: l.p.x - d - w, y: l.p.y - LABEL_H / 2 },
          top: { x: l.p.x - w / 2, y: l.p.y - d - LABEL_H },
          bottom: { x: l.p.x - w / 2, y: l.p.y + d },
          topRight: { x: l.p.x + d, y: l.p.y - d - LABEL_H },
          bottomRight: { x: l.p.x + d, y: l.p.y + d },
          topLeft: { x: l.p.x - d - w, y: l.p.y - d - LABEL_H },
          bottomLeft: { x: l.p.x - d - w, y: l.p.y + d },
        };
        const order = Object.keys(candidates);
        const last = this.labelSides.get(l.id);
        if (last) order.unshift(last);
        for (const side of order) {
          const box = { x: candidates[side].x, y: candidates[side].y, w, h: LABEL_H };
          if (box.x < 0 || box.y < 0 || box.x + w > this.width || box.y + LABEL_H > this.height) continue;
          if (blocked.some((o) => overlaps(o, box)) || placed.some((o) => overlaps(o, box))) continue;
          placed.push({ id: l.id, x: box.x, y: box.y, w, h: LABEL_H, text: l.text, free: l.free });
          if (!l.highlighted) blocked.push(marker);
          sides.set(l.id, side);
          break;
        }
      }
      this.labelSides = sides;
      for (const b of placed) {
        ctx.fillStyle = 'rgba(255,255,255,.94)';
        ctx.fillRect(b.x, b.y, b.w, b.h);
        ctx.fillStyle = '#1d2329';
        ctx.fillText(b.text, b.x + LABEL_PAD, b.y + LABEL_H / 2);
      }
      return placed;
    }

    drawRoute(ctx, route) {
      if (route.points.length < 2) return;
      ctx.save();
      ctx.strokeStyle = route.colour;
      ctx.lineWidth = 4;
      ctx.lineJoin = 'round';
      ctx.lineCap = 'round';
      ctx.globalAlpha = 0.8;
      if (route.dash) ctx.setLineDash(route.dash);
      ctx.beginPath();
      route.points.forEach((w, i) => {
        const p = this.toScreen(w);
        if (i === 0) ctx.moveTo(p.x, p.y); else ctx.lineTo(p.x, p.y);
      });
      ctx.stroke();
      ctx.restore();
    }

    // Draws a car's marker and adds its label, if it has one, to `wanted`.
    drawCar(ctx, e, now, highlighted, obstacles, wanted) {
      const p = this.toScreen(this.carPosition(e, now));
      if (p.x < -20 || p.y < -20 || p.x > this.width + 20 || p.y > this.height + 20) return;
      const r = highlighted ? ASSIGNED_CAR_R : CAR_R;
      const half = markerHalf(highlighted);
      if ((e.car.label || highlighted) && e.car.eta_s != null)
        wanted.push({ id: e.car.id, p, half, text: formatEtaShort(e.car.eta_s), eta: e.car.eta_s,
          free: e.car.state === 'available' && !highlighted, highlighted });
      if (highlighted) {
        ctx.beginPath();
        ctx.arc(p.x, p.y, r + 6, 0, 2 * Math.PI);
        ctx.fillStyle = 'rgba(246, 180, 0, .35)';
        ctx.fill();
      }
      ctx.save();
      ctx.translate(p.x, p.y);
      ctx.rotate(((e.car.heading || 0) * Math.PI) / 180);
      ctx.beginPath(); // a rounded body with a nose pointing where the car heads
      ctx.moveTo(0, -r - 4);
      ctx.lineTo(r, -r + 2);
      ctx.lineTo(r, r);
      ctx.lineTo(-r, r);
      ctx.lineTo(-r, -r + 2);
      ctx.closePath();
      ctx.fillStyle = highlighted ? '#f6b400' : CAR_COLOUR[e.car.state] || CAR_COLOUR.offline;
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 1.5;
      ctx.fill();
      ctx.stroke();
      ctx.restore();
    }

    // The rider's car without a label still must not be covered by another car's.
    pushMarker(obstacles, e, now, highlighted) {
      const p = this.toScreen(this.carPosition(e, now));
      const half = markerHalf(highlighted);
      obstacles.push({ x: p.x - half, y: p.y - half, w: 2 * half, h: 2 * half });
    }

    drawRider(ctx, p) {
      ctx.beginPath();
      ctx.arc(p.x, p.y, RIDER_HALO_R, 0, 2 * Math.PI);
      ctx.fillStyle = 'rgba(30, 110, 230, .18)';
      ctx.fill();
      ctx.beginPath();
      ctx.arc(p.x, p.y, RIDER_DOT_R, 0, 2 * Math.PI);
      ctx.fillStyle = '#1e6ee6';
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 2.5;
      ctx.fill();
      ctx.stroke();
    }

    drawPin(ctx, p, colour, label) {
      ctx.beginPath();
      ctx.moveTo(p.x, p.y);
      ctx.bezierCurveTo(p.x - 4, p.y - 10, p.x - 11, p.y - 14, p.x - 11, p.y - 22);
      ctx.arc(p.x, p.y - 22, 11, Math.PI, 0);
      ctx.bezierCurveTo(p.x + 11, p.y - 14, p.x + 4, p.y - 10, p.x, p.y);
      ctx.fillStyle = colour;
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 2;
      ctx.fill();
      ctx.stroke();
      ctx.fillStyle = '#fff';
      ctx.font = '700 12px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(label, p.x, p.y - 22);
      ctx.textAlign = 'start';
    }

    // ── input: drag to pan, wheel/pinch/buttons to zoom, click to pick ──
    installInput() {
      const c = this.canvas;
      c.addEventListener('pointerdown', (ev) => {
        c.setPointerCapture(ev.pointerId);
        this.pointers.set(ev.pointerId, { x: ev.offsetX, y: ev.offsetY });
        if (this.pointers.size === 1) this.gesture = { startX: ev.offsetX, startY: ev.offsetY, moved: false };
        else this.gesture = { pinch: this.pinchState(), moved: true };
      });
      c.addEventListener('pointermove', (ev) => {
        const last = this.pointers.get(ev.pointerId);
        if (!last || !this.gesture) return;
        const g = this.gesture;
        if (g.pinch && this.pointers.size >= 2) {
          this.pointers.set(ev.pointerId, { x: ev.offsetX, y: ev.offsetY });
          const now = this.pinchState();
          if (g.pinch.d > 0) this.zoomBy(now.d / g.pinch.d, now.cx, now.cy);
          this.view.x -= (now.cx - g.pinch.cx) / this.view.s;
          this.view.y -= (now.cy - g.pinch.cy) / this.view.s;
          g.pinch = now;
          this.viewChanged();
          return;
        }
        if (!g.moved && Math.hypot(ev.offsetX - g.startX, ev.offsetY - g.startY) < 5) return;
        g.moved = true;
        this.fitted = null;
        c.classList.add('dragging');
        this.view.x -= (ev.offsetX - last.x) / this.view.s;
        this.view.y -= (ev.offsetY - last.y) / this.view.s;
        this.pointers.set(ev.pointerId, { x: ev.offsetX, y: ev.offsetY });
        this.viewChanged();
      });
      const end = (ev) => {
        const g = this.gesture;
        this.pointers.delete(ev.pointerId);
        c.classList.remove('dragging');
        if (this.pointers.size === 0) {
          if (g && !g.moved && ev.type === 'pointerup' && this.onClick) this.onClick(this.unproject(this.toWorld(ev.offsetX, ev.offsetY)));
          this.gesture = null;
        } else if (this.pointers.size === 1) {
          const [p] = this.pointers.values();
          this.gesture = { startX: p.x, startY: p.y, moved: true };
        }
      };
      c.addEventListener('pointerup', end);
      c.addEventListener('pointercancel', end);
      c.addEventListener('wheel', (ev) => {
        ev.preventDefault();
        this.zoomBy(Math.exp(-ev.deltaY * 0.0015), ev.offsetX, ev.offsetY);
      }, { passive: false });
    }
    pinchState() {
      const [a, b] = [...this.pointers.values()];
      return { d: Math.hypot(a.x - b.x, a.y - b.y), cx: (a.x + b.x) / 2, cy: (a.y + b.y) / 2 };
    }
  }

  // Half the side of a box that holds a car's marker whatever its heading (the nose is r + 4 out;
  // the rider's car has a halo of r + 6).
  const markerHalf = (highlighted) => (highlighted ? ASSIGNED_CAR_R + 6 : CAR_R + 4);
  const overlaps = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

  function formatEtaShort(seconds) {
    return seconds < 60 ? '<1 min' : Math.round(seconds / 60) + ' min';
  }

  window.TaxiMap = TaxiMap;
})();
