// The arksave map: tiles of the saved pixel world on a canvas, pan and zoom
// with mouse and touch, entities with their ids, a click to inspect,
// server-sent events to follow each new generation, a time slider over the
// kept generations and an overlay of the chunks two of them store
// differently. No framework, no build.
'use strict';

const TILE = 256;
const MAX_SCALE = 32;
const FRAMES = { full: '#ff9a1f', delta: '#2fe0f0', empty: '#ffffff', none: '#c678dd' };
const ENTITY = '#ff4fd8';   // pixel bodies: their bounds
const REGIONAL = '#7ee787'; // other regional entities: a diamond at their position
const PLAYER = '#ffd166';   // players with a position: a circle there
const MARK = 6;             // the diamond's half size, CSS pixels
const SELECTED = '#ffb347';
// The diff overlay: a translucent fill and an outline inside each chunk.
const DIFF = { changed: '255,61,245', added: '61,255,110', removed: '255,64,64' };

const canvas = document.getElementById('map');
const ctx = canvas.getContext('2d');
const $ = (id) => document.getElementById(id);

// S is the page's state; window.arksaveMap exposes it (tests read it).
const S = {
  world: null,          // /api/world
  generation: 0,        // the generation the map shows
  latest: 0,            // the live generation: the committed one, which the map follows
  pinned: null,         // the kept generation shown instead of the live one, or null
  shown: 0,             // counts the changes of the generation shown: answers for an older one are dropped
  kept: [],             // the kept generations, oldest first: {generation, modified}
  compare: null,        // the generation the diff overlay compares the shown one with, or null
  diff: null,           // /api/diff of compare and the shown generation: {a, b, cells: "x,y" -> kind}
  cx: 0, cy: 0,         // world pixel at the canvas centre
  scale: 1,             // CSS pixels per world pixel
  tiles: new Map(),     // "z/x/y" -> tile
  chunks: new Map(),    // "x,y" -> {kind, bodies}
  entities: [],
  selection: null,      // {type: 'chunk', x, y} or {type: 'entity', kind, id}
  showGrid: true,
  showEntities: true,
  live: false,
  frame: 0,
  stats: { tileLoads: 0, refetched: [], events: [], selections: 0 },
};
window.arksaveMap = S;

// parseJSON keeps integers beyond 2^53 (body ids, offsets) exact, as
// strings, where the browser passes the source text to a reviver.
function parseJSON(text) {
  return JSON.parse(text, (key, value, ctx) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && Number.isInteger(value) && ctx && ctx.source ? ctx.source : value);
}

async function api(path) {
  const r = await fetch(path, { cache: 'no-store' });
  const body = parseJSON(await r.text());
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// el builds an element; strings become text, never markup.
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
  return e;
}

function dl(rows) {
  const d = el('dl');
  for (const [k, v] of rows) if (v !== undefined && v !== null && v !== '') d.append(el('dt', null, k), el('dd', null, v));
  return d;
}

function bytes(n) {
  if (n >= 10 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
  if (n >= 10 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}

function when(t) { return new Date(t).toLocaleString(); }

// --- view ----------------------------------------------------------------

function size() { return [canvas.clientWidth, canvas.clientHeight]; }

function toScreen(wx, wy) {
  const [w, h] = size();
  return [(wx - S.cx) * S.scale + w / 2, (wy - S.cy) * S.scale + h / 2];
}

function toWorld(sx, sy) {
  const [w, h] = size();
  return [(sx - w / 2) / S.scale + S.cx, (sy - h / 2) / S.scale + S.cy];
}
S.toScreen = toScreen;
S.toWorld = toWorld;

function minScale() { return Math.pow(2, -((S.world ? S.world.max_level : 8) + 1)); }

function clampScale(s) { return Math.min(MAX_SCALE, Math.max(minScale(), s)); }

// level is the tile level drawn: the finest whose pixels are no smaller
// than half a screen pixel.
function level() {
  const z = Math.floor(-Math.log2(S.scale) + 1e-9);
  return Math.max(0, Math.min(S.world.max_level, z));
}

function zoomAt(sx, sy, factor) {
  const [wx, wy] = toWorld(sx, sy);
  const [w, h] = size();
  S.scale = clampScale(S.scale * factor);
  S.cx = wx - (sx - w / 2) / S.scale;
  S.cy = wy - (sy - h / 2) / S.scale;
  viewChanged();
}

function fit() {
  const [w, h] = size();
  const e = S.world.extent;
  S.scale = clampScale(Math.min(w / (e[2] - e[0]), h / (e[3] - e[1])) * 0.95);
  S.cx = (e[0] + e[2]) / 2;
  S.cy = (e[1] + e[3]) / 2;
  viewChanged();
}

let hashTimer = 0;
function viewChanged() {
  requestDraw();
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    history.replaceState(null, '', `#x=${Math.round(S.cx)}&y=${Math.round(S.cy)}&scale=${+S.scale.toPrecision(6)}` +
      (S.pinned !== null ? `&gen=${S.pinned}` : '') + (S.compare !== null ? `&cmp=${S.compare}` : ''));
  }, 250);
}

// generationsFromHash reads gen= (the kept generation shown) and cmp= (the
// one the overlay compares it with) of the page's address.
function generationsFromHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const num = (k) => { const n = Number(p.get(k)); return p.has(k) && Number.isSafeInteger(n) && n > 0 ? n : null; };
  S.pinned = num('gen');
  S.compare = num('cmp');
}

// genQuery is the query naming the generation shown, for the API: none
// for the live one.
function genQuery(sep) { return S.pinned !== null ? `${sep}gen=${S.pinned}` : ''; }

// viewFromHash reads #x=..&y=..&scale=.. and reports whether it held a view.
function viewFromHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const x = parseFloat(p.get('x')), y = parseFloat(p.get('y')), scale = parseFloat(p.get('scale'));
  if (!Number.isFinite(x) || !Number.isFinite(y)) return false;
  S.cx = x;
  S.cy = y;
  if (Number.isFinite(scale) && scale > 0) S.scale = clampScale(scale);
  return true;
}

// --- tiles ----------------------------------------------------------------

function tileRect(t) {
  const span = TILE << t.z;
  return [t.x * span, t.y * span, (t.x + 1) * span, (t.y + 1) * span];
}

