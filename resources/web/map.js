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
      this.roadsDirty = true;
      this.frame = 0;
      this.pointers = new Map();
      this.gesture = null;
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
      const w = this.project(p);
      this.view.x = w.x;
      this.view.y = w.y;
      if (metresAcross) this.view.s = Math.min(MAX_SCALE, Math.max(this.minScale, Math.min(this.width, this.height) / metresAcross));
      this.viewChanged();
    }
    zoomBy(factor, sx = this.width / 2, sy = this.height / 2) {
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
      this.viewChanged();
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
      if (this.destination) this.drawPin(ctx, this.toScreen(this.project(this.destination)), '#d23c2f', 'B');
      ctx.font = '600 11px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      let assigned = null;
      for (const e of this.cars.values()) {
        if (e.car.id === this.assignedCarId) { assigned = e; continue; }
        this.drawCar(ctx, e, now, false);
      }
      if (assigned) this.drawCar(ctx, assigned, now, true);
      if (this.rider) this.drawRider(ctx, this.toScreen(this.project(this.rider)));
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

    drawCar(ctx, e, now, highlighted) {
      const p = this.toScreen(this.carPosition(e, now));
      if (p.x < -20 || p.y < -20 || p.x > this.width + 20 || p.y > this.height + 20) return;
      const r = highlighted ? 9 : 6;
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
      if ((e.car.label || highlighted) && e.car.eta_s != null) {
        const text = formatEtaShort(e.car.eta_s);
        const w = ctx.measureText(text).width + 8;
        ctx.fillStyle = 'rgba(255,255,255,.92)';
        ctx.fillRect(p.x + r + 3, p.y - 8, w, 16);
        ctx.fillStyle = '#1d2329';
        ctx.fillText(text, p.x + r + 7, p.y);
      }
    }

    drawRider(ctx, p) {
      ctx.beginPath();
      ctx.arc(p.x, p.y, 16, 0, 2 * Math.PI);
      ctx.fillStyle = 'rgba(30, 110, 230, .18)';
      ctx.fill();
      ctx.beginPath();
      ctx.arc(p.x, p.y, 7, 0, 2 * Math.PI);
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

  function formatEtaShort(seconds) {
    return seconds < 60 ? '<1 min' : Math.round(seconds / 60) + ' min';
  }

  window.TaxiMap = TaxiMap;
})();