function tileFor(z, x, y) {
  const key = `${z}/${x}/${y}`;
  let t = S.tiles.get(key);
  if (!t) {
    t = { key, z, x, y, img: null, ok: false, ver: S.generation, pending: null, used: 0 };
    S.tiles.set(key, t);
    loadTile(t);
  }
  t.used = S.frame;
  return t;
}

// loadTile asks for a tile's current version; the image shown stays until
// the new one has loaded.
function loadTile(t) {
  const img = new Image();
  t.pending = img;
  img.onload = () => {
    if (t.pending !== img) return;
    t.img = img;
    t.ok = true;
    t.pending = null;
    requestDraw();
  };
  img.onerror = () => { if (t.pending === img) t.pending = null; };
  img.src = `api/tiles/${t.z}/${t.x}/${t.y}.png?g=${t.ver}${genQuery('&')}`;
  S.stats.tileLoads++;
}

S.pendingTiles = () => { let n = 0; for (const t of S.tiles.values()) if (t.pending) n++; return n; };

function overlaps(a, b) { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]; }

// invalidate reloads the tiles a new generation changed: those on screen at
// once, the others when they are next needed.
function invalidate(generation, all, rects) {
  for (const [key, t] of S.tiles) {
    const r = tileRect(t);
    if (!all && !rects.some((c) => overlaps(r, c))) continue;
    t.ver = generation;
    if (t.used === S.frame) {
      loadTile(t);
      S.stats.refetched.push({ key, generation, rect: r });
      if (S.stats.refetched.length > 5000) S.stats.refetched.splice(0, 1000);
    } else {
      S.tiles.delete(key);
    }
  }
}

function evictTiles() {
  if (S.tiles.size <= 600) return;
  const old = [...S.tiles.values()].filter((t) => t.used !== S.frame).sort((a, b) => a.used - b.used);
  for (const t of old.slice(0, S.tiles.size - 500)) S.tiles.delete(t.key);
}

// --- drawing ---------------------------------------------------------------

let drawQueued = false;
function requestDraw() {
  if (!drawQueued) {
    drawQueued = true;
    requestAnimationFrame(draw);
  }
}

function resize() {
  const dpr = window.devicePixelRatio || 1;
  const [w, h] = size();
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  requestDraw();
}

function draw() {
  drawQueued = false;
  const dpr = window.devicePixelRatio || 1;
  const [w, h] = size();
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#2a2e35';
  ctx.fillRect(0, 0, w, h);
  if (!S.world) return;
  S.frame++;
  const z = level();
  const span = TILE << z;
  const [wx0, wy0] = toWorld(0, 0);
  const [wx1, wy1] = toWorld(w, h);
  const e = S.world.extent;
  const x0 = Math.floor(Math.max(wx0, e[0]) / span), x1 = Math.floor((Math.min(wx1, e[2]) - 1) / span);
  const y0 = Math.floor(Math.max(wy0, e[1]) / span), y1 = Math.floor((Math.min(wy1, e[3]) - 1) / span);
  ctx.imageSmoothingEnabled = S.scale < 1;
  for (let ty = y0; ty <= y1; ty++) {
    for (let tx = x0; tx <= x1; tx++) {
      const t = tileFor(z, tx, ty);
      const [sx0, sy0] = toScreen(tx * span, ty * span).map(Math.round);
      const [sx1, sy1] = toScreen((tx + 1) * span, (ty + 1) * span).map(Math.round);
      if (t.ok) {
        ctx.drawImage(t.img, sx0, sy0, sx1 - sx0, sy1 - sy0);
        continue;
      }
      // Until it loads: the coarser tile's quarter, if at hand.
      const p = S.tiles.get(`${z + 1}/${Math.floor(tx / 2)}/${Math.floor(ty / 2)}`);
      if (p && p.ok) {
        const half = TILE / 2;
        ctx.drawImage(p.img, (tx - 2 * p.x) * half, (ty - 2 * p.y) * half, half, half, sx0, sy0, sx1 - sx0, sy1 - sy0);
      }
    }
  }
  const [ex0, ey0] = toScreen(e[0], e[1]);
  const [ex1, ey1] = toScreen(e[2], e[3]);
  ctx.strokeStyle = 'rgba(255,255,255,0.35)';
  ctx.lineWidth = 1;
  ctx.strokeRect(Math.round(ex0) - 0.5, Math.round(ey0) - 0.5, Math.round(ex1 - ex0) + 1, Math.round(ey1 - ey0) + 1);
  if (S.showGrid) drawChunks(w, h);
  if (S.diff) drawDiff(w, h);
  if (S.showEntities) drawEntities(w, h);
  drawSelection();
  evictTiles();
}

// drawDiff tints the chunks the shown generation stores differently from
// the one compared with: a translucent fill and an outline inside each.
function drawDiff(w, h) {
  const cs = S.world.chunk_size;
  ctx.lineWidth = 2;
  for (const [key, kind] of S.diff.cells) {
    const [cx, cy] = key.split(',').map(Number);
    const [x0, y0] = toScreen(cx * cs, cy * cs).map(Math.round);
    const [x1, y1] = toScreen((cx + 1) * cs, (cy + 1) * cs).map(Math.round);
    if (x1 < 0 || y1 < 0 || x0 > w || y0 > h) continue;
    ctx.fillStyle = `rgba(${DIFF[kind]},0.35)`;
    ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
    if (x1 - x0 >= 6) {
      ctx.strokeStyle = `rgba(${DIFF[kind]},0.9)`;
      ctx.strokeRect(x0 + 1, y0 + 1, x1 - x0 - 2, y1 - y0 - 2);
    }
  }
}

function drawChunks(w, h) {
  const cs = S.world.chunk_size;
  if (cs * S.scale < 4) return;
  const [wx0, wy0] = toWorld(0, 0);
  const [wx1, wy1] = toWorld(w, h);
  ctx.lineWidth = 1;
  ctx.strokeStyle = 'rgba(0,0,0,0.25)';
  ctx.beginPath();
  for (let cx = Math.ceil(wx0 / cs); cx * cs <= wx1; cx++) {
    const x = Math.round(toScreen(cx * cs, 0)[0]) + 0.5;
    ctx.moveTo(x, 0);
    ctx.lineTo(x, h);
  }
  for (let cy = Math.ceil(wy0 / cs); cy * cs <= wy1; cy++) {
    const y = Math.round(toScreen(0, cy * cs)[1]) + 0.5;
    ctx.moveTo(0, y);
    ctx.lineTo(w, y);
  }
  ctx.stroke();
  for (const [key, c] of S.chunks) {
    const [x, y] = key.split(',').map(Number);
    if ((x + 1) * cs < wx0 || x * cs > wx1 || (y + 1) * cs < wy0 || y * cs > wy1) continue;
    const [sx0, sy0] = toScreen(x * cs, y * cs).map(Math.round);
    const [sx1, sy1] = toScreen((x + 1) * cs, (y + 1) * cs).map(Math.round);
    ctx.strokeStyle = FRAMES[c.kind] || '#ff7b72';
    ctx.strokeRect(sx0 + 1.5, sy0 + 1.5, sx1 - sx0 - 3, sy1 - sy0 - 3);
  }
}

function visibleEntities(w, h) {
  const [wx0, wy0] = toWorld(0, 0);
  const [wx1, wy1] = toWorld(w, h);
  return S.entities.filter((e) => overlaps(e.bounds, [wx0, wy0, wx1, wy1]));
}

function drawEntities(w, h) {
  const es = visibleEntities(w, h);
  ctx.lineWidth = 1;
  for (const e of es) {
    if (e.kind !== 'body') {
      // A regional entity: a diamond at its position, dashed where the
      // position is only its chunk's centre; a player: a circle.
      const [sx, sy] = toScreen(e.x, e.y).map(Math.round);
      ctx.strokeStyle = e.kind === 'player' ? PLAYER : REGIONAL;
      ctx.setLineDash(e.placed === 'chunk' ? [3, 2] : []);
      ctx.beginPath();
      if (e.kind === 'player') {
        ctx.arc(sx + 0.5, sy + 0.5, MARK, 0, 2 * Math.PI);
      } else {
        ctx.moveTo(sx + 0.5, sy - MARK + 0.5);
        ctx.lineTo(sx + MARK + 0.5, sy + 0.5);
        ctx.lineTo(sx + 0.5, sy + MARK + 0.5);
        ctx.lineTo(sx - MARK + 0.5, sy + 0.5);
        ctx.closePath();
      }
      ctx.stroke();
      ctx.setLineDash([]);
    } else {
      const [sx0, sy0] = toScreen(e.bounds[0], e.bounds[1]).map(Math.round);
      const [sx1, sy1] = toScreen(e.bounds[2], e.bounds[3]).map(Math.round);
      ctx.strokeStyle = ENTITY;
      ctx.strokeRect(sx0 + 0.5, sy0 + 0.5, Math.max(sx1 - sx0, 3), Math.max(sy1 - sy0, 3));
    }
  }
  drawLabels(w, h);
}

// --- labels ------------------------------------------------------------------
//
// Labels never overlap: those that would are merged into one label at their
// centre ("12 bodies"), which zooms in on a click. The groups are made at
// each scale in screen pixels from the world's origin, so that panning
// keeps them; the closer the zoom, the fewer entities share a label.

const LABEL_FONT = '11px ui-monospace, monospace';
const LABEL_H = 14;  // a label's height, CSS pixels
const LABEL_GAP = 2; // the least room between two labels
const LABEL_CELL = 64;
const PRIORITY = { player: 0, entity: 1, body: 2 };
const NOUN = { player: 'players', entity: 'entities', body: 'bodies' };
let labelCache = null;

// labelAnchor is where an entity's own label starts (its left end, its
// bottom), in screen pixels from the world's origin.
function labelAnchor(e) {
  if (e.kind !== 'body') return [e.x * S.scale + MARK, e.y * S.scale - MARK + 2];
  return [e.bounds[0] * S.scale, e.bounds[1] * S.scale];
}

// labelBox places a group's label: an entity's at its anchor, a cluster's
// centred on its members' anchors.
function labelBox(g, charW) {
  const tw = g.text.length * charW + 6;
  if (g.members.length === 1) return [g.sx, g.sy - LABEL_H, g.sx + tw, g.sy];
  const cx = g.sx / g.members.length, cy = g.sy / g.members.length;
  return [cx - tw / 2, cy - LABEL_H / 2, cx + tw / 2, cy + LABEL_H / 2];
}

// labelGroups groups S.entities so that no two labels overlap at the
// current scale; made once a scale.
function labelGroups() {
  if (labelCache && labelCache.scale === S.scale && labelCache.entities === S.entities) return labelCache.groups;
  ctx.font = LABEL_FONT;
  const charW = ctx.measureText('0000000000').width / 10;
  const grid = new Map();
  const cellsOf = (b, fn) => {
    for (let x = Math.floor((b[0] - LABEL_GAP) / LABEL_CELL); x <= Math.floor((b[2] + LABEL_GAP) / LABEL_CELL); x++) {
      for (let y = Math.floor((b[1] - LABEL_GAP) / LABEL_CELL); y <= Math.floor((b[3] + LABEL_GAP) / LABEL_CELL); y++) fn(`${x},${y}`);
    }
  };
  const hit = (b) => {
    let found = null;
    cellsOf(b, (k) => {
      const set = grid.get(k);
      if (found || !set) return;
      for (const o of set) {
        const ob = o.box;
        if (ob[0] < b[2] + LABEL_GAP && b[0] < ob[2] + LABEL_GAP && ob[1] < b[3] + LABEL_GAP && b[1] < ob[3] + LABEL_GAP) { found = o; return; }
      }
    });
    return found;
  };
  const groups = new Set();
  const sorted = [...S.entities].sort((a, b) => PRIORITY[a.kind] - PRIORITY[b.kind] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const e of sorted) {
    const [ax, ay] = labelAnchor(e);
    let g = { members: [e], kind: e.kind, sx: ax, sy: ay, text: e.id };
    g.box = labelBox(g, charW);
    for (let o = hit(g.box); o; o = hit(g.box)) {
      // Merge with the label it would overlap, and place the cluster anew.
      cellsOf(o.box, (k) => grid.get(k).delete(o));
      groups.delete(o);
      const [big, small] = o.members.length >= g.members.length ? [o, g] : [g, o];
      for (const m of small.members) big.members.push(m);
      const kind = o.kind === g.kind ? g.kind : 'mixed';
      g = { members: big.members, kind, sx: o.sx + g.sx, sy: o.sy + g.sy, text: `${big.members.length} ${NOUN[kind] || 'entities'}` };
      g.box = labelBox(g, charW);
    }
    cellsOf(g.box, (k) => { if (!grid.has(k)) grid.set(k, new Set()); grid.get(k).add(g); });
    groups.add(g);
  }
  labelCache = { scale: S.scale, entities: S.entities, groups: [...groups] };
  return labelCache.groups;
}

// drawLabels draws the labels on screen; S.labels lists them, each with
// its box in CSS pixels of the canvas and the entities it stands for
// (members).
function drawLabels(w, h) {
  const [ox, oy] = toScreen(0, 0);
  ctx.font = LABEL_FONT;
  ctx.textBaseline = 'bottom';
  const shown = [];
  for (const g of labelGroups()) {
    const b = [Math.round(g.box[0] + ox), Math.round(g.box[1] + oy), Math.round(g.box[2] + ox), Math.round(g.box[3] + oy)];
    if (b[2] < 0 || b[3] < 0 || b[0] > w || b[1] > h) continue;
    const one = g.members.length === 1;
    const kind = one ? g.members[0].kind : 'cluster';
    ctx.fillStyle = one ? 'rgba(20,20,24,0.75)' : 'rgba(20,20,24,0.9)';
    ctx.fillRect(b[0], b[1], b[2] - b[0], b[3] - b[1]);
    if (!one) {
      ctx.strokeStyle = SELECTED;
      ctx.lineWidth = 1;
      ctx.strokeRect(b[0] + 0.5, b[1] + 0.5, b[2] - b[0] - 1, b[3] - b[1] - 1);
    }
    ctx.fillStyle = kind === 'entity' ? REGIONAL : kind === 'player' ? PLAYER : kind === 'body' ? ENTITY : SELECTED;
    ctx.fillText(g.text, b[0] + 3, b[3] - 1);
    shown.push({ box: b, text: g.text, count: g.members.length, members: g.members });
  }
  S.labels = shown;
}
S.labelGroups = labelGroups;

// labelAt returns the label drawn at a point of the canvas, if any.
function labelAt(sx, sy) {
  return (S.labels || []).find((l) => sx >= l.box[0] && sx < l.box[2] && sy >= l.box[1] && sy < l.box[3]) || null;
}

// zoomToCluster shows the entities a cluster's label stands for: centred
// on them, at least twice as close, as close as fits them on screen.
function zoomToCluster(l) {
  const ms = l.members;
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const e of ms) {
    x0 = Math.min(x0, e.bounds[0]);
    y0 = Math.min(y0, e.bounds[1]);
    x1 = Math.max(x1, e.bounds[2]);
    y1 = Math.max(y1, e.bounds[3]);
  }
  const [w, h] = size();
  S.cx = (x0 + x1) / 2;
  S.cy = (y0 + y1) / 2;
  S.scale = clampScale(Math.max(2 * S.scale, Math.min(w / Math.max(x1 - x0, 1), h / Math.max(y1 - y0, 1)) * 0.6));
  viewChanged();
}

function drawSelection() {
  const sel = S.selection;
  if (!sel) return;
  let r = null;
  if (sel.type === 'chunk') {
    const cs = S.world.chunk_size;
    r = [sel.x * cs, sel.y * cs, (sel.x + 1) * cs, (sel.y + 1) * cs];
  } else {
    const e = S.entities.find((e) => e.kind === sel.kind && e.id === sel.id);
    if (e && e.kind !== 'body') {
      const [sx, sy] = toScreen(e.x, e.y).map(Math.round);
      ctx.strokeStyle = SELECTED;
      ctx.lineWidth = 2;
      ctx.strokeRect(sx - MARK - 2, sy - MARK - 2, 2 * MARK + 4, 2 * MARK + 4);
      return;
    }
    if (e) r = e.bounds;
  }
  if (!r) return;
  const [sx0, sy0] = toScreen(r[0], r[1]).map(Math.round);
  const [sx1, sy1] = toScreen(r[2], r[3]).map(Math.round);
  ctx.strokeStyle = SELECTED;
  ctx.lineWidth = 2;
  ctx.strokeRect(sx0 + 1, sy0 + 1, Math.max(sx1 - sx0 - 2, 4), Math.max(sy1 - sy0 - 2, 4));
}

// --- input -------------------------------------------------------------------

const pointers = new Map();
let gesture = null;

function startGesture(fromPinch) {
  const p = [...pointers.values()];
  if (p.length === 1) return { kind: 'pan', sx: p[0].x, sy: p[0].y, cx: S.cx, cy: S.cy, moved: fromPinch };
  const [a, b] = p;
  const [wx, wy] = toWorld((a.x + b.x) / 2, (a.y + b.y) / 2);
  return { kind: 'pinch', d: Math.hypot(a.x - b.x, a.y - b.y) || 1, scale: S.scale, wx, wy };
}

canvas.addEventListener('pointerdown', (e) => {
  canvas.setPointerCapture(e.pointerId);
  pointers.set(e.pointerId, { x: e.offsetX, y: e.offsetY });
  gesture = startGesture(gesture && gesture.kind === 'pinch');
  canvas.classList.add('dragging');
});

canvas.addEventListener('pointermove', (e) => {
  showCursor(e.offsetX, e.offsetY);
  if (!pointers.has(e.pointerId) || !gesture) return;
  pointers.set(e.pointerId, { x: e.offsetX, y: e.offsetY });
  const [w, h] = size();
  if (gesture.kind === 'pan') {
    const p = pointers.values().next().value;
    const dx = p.x - gesture.sx, dy = p.y - gesture.sy;
    if (Math.hypot(dx, dy) > 4) gesture.moved = true;
    if (!gesture.moved) return;
    S.cx = gesture.cx - dx / S.scale;
    S.cy = gesture.cy - dy / S.scale;
  } else {
    const [a, b] = [...pointers.values()];
    S.scale = clampScale(gesture.scale * Math.hypot(a.x - b.x, a.y - b.y) / gesture.d);
    S.cx = gesture.wx - ((a.x + b.x) / 2 - w / 2) / S.scale;
    S.cy = gesture.wy - ((a.y + b.y) / 2 - h / 2) / S.scale;
  }
  viewChanged();
});

function pointerEnd(e) {
  if (!pointers.has(e.pointerId)) return;
  const g = gesture;
  pointers.delete(e.pointerId);
  if (e.type === 'pointerup' && g && g.kind === 'pan' && !g.moved) click(e.offsetX, e.offsetY);
  gesture = pointers.size ? startGesture(true) : null;
  if (!pointers.size) canvas.classList.remove('dragging');
}
canvas.addEventListener('pointerup', pointerEnd);
canvas.addEventListener('pointercancel', pointerEnd);

canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  const dy = e.deltaMode === 1 ? e.deltaY * 40 : e.deltaY;
  zoomAt(e.offsetX, e.offsetY, Math.pow(2, -dy / 240));
}, { passive: false });

window.addEventListener('keydown', (e) => {
  if (!S.world || e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
  const [w, h] = size();
  const step = 100 / S.scale;
  switch (e.key) {
    case '+': case '=': zoomAt(w / 2, h / 2, 2); break;
    case '-': zoomAt(w / 2, h / 2, 0.5); break;
    case '0': fit(); break;
    case 'Escape': select(null); break;
    case 'ArrowLeft': S.cx -= step; viewChanged(); break;
    case 'ArrowRight': S.cx += step; viewChanged(); break;
    case 'ArrowUp': S.cy -= step; viewChanged(); break;
    case 'ArrowDown': S.cy += step; viewChanged(); break;
    default: return;
  }
  e.preventDefault();
});

$('zoom-in').addEventListener('click', () => { const [w, h] = size(); zoomAt(w / 2, h / 2, 2); });
$('zoom-out').addEventListener('click', () => { const [w, h] = size(); zoomAt(w / 2, h / 2, 0.5); });
$('fit').addEventListener('click', fit);
$('show-grid').addEventListener('change', (e) => { S.showGrid = e.target.checked; requestDraw(); });
$('show-entities').addEventListener('change', (e) => { S.showEntities = e.target.checked; requestDraw(); });
$('check-again').addEventListener('click', () => loadCheck(true));
window.addEventListener('resize', resize);

function showCursor(sx, sy) {
  if (!S.world) return;
  const [wx, wy] = toWorld(sx, sy).map(Math.floor);
  const cs = S.world.chunk_size;
  const zoom = S.scale >= 1 ? `${+S.scale.toPrecision(3)}:1` : `1:${+(1 / S.scale).toPrecision(3)}`;
  $('cursor').textContent = `${wx}, ${wy} · chunk (${Math.floor(wx / cs)}, ${Math.floor(wy / cs)}) · ${zoom}`;
}

// click selects the entity under the pointer, else the chunk.
function click(sx, sy) {
  const [wx, wy] = toWorld(sx, sy);
  if (S.showEntities) {
    const m = 3 / S.scale;
    let best = null, bestD = Infinity;
    for (const e of S.entities) {
      const d = Math.hypot(wx - e.x, wy - e.y);
      if (e.kind !== 'body') {
        // Its marker keeps its size on the screen.
        if (d * S.scale > MARK + 3) continue;
      } else {
        const b = e.bounds;
        if (wx < b[0] - m || wx >= b[2] + m || wy < b[1] - m || wy >= b[3] + m) continue;
      }
      if (d < bestD) { best = e; bestD = d; }
    }
    // A cluster's label, drawn over its entities, zooms in on them.
    const l = labelAt(sx, sy);
    if (l && l.count > 1) return zoomToCluster(l);
    if (best) return select({ type: 'entity', kind: best.kind, id: best.id });
  }
  const cs = S.world.chunk_size;
  select({ type: 'chunk', x: Math.floor(wx / cs), y: Math.floor(wy / cs) });
}

// --- panel -------------------------------------------------------------------

function select(sel) {
  S.selection = sel;
  requestDraw();
  if (sel) showSelection();
  else $('selection').replaceChildren(el('p', { class: 'hint' }, 'Click a chunk or an entity on the map.'));
}

let selectionSeq = 0;
async function showSelection() {
  const sel = S.selection;
  if (!sel) return;
  const seq = ++selectionSeq;
  const box = $('selection');
  let node;
  try {
    if (sel.type === 'chunk') {
      node = chunkInfo(await api(`api/chunk?x=${sel.x}&y=${sel.y}${genQuery('&')}`));
    } else {
      node = entityInfo(await api(`api/entity?kind=${encodeURIComponent(sel.kind)}&id=${encodeURIComponent(sel.id)}${genQuery('&')}`));
    }
  } catch (err) {
    node = el('p', { class: 'error' }, err.message);
  }
  if (seq !== selectionSeq) return;
  box.replaceChildren(node);
  S.stats.selections++;
}

function record(r) {
  if (!r) return undefined;
  return `offset ${r.offset}, ${r.length} bytes (${r.stored} stored, ${r.raw} raw${r.compressed ? ', LZ4' : ''})`;
}

// entityLinks lists ids that select the entities of a kind on a click.
function entityLinks(kind, ids) {
  return ids ? el('span', null, ...ids.flatMap((id, i) => [i ? ', ' : '',
    el('a', { href: '#', onclick: (e) => { e.preventDefault(); select({ type: 'entity', kind, id }); } }, id)])) : undefined;
}

function chunkInfo(c) {
  const ids = entityLinks('body', c.body_ids);
  return el('div', { 'data-chunk': `${c.x},${c.y}` },
    el('h3', null, `chunk (${c.x}, ${c.y})`),
    dl([
      ['kind', c.kind],
      ['drawn', c.drawn],
      ['version', c.version],
      ['record', record(c.record)],
      ['changed pixels', c.changed_pixels],
      ['changed in', c.changed_in ? `generation ${c.changed_in}` : undefined],
      ['bodies', c.bodies],
      ['body ids', ids],
      ['entities', c.entities],
      ['entity ids', entityLinks('entity', c.entity_ids)],
      ['body record', record(c.body_record)],
      ['generation', c.generation],
    ]),
    c.error ? el('p', { class: 'error' }, c.error) : null);
}

const PLACED = {
  registered: 'as the game registers it',
  fields: 'X and Y of',
  chunk: 'not found: the centre of its chunk',
};

function entityInfo(e) {
  const marker = e.kind !== 'body'; // a regional entity or a player, drawn as a marker
  const title = { body: 'pixel body', entity: 'regional entity', player: 'player' }[e.kind] || e.kind;
  return el('div', { 'data-entity': `${e.kind}:${e.id}` },
    el('h3', null, `${title} ${e.id}`),
    dl([
      ['position', `${e.x.toFixed(1)}, ${e.y.toFixed(1)}`],
      ['placed', marker ? `${PLACED[e.placed] || e.placed}${e.placed_by ? ' ' + shortType(e.placed_by) : ''}` : undefined],
      ['chunk', `(${e.chunk[0]}, ${e.chunk[1]})`],
      ['bounds', marker ? undefined : e.bounds.join(', ')],
      ['generation', e.generation],
    ]),
    el('p', { class: 'hint' }, e.kind === 'player'
      ? 'the entities of its record, as the JSON export lists them ("entity": an index in the record):'
      : marker
        ? 'components, as the JSON export lists them ("entity": its index in its chunk\'s section):'
        : 'components, as arksave export --json lists them:'),
    el('pre', null, JSON.stringify(e.components, null, 2)),
    e.section ? el('p', { class: 'hint' }, 'its other components, its entity in the chunk\'s section:') : null,
    e.section ? el('pre', null, JSON.stringify(e.section, null, 2)) : null,
    e.refs && e.refs.length ? el('p', { class: 'hint' }, 'references: an entity value [r, 0] is entry r of',
      el('pre', null, e.refs.map((r, i) => `${i + 1}: ${r[0]} ${JSON.stringify(r[1])}`).join('\n'))) : null);
}

// shortType drops the package path of a type's name.
function shortType(name) {
  const i = name.split('[')[0].lastIndexOf('/');
  return i >= 0 ? name.slice(i + 1) : name;
}

function showHeader() {
  const w = S.world;
  document.title = `${w.save} · generation ${S.generation} · arksave map`;
  $('save-name').textContent = w.save;
  $('generation').textContent = S.generation;
  $('modified').textContent = `saved ${when(w.modified)}` +
    (S.pinned !== null ? ` · a kept generation: the live one is ${S.latest}` : '');
  // Without the game's generator only stored chunks have pixels to draw.
  $('generator-notice').hidden = w.generator;
  showSaves(w);
  const err = $('world-error');
  const msgs = [w.error, ...(w.warnings || [])].filter(Boolean);
  err.hidden = msgs.length === 0;
  err.textContent = msgs.join('; ');
}

// showSaves fills the switcher with the saves the server serves (each at
// /w/NAME/), when it serves several; a choice opens that save's page.
function showSaves(w) {
  const saves = w.saves || [];
  $('save-switch').hidden = saves.length < 2;
  const sel = $('saves');
  if (saves.length < 2 || sel.options.length === saves.length) return;
  sel.replaceChildren(...saves.map((n) => el('option', { value: n }, n)));
  sel.value = w.save;
}

$('saves').addEventListener('change', (e) => {
  // The pages of the saves are siblings: /w/NAME/.
  location.assign(`../${encodeURIComponent(e.target.value)}/`);
});

// --- go to and find --------------------------------------------------------------

function searchSays(text, error) {
  const p = $('search-result');
  p.textContent = text;
  p.className = error ? 'error' : '';
}

// centreOn centres the map on a world point, at least as close as a chunk
// a few dozen pixels wide.
function centreOn(wx, wy) {
  S.cx = wx;
  S.cy = wy;
  S.scale = clampScale(Math.max(S.scale, 32 / S.world.chunk_size));
  viewChanged();
}

// goTo reads "x,y" (world pixels) or "chunk x,y" and centres the map
// there; a chunk is selected too.
function goTo(text) {
  const m = /^\s*(chunk\s+|c\s+)?(-?\d+(?:\.\d+)?)\s*[, ]\s*(-?\d+(?:\.\d+)?)\s*$/i.exec(text);
  if (!m || !S.world) {
    searchSays(`"${text}": want x,y in world pixels (e.g. 120,-40) or chunk x,y (e.g. chunk 3,-1)`, true);
    return;
  }
  const x = Number(m[2]), y = Number(m[3]);
  if (m[1]) {
    if (!Number.isInteger(x) || !Number.isInteger(y)) {
      searchSays(`"${text}": a chunk's coordinates are whole numbers`, true);
      return;
    }
    const cs = S.world.chunk_size;
    centreOn((x + 0.5) * cs, (y + 0.5) * cs);
    select({ type: 'chunk', x, y });
    searchSays(`chunk (${x}, ${y}): world pixels ${x * cs}, ${y * cs} to ${(x + 1) * cs - 1}, ${(y + 1) * cs - 1}`);
    return;
  }
  centreOn(x, y);
  const cs = S.world.chunk_size;
  searchSays(`${x}, ${y}: in chunk (${Math.floor(x / cs)}, ${Math.floor(y / cs)})`);
}

// find looks an entity up by its id ("kind:id" picks the kind): among the
// entities on the map, else by the server (/api/entity), and centres the
// map on it with its panel open.
async function find(text) {
  let q = text.trim(), kinds = ['body', 'entity', 'player'];
  const m = /^(body|entity|player):(.*)$/.exec(q);
  if (m) [kinds, q] = [[m[1]], m[2]];
  if (!q) {
    searchSays('give an id: a pixel body\'s, a regional entity\'s or a player\'s (kind:id picks the kind)', true);
    return;
  }
  let e = S.entities.find((x) => x.id === q && kinds.includes(x.kind));
  if (!e) {
    for (const kind of kinds) {
      if (kind !== 'player' && !/^\d+$/.test(q)) continue;
      try {
        e = await api(`api/entity?kind=${kind}&id=${encodeURIComponent(q)}${genQuery('&')}`);
        break;
      } catch (err) {
        // Not of this kind: the next.
      }
    }
  }
  if (!e) {
    searchSays(`no ${kinds.length === 1 ? kinds[0] : 'pixel body, regional entity or player'} with id "${q}" in generation ${S.generation}`, true);
    return;
  }
  centreOn(e.x, e.y);
  select({ type: 'entity', kind: e.kind, id: e.id });
  const title = { body: 'pixel body', entity: 'regional entity', player: 'player' }[e.kind];
  searchSays(`${title} ${e.id} at ${e.x.toFixed(1)}, ${e.y.toFixed(1)}`);
}

$('goto-form').addEventListener('submit', (e) => { e.preventDefault(); goTo($('goto').value); });
$('find-form').addEventListener('submit', (e) => { e.preventDefault(); find($('find').value); });

// loadWorld reads what the map shows. The live generation the page shows
// moves on with the events only, each of which says what to redraw.
async function loadWorld() {
  const shown = S.shown;
  const w = await api('api/world' + genQuery('?'));
  if (shown !== S.shown || S.pinned === null && S.world && w.generation < S.world.generation) return;
  S.world = w;
  S.latest = Math.max(S.latest, w.live);
  if (!S.generation) S.generation = w.generation;
  S.chunks = new Map(w.chunks.map((c) => [`${c.x},${c.y}`, c]));
  showHeader();
  requestDraw();
}

async function loadEntities() {
  const shown = S.shown;
  const r = await api('api/entities' + genQuery('?'));
  if (shown !== S.shown || r.generation < S.generation) return;
  S.entities = r.entities;
  requestDraw();
}

let generationsTimer = 0, generationsAt = 0;
function loadGenerationsSoon() {
  // At most one every two seconds while a game saves every second.
  if (generationsTimer) return;
  const wait = Math.max(0, generationsAt + 2000 - Date.now());
  generationsTimer = setTimeout(() => { generationsTimer = 0; loadGenerations(); }, wait);
}

async function loadGenerations() {
  generationsAt = Date.now();
  let d;
  try {
    d = await api('api/generations');
  } catch (err) {
    $('generations').replaceChildren(el('p', { class: 'error' }, err.message));
    return;
  }
  showKept(d.generations);
  const rows = d.generations.map((g) => el('tr', { class: g.current ? 'current' : '', title: `${g.world}, ${g.store} generation ${g.store_generation}` },
    el('td', null, g.generation), el('td', null, g.current ? 'current' : 'backup'),
    el('td', null, new Date(g.modified).toLocaleTimeString()), el('td', null, bytes(g.world_bytes)),
    el('td', null, g.store_generation), el('td', null, g.chunks)));
  $('generations').replaceChildren(
    d.manifest_error ? el('p', { class: 'error' }, d.manifest_error) : '',
    el('table', null, el('tr', null, ...['gen', '', 'saved', 'world', 'store gen', 'chunks'].map((h) => el('th', null, h))), ...rows),
    el('p', { class: 'hint' }, `${bytes(d.bytes)} in the save directory`));
  $('stores').replaceChildren(...d.stores.map((s) => el('div', null, el('h3', null, s.name), dl([
    ['generation', s.generation],
    ['game', `chunks of ${s.chunk_size} px, tiles of ${s.tile_size} px, seed ${s.seed}, generator version ${s.generator_version}`],
    ['chunks', `${s.chunks} stored: ${s.full} full, ${s.delta} delta, ${s.empty} empty`],
    ['bodies', `${s.bodies} in ${s.body_blocks} chunks`],
    ['regional entities', `${s.entities} in ${s.sections} sections (bodies' own included)`],
    ['file', `${bytes(s.file_bytes)}: records ${bytes(s.record_bytes)}, page table ${bytes(s.table_bytes)} (${s.journal_segments} journal segments), dead ${bytes(s.dead_bytes)} (${(100 * s.dead_ratio).toFixed(1)}%)`],
  ]), s.error ? el('p', { class: 'error' }, s.error) : '')));
  const wf = d.world;
  if (!wf) {
    $('world-file').replaceChildren(el('p', { class: 'error' }, d.world_error || 'no world file'));
    return;
  }
  $('world-file').replaceChildren(el('h3', null, wf.file), dl([
    ['format', wf.format],
    ['written', when(wf.written)],
    ['entities', `${wf.entities} in ${wf.archetypes} tables`],
    ['types', wf.types],
    ['resources', wf.resources.join(', ') || 'none'],
    ['checksum', wf.checksum],
  ]), el('table', null, el('tr', null, el('th', null, 'entities'), el('th', null, 'components'), el('th', null, 'bytes')),
    ...wf.tables.map((t) => el('tr', null, el('td', null, t.entities), el('td', null, t.components.join(', ') || '(none)'), el('td', null, bytes(t.bytes))))),
  wf.error ? el('p', { class: 'error' }, wf.error) : '');
}

async function loadCheck(fresh) {
  const box = $('check');
  box.replaceChildren(el('p', { class: 'hint' }, 'checking…'));
  let c;
  try {
    c = await api(`api/check${fresh ? '?fresh=1' : ''}`);
  } catch (err) {
    box.replaceChildren(el('p', { class: 'error' }, err.message));
    return;
  }
  const what = `generation ${c.generation} and ${c.backups_checked} backups: ${c.world_files_checked} world files and ${c.store_generations_checked} chunk store generations checked`;
  const head = c.ok ? el('p', { class: 'ok' }, `no problems found (${what})`)
    : el('p', { class: 'error' }, `${c.problems.length} problem${c.problems.length === 1 ? '' : 's'} found (${what})`);
  const list = el('ul', null, ...c.problems.map((p) => el('li', null,
    `${p.file}${p.offset !== undefined ? ` at offset ${p.offset}` : ''}${p.chunk ? `, chunk (${p.chunk[0]}, ${p.chunk[1]})` : ''}: ${p.error}`)));
  box.replaceChildren(head, c.problems.length ? list : '',
    el('p', { class: 'hint' }, `checked ${when(c.checked)} in ${c.took_ms.toFixed(0)} ms`), el('p', { id: 'check-stale', class: 'hint' }));
  checked = c.generation;
  showCheckStale();
}

let checked = 0;
function showCheckStale() {
  const p = $('check-stale');
  if (p) p.textContent = checked && checked !== S.latest ? `the save's committed generation is now ${S.latest}: check again to check it` : '';
}

// --- live ----------------------------------------------------------------------

function setLive(on) {
  S.live = on;
  const l = $('live');
  l.textContent = on ? 'live' : 'reconnecting';
  l.className = on ? 'live-on' : 'live-off';
}

async function onGeneration(ev) {
  S.stats.events.push(ev);
  if (S.stats.events.length > 200) S.stats.events.shift();
  if (ev.generation > S.latest) {
    S.latest = ev.generation;
    showCheckStale();
    loadGenerationsSoon();
  }
  if (S.pinned !== null || ev.generation <= S.generation) return; // a kept generation stays as it is
  const all = ev.all || ev.previous !== S.generation;
  S.generation = ev.generation;
  invalidate(ev.generation, all, ev.changed || []);
  $('generation').textContent = S.generation;
  showCheckStale();
  requestDraw();
  await loadWorld();
  if (ev.entities || all) await loadEntities();
  if (S.compare !== null) loadDiff();
  showSelection();
  loadGenerationsSoon();
}

// --- history -------------------------------------------------------------------

// showKept fills the time slider and the compare list with the kept
// generations (/api/generations lists them newest first).
function showKept(gens) {
  S.kept = gens.map((g) => ({ generation: g.generation, modified: g.modified, current: g.current })).reverse();
  const slider = $('time');
  slider.max = Math.max(0, S.kept.length - 1);
  slider.disabled = S.kept.length < 2;
  const sel = $('compare');
  sel.replaceChildren(el('option', { value: '' }, 'nothing'), ...S.kept.slice().reverse().map((g) =>
    el('option', { value: g.generation }, `generation ${g.generation}${g.current ? ' (live)' : ''} · ${new Date(g.modified).toLocaleTimeString()}`)));
  if (S.compare !== null && !S.kept.some((g) => g.generation === S.compare)) {
    sel.append(el('option', { value: S.compare }, `generation ${S.compare} (no longer kept)`));
  }
  sel.value = S.compare === null ? '' : String(S.compare);
  showTime();
  if (S.world) showHeader();
}

// showTime puts the slider where the shown generation is and labels it.
function showTime() {
  const slider = $('time');
  const label = $('time-label');
  if (S.pinned === null) {
    slider.value = slider.max;
    label.textContent = `live: generation ${S.latest || S.generation}, following each save`;
    return;
  }
  const i = S.kept.findIndex((g) => g.generation === S.pinned);
  if (i >= 0) slider.value = i;
  const g = S.kept[i];
  label.textContent = g ? `generation ${g.generation}, saved ${when(g.modified)} (live: ${S.latest})`
    : `generation ${S.pinned}${S.kept.length ? ', no longer kept' : ''} (live: ${S.latest})`;
}

// showGeneration shows kept generation g, or the live one for null (or
// for the live generation's number): its tiles, entities and selection.
async function showGeneration(g) {
  if (g === S.latest) g = null;
  if (g === S.pinned) return;
  S.pinned = g;
  S.shown++;
  S.generation = g === null ? S.latest : g;
  S.tiles = new Map();
  $('generation').textContent = S.generation;
  showTime();
  viewChanged();
  try {
    await Promise.all([loadWorld(), loadEntities(), S.compare !== null ? loadDiff() : null]);
  } catch (err) {
    $('world-error').hidden = false;
    $('world-error').textContent = err.message;
  }
  showSelection();
}

// setCompare turns the diff overlay on against generation g, off for null.
async function setCompare(g) {
  S.compare = g;
  viewChanged();
  if (g === null) {
    S.diff = null;
    requestDraw();
    return;
  }
  await loadDiff();
}

let diffSeq = 0;
async function loadDiff() {
  const seq = ++diffSeq;
  let d;
  try {
    d = await api(`api/diff?a=${S.compare}${S.pinned !== null ? `&b=${S.pinned}` : ''}`);
  } catch (err) {
    if (seq === diffSeq) $('diff-summary').textContent = err.message;
    return;
  }
  if (seq !== diffSeq) return;
  const cells = new Map();
  for (const kind of ['changed', 'added', 'removed']) for (const [x, y] of d[kind]) cells.set(`${x},${y}`, kind);
  S.diff = { a: d.a, b: d.b, cells };
  $('diff-summary').textContent = `generation ${d.b} against ${d.a}: ${d.changed.length} chunks changed, ${d.added.length} added, ${d.removed.length} removed${d.truncated ? ' (list cut)' : ''}`;
  requestDraw();
}

$('time').addEventListener('input', (e) => {
  const g = S.kept[+e.target.value];
  if (g) showGeneration(g.current ? null : g.generation);
});
$('compare').addEventListener('change', (e) => setCompare(e.target.value === '' ? null : Number(e.target.value)));

function connect() {
  const es = new EventSource('api/events');
  es.addEventListener('hello', (e) => {
    setLive(true);
    const g = JSON.parse(e.data).generation;
    if (g !== S.latest || S.pinned === null && g !== S.generation) onGeneration({ generation: g, previous: -1, all: true, entities: true, changed: [] });
  });
  es.addEventListener('generation', (e) => onGeneration(parseJSON(e.data)));
  es.addEventListener('error', () => setLive(false));
}

async function start() {
  // A reload keeps the checkboxes as they were.
  S.showGrid = $('show-grid').checked;
  S.showEntities = $('show-entities').checked;
  resize();
  generationsFromHash();
  try {
    try {
      await loadWorld();
    } catch (err) {
      if (S.pinned === null) throw err;
      // The generation the link names is no longer kept: the live one.
      S.pinned = null;
      S.generation = 0;
      await loadWorld();
      $('world-error').hidden = false;
      $('world-error').textContent = err.message;
    }
  } catch (err) {
    $('world-error').hidden = false;
    $('world-error').textContent = err.message;
    return;
  }
  if (!viewFromHash()) fit();
  requestDraw();
  connect();
  await Promise.all([loadEntities(), loadGenerations(), loadCheck(false), S.compare !== null ? loadDiff() : null]);
  S.ready = true;
}

start();
