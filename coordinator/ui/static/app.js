// rackfence fleet dashboard. Plain JavaScript, no build step, no library.
//
// Data: GET /v1/racks first (every rack with its hosts counted by state and
// status: the page paints the fleet from these), then every host as a
// summary, page by page (GET /v1/hosts?view=summary&limit=&continue=, one
// consistent list at one Raft index), then the fleet watch (GET
// /v1/watch?index=N without rack=) from that list's index, which answers
// only what changed. The page keeps one small record per host (slim), never
// whole hosts; the host panel reads its one whole host when opened.
// Drawing: a virtual grid: only racks near the viewport have a <section>
// (recycled as they scroll out) with one <canvas> of host tiles, drawn only
// when it changed, so the DOM stays the same size whatever the rack count.
// Auth: the token the user enters lives in sessionStorage and travels only
// in the Authorization header.
'use strict';
(() => {
  const TOKEN_KEY = 'rackfence.token';
  const WATCH_TIMEOUT = '25s';
  // Hosts per summary page: the first small, so hosts show early; the rest
  // at the API's largest (5,000), fewer round trips.
  const FIRST_PAGE_SIZE = 2000, PAGE_SIZE = 5000;

  // Tile colours: fill = provisioning state, stripe/border = operational status.
  const PROV_COLOR = {
    '': '#d5dae1', 'unmanaged': '#b8bec7', 'registering': '#b3dcf7', 'inspecting': '#8cc8f0',
    'preparing': '#cdb8ec', 'available': '#f4e4a1', 'provisioning': '#6aaee8', 'provisioned': '#48a868', 'servicing': '#9f7fd6',
    'externally-provisioned': '#2b8a9e', 'deprovisioning': '#f3bd80',
    'powering-off-before-delete': '#eaa06c', 'deleting': '#dd865d',
  };
  const OP_COLOR = {
    '': '#a0aec0', 'ok': '#2f855a', 'discovered': '#3182ce', 'error': '#e53e3e', 'delayed': '#d69e2e',
    'detached': '#6b46c1', 'maintenance': '#dd6b20', 'removing': '#9b2c2c', 'awaiting-handoff': '#d53f8c',
  };
  const INTENT_LETTER = { detach: 'D', drain: 'N', resume: 'R', reboot: 'B', inspect: 'I', service: 'S', powerOff: 'O' };
  // INTENT_KINDS are the one-intent kinds; powerOff holds are by requester.
  const INTENT_KINDS = ['detach', 'drain', 'resume', 'reboot', 'inspect', 'service'];
  const ACTIONS = [
    { id: 'detach', label: 'Detach', verb: 'detach', kind: 'detach', method: 'POST',
      what: 'The rack agent stops managing them (no power or provisioning calls) until they are attached again.' },
    { id: 'attach', label: 'Attach', verb: 'attach', kind: 'detach', method: 'DELETE',
      what: 'Withdraws the detach intent: the rack agent manages them again.' },
    { id: 'resume', label: 'Resume', verb: 'resume', kind: 'resume', method: 'POST',
      what: 'Retries hosts in error now instead of waiting for the backoff.' },
    { id: 'drain', label: 'Drain…', verb: 'drain', kind: 'drain', method: 'POST',
      what: 'Waits for the consumer to leave, then takes them out of service (maintenance) or out of the fleet (removal).' },
    { id: 'restore', label: 'Restore', verb: 'restore', kind: 'drain', method: 'DELETE',
      what: 'Withdraws the drain intent: hosts in maintenance return to service.' },
    { id: 'reboot', label: 'Reboot…', verb: 'reboot', kind: 'reboot', method: 'POST',
      what: 'Powers them off and on again once (soft: the OS shuts down first, hard after the agent\'s soft power-off timeout); or, holding them off, keeps them off until that requester releases. Only available, provisioned or externally provisioned hosts.' },
    { id: 'inspect', label: 'Inspect', verb: 'inspect', kind: 'inspect', method: 'POST',
      what: 'Reads the hardware of available hosts again (refused in any other state).' },
    // Service is offered in the host panel only: its confirmation states
    // that host's plan (the power cycles its spec costs).
    { id: 'service', label: 'Service…', verb: 'service', kind: 'service', method: 'POST', panelOnly: true,
      what: 'Brings the host\'s BIOS settings and firmware to its spec.bios and spec.firmware once.' },
  ];

  // opRefused is why the API would refuse a reboot, an inspection or a
  // servicing of h, a whole host (the coordinator's rules), or '' when it
  // would take it.
  const REBOOT_STATES = ['available', 'provisioned', 'externally-provisioned'];
  const SERVICE_STATES = ['provisioned', 'externally-provisioned'];
  function opRefused(h, id) {
    if (id !== 'reboot' && id !== 'inspect' && id !== 'service') return '';
    const i = h.intents || {};
    if (h.deletionRequested) return 'being deleted';
    if (h.pivotedTo || i.detach) return 'detached';
    if (h.handoff && !h.handoff.confirmed) return 'awaiting its handoff';
    if (i.drain) return 'drained';
    const state = h.status ? h.status.provisioningState : '';
    if (!state) return 'not registered yet';
    if (id === 'inspect') return state === 'available' ? '' : state;
    if (id === 'service') {
      if (h.task) return 'a BMC task is running';
      if (!SERVICE_STATES.includes(state)) return state;
      return servicePlan(h).empty ? 'nothing in spec.bios or spec.firmware' : '';
    }
    return REBOOT_STATES.includes(state) ? '' : state;
  }

  // servicePlan is what servicing h costs, by the coordinator's rule
  // (wire.PlanService): one power cycle when spec.bios names a setting,
  // none for firmware (power is held while a flash runs).
  function servicePlan(h) {
    const b = h.bios || {};
    let bios = Object.keys(b.settings || {}).length;
    for (const k of ['simultaneousMultithreadingEnabled', 'sriovEnabled', 'virtualizationEnabled']) if (b[k] !== undefined && b[k] !== null) bios++;
    const fw = (h.firmware || []).map((c) => c.component);
    const parts = [];
    if (bios) parts.push(`BIOS: ${bios} setting(s), applied by 1 power cycle (hard power-off, power-on) if one differs`);
    if (fw.length) parts.push(`firmware: ${fw.join(', ')} flashed where not at its version, with no power change while a flash runs`);
    const cycles = bios ? 1 : 0;
    return { empty: !bios && !fw.length, cycles,
      text: parts.join('; ') + `. At most ${cycles} power cycle${cycles === 1 ? '' : 's'}.` };
  }

  const $ = (id) => document.getElementById(id);
  const collator = new Intl.Collator(undefined, { numeric: true });

  const st = {
    token: '', me: null, gen: 0,
    hosts: new Map(),     // name -> slim host record (see slim)
    racks: new Map(),     // name -> rack view (see rackView)
    rackOrder: [],        // sorted rack names
    racksChanged: false,
    index: 0,             // the index the watch follows (0: not loaded yet)
    loaded: false,        // every host of the list is in (until then racks show counts)
    pages: 0,             // summary pages read in the last load
    pivots: new Set(),    // hosts handed to or received from another tier
    selection: new Set(),
    filter: '',
    matching: null,       // hosts the filter matches (null: no filter)
    panel: null,          // {kind: 'host'|'rack', name, modifiedIndex, full}
    renderQueued: false,
    firstPaint: null,     // ms since navigation start: the fleet drawn from counts
    loadedAt: null,       // ms since navigation start: every host drawn
    firstLoad: null,      // timings of the first fleet answer and its drawing
    drawnAt: new Map(),   // host -> ms (performance.now) its last change was on screen
    receivedAt: new Map(), // host -> ms its last change arrived from the watch
    renders: 0,
    mode: '',             // tile size: named or compact
    layoutDirty: false,   // a rack's size, the rack set or the width changed: place racks again
    grid: { cols: 1, rows: [] }, // the racks' rows (see layoutRacks)
    gridWidth: 0,
    headH: 0,             // a rack header's height in px, measured once
    bound: new Map(),     // rack -> rack view, the racks that have a section now
    pool: [],             // sections not in use
  };

  // ---------- API ----------

  // api calls the API; timing, when given, receives how long the answer
  // took to arrive and to parse.
  async function api(method, path, body, timing) {
    const opt = { method, cache: 'no-store', headers: { 'Authorization': 'Bearer ' + st.token } };
    if (body !== undefined) {
      opt.headers['Content-Type'] = 'application/json';
      opt.body = JSON.stringify(body);
    }
    const t0 = performance.now();
    const r = await send(path, opt);
    const text = await r.text();
    const t1 = performance.now();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { /* not JSON */ }
    if (timing) Object.assign(timing, { startMs: t0, transferMs: t1 - t0, parseMs: performance.now() - t1, bytes: text.length });
    if (!r.ok) {
      const d = (data && data.error) || {};
      const e = new Error(d.message || `${r.status} ${r.statusText}`);
      e.status = r.status; e.code = d.code; e.field = d.field;
      throw e;
    }
    return data;
  }
  // send is fetch, with a read that got no answer at all sent again (at
  // most twice, 0.2 s and 0.4 s later): the browser may reuse a connection
  // the member has just closed (net::ERR_SOCKET_NOT_CONNECTED), and a
  // host's panel then stayed on its error. A write is never sent again: it
  // may have been applied.
  async function send(path, opt) {
    const again = opt.method === 'GET' || opt.method === 'HEAD' ? 2 : 0;
    for (let i = 0; ; i++) {
      try {
        return await fetch(path, opt);
      } catch (e) {
        if (i >= again || !(e instanceof TypeError)) throw e;
        await new Promise((res) => setTimeout(res, 200 * (i + 1)));
      }
    }
  }
  const hostPath = (name) => '/v1/hosts/' + encodeURIComponent(name);
  const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
  const canAct = () => !!st.me && (st.me.role === 'operator' || st.me.role === 'admin');

  // Go durations ("1m2.5s", "300ms") to milliseconds.
  function durMs(s) {
    if (typeof s === 'number') return s * 1000;
    const unit = { h: 3600e3, m: 60e3, s: 1e3, ms: 1, us: 1e-3, 'µs': 1e-3, ns: 1e-6 };
    let ms = 0;
    for (const m of String(s).matchAll(/([0-9.]+)(h|ms|m|s|us|µs|ns)/g)) ms += parseFloat(m[1]) * unit[m[2]];
    return ms;
  }

  // ---------- sign in ----------

  async function signIn(token) {
    st.token = token;
    // Ask for the rack counts while whoami answers: the first paint needs both.
    const timing = {};
    const first = api('GET', '/v1/racks', undefined, timing).then((resp) => ({ resp, timing }), (error) => ({ error }));
    const me = await api('GET', '/v1/whoami');
    if (me.role === 'agent') {
      const e = new Error('this is an agent token (rack ' + me.rack + '); sign in with a viewer, operator or admin token');
      e.status = 403;
      throw e;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    st.me = me;
    start(first);
  }

  function signOut(msg) {
    st.gen++;
    sessionStorage.removeItem(TOKEN_KEY);
    st.token = ''; st.me = null;
    st.hosts.clear(); st.racks.clear(); st.rackOrder = []; st.selection.clear(); st.pivots.clear();
    st.index = 0; st.loaded = false;
    clearRacks(); $('toolbar').replaceChildren();
    closePanel();
    $('app').hidden = true; $('filter').hidden = true; $('signout').hidden = true;
    $('me').textContent = ''; $('cluster').textContent = '';
    setLive(false, 'not connected');
    $('login').hidden = false;
    $('login-error').textContent = msg || '';
    $('token').value = '';
    $('token').focus();
  }

  // start shows the fleet; first is the answer of GET /v1/racks, asked
  // for while signing in.
  function start(first) {
    const gen = ++st.gen;
    $('login').hidden = true;
    $('app').hidden = false; $('filter').hidden = false; $('signout').hidden = false;
    $('me').textContent = `${st.me.name || '(unnamed)'} · ${st.me.role}`;
    buildLegend();
    buildToolbar();
    clearRacks(); // sections carry the role's buttons
    api('GET', '/v1/status').then((s) => {
      $('cluster').textContent = `tier ${s.tier} · ${s.members ? s.members.length : 0} member(s) · leader ${s.leader || 'none'}`;
    }).catch(() => {});
    watchLoop(gen, first);
  }

  // ---------- live data ----------

  // The fleet watch; brief: the tiles need no inventory (the panel reads
  // the whole host).
  const fleetWatchPath = (index) => `/v1/watch?index=${index}&timeout=${WATCH_TIMEOUT}&brief=true`;
  // A list is asked with no position (its first page), a continue token,
  // or after a host name (a list that outlived its view goes on there).
  const summaryPath = (cont, after) => `/v1/hosts?view=summary&limit=${cont || after ? PAGE_SIZE : FIRST_PAGE_SIZE}` +
    (cont ? '&continue=' + encodeURIComponent(cont) : after ? '&after=' + encodeURIComponent(after) : '');

  // watchLoop loads the fleet (loadFleet) then follows the watch from the
  // list's index; it loads again when the cluster went back (a restore)
  // or after an error before the fleet was in.
  async function watchLoop(gen, first) {
    let backoff = 0;
    while (gen === st.gen) {
      try {
        if (st.index === 0) {
          await loadFleet(gen, first);
          first = null;
          if (gen !== st.gen) return;
          setLive(true, 'live');
          backoff = 0;
          continue;
        }
        const resp = await api('GET', fleetWatchPath(st.index));
        if (gen !== st.gen) return;
        if (resp.index < st.index) {
          st.index = 0; // the cluster went back (restored): load everything again
          continue;
        }
        applyFleet(resp);
        st.index = resp.index;
        setLive(true, 'live');
        backoff = 0;
      } catch (e) {
        first = null;
        if (gen !== st.gen) return;
        if (e.status === 401) { signOut('The cluster refused the token: ' + e.message); return; }
        setLive(false, 'reconnecting: ' + e.message);
        backoff = Math.min(backoff ? backoff * 2 : 500, 5000);
        await sleep(backoff);
      }
    }
  }

  // loadFleet paints the racks from their counts, then reads every host
  // as a summary, page by page, drawing each page as it comes; st.index
  // becomes the list's index. A list whose pages the coordinator no longer
  // keeps (410) goes on after the last host read, in a new list at a newer
  // index; st.index stays the first list's, so the watch from it brings
  // every host read before up to date (and adds one created meanwhile
  // before the last host read). Hosts the lists do not name are dropped at
  // the end (a reload after a restore).
  async function loadFleet(gen, first) {
    st.loaded = false; st.pages = 0;
    let racks, timing = {};
    if (first) {
      const r = await first;
      if (r.error) throw r.error;
      racks = r.resp; timing = r.timing;
    } else {
      racks = await api('GET', '/v1/racks', undefined, timing);
    }
    if (gen !== st.gen) return;
    if (st.firstLoad === null) st.firstLoad = timing;
    const now = performance.now();
    const named = new Set();
    for (const x of racks.items || []) {
      named.add(x.name);
      const r = rackView(x.name);
      r.lease = x.holder ? { holder: x.holder, epoch: x.epoch, ttl: x.ttl } : null;
      r.deadline = x.holder && x.expiresIn ? now + durMs(x.expiresIn) : null;
      r.counts = x.counts || null;
      r.expected = x.hosts;
      r.dirty = r.headDirty = true;
    }
    for (const name of [...st.racks.keys()]) if (!named.has(name) && !st.racks.get(name).names.size) { st.racks.delete(name); st.racksChanged = true; }
    st.countsPainted = true;
    scheduleRender();
    const seen = new Set();
    let index = 0, last = '';
    for (;;) {
      // The pages of one list follow each other (each names the next), so
      // the next is asked for as soon as a page is in, before it is
      // handled: the coordinator encodes one while the page handles the
      // other.
      const ask = (c, a) => { const p = api('GET', summaryPath(c, a)); p.catch(() => {}); return { c, p }; };
      let cont = '', expired = false, next = ask('', last);
      do {
        let page;
        try {
          page = await next.p;
        } catch (e) {
          if (e.status === 410 && next.c) { expired = true; break; } // go on after the last host read
          throw e;
        }
        if (gen !== st.gen) return;
        cont = page.continue || '';
        if (cont) next = ask(cont, '');
        st.pages++;
        if (!index) index = page.index;
        const t = performance.now();
        // (A member that predates after answers from the first host:
        // those hosts are set again, newer, which is harmless.)
        const items = page.items || [];
        for (const h of items) { seen.add(h.name); setHost(slim(h), t); }
        if (items.length) last = items[items.length - 1].name;
        scheduleRender();
      } while (cont);
      if (expired) continue;
      for (const n of [...st.hosts.keys()]) if (!seen.has(n)) dropHost(n);
      st.index = index;
      st.loaded = true;
      for (const r of st.racks.values()) { r.counts = null; r.dirty = r.headDirty = true; }
      st.layoutDirty = true;
      scheduleRender();
      return;
    }
  }

  function setLive(on, text) {
    const el = $('live');
    el.className = 'live ' + (on ? 'on' : 'off');
    el.textContent = text;
  }

  function rackView(name) {
    let r = st.racks.get(name);
    if (!r) {
      // changed: hosts changed since the rack's canvas was last drawn.
      // counts: the rack's counts from GET /v1/racks, shown until its
      // hosts are in; expected: how many hosts those counts name.
      r = { name, lease: null, deadline: null, names: new Set(), order: null, dirty: true, headDirty: true, headStale: false, visible: false, el: null,
        changed: new Set(), counts: null, expected: 0, tally: null };
      st.racks.set(name, r);
      st.racksChanged = true;
    }
    return r;
  }

  // The few strings many hosts share (states, statuses, error types) are
  // kept once.
  const interned = new Map();
  function intern(v) {
    if (!v) return '';
    const x = interned.get(v);
    if (x !== undefined) return x;
    if (interned.size < 1000) interned.set(v, v);
    return v;
  }

  // slim is the record the page keeps of a host (a summary from the list
  // or a brief host from the watch): what tiles, rack headers, the filter
  // and tooltips use. The panel reads the whole host when opened.
  function slim(h) {
    const s = h.status || {};
    return { name: h.name, rack: h.rack, prov: intern(s.provisioningState), op: intern(s.operationalStatus),
      errorType: intern(s.errorType), errorMessage: s.errorMessage || '', health: s.health ? intern(s.health.health) : '',
      intents: h.intents || null, deletionRequested: !!h.deletionRequested, pivotedTo: h.pivotedTo || '',
      handoff: h.handoff ? { sourceTier: h.handoff.sourceTier, confirmed: !!h.handoff.confirmed } : null,
      modifiedIndex: h.modifiedIndex || 0 };
  }

  // setHost keeps record x (t: when it arrived).
  function setHost(x, t) {
    const old = st.hosts.get(x.name);
    if (old && old.rack !== x.rack) dropHost(x.name);
    st.hosts.set(x.name, x);
    const r = rackView(x.rack);
    if (!r.names.has(x.name)) { r.names.add(x.name); r.order = null; st.layoutDirty = true; }
    r.changed.add(x.name);
    r.dirty = r.headDirty = true;
    st.receivedAt.set(x.name, t);
    if (x.pivotedTo || (x.handoff && !x.handoff.confirmed) || x.op === 'awaiting-handoff') st.pivots.add(x.name);
    else st.pivots.delete(x.name);
  }

  function dropHost(name) {
    const h = st.hosts.get(name);
    if (!h) return;
    st.hosts.delete(name);
    const r = st.racks.get(h.rack);
    if (r) { r.names.delete(name); r.order = null; r.dirty = r.headDirty = true; st.layoutDirty = true; }
    st.selection.delete(name);
    st.pivots.delete(name);
  }

  // applyFleet applies a watch answer: only what changed since st.index.
  function applyFleet(resp) {
    const now = performance.now();
    for (const rw of resp.racks) { // deletions first: a host may move racks
      if (rw.reset) {
        const r = rackView(rw.rack);
        for (const n of [...r.names]) dropHost(n);
      }
      for (const n of rw.deleted || []) {
        const h = st.hosts.get(n);
        if (h && h.rack === rw.rack) { dropHost(n); rackView(rw.rack).changed.add(n); }
      }
    }
    for (const rw of resp.racks) {
      const r = rackView(rw.rack);
      r.lease = rw.lease || null;
      r.deadline = rw.lease && rw.expiresIn ? now + durMs(rw.expiresIn) : null;
      r.dirty = r.headDirty = true;
      for (const h of rw.hosts) setHost(slim(h), now);
    }
    for (const n of st.selection) if (!st.hosts.has(n)) st.selection.delete(n);
    scheduleRender();
  }

  // ---------- rendering ----------

  function scheduleRender() {
    if (st.renderQueued) return;
    st.renderQueued = true;
    requestAnimationFrame(render);
  }

  // The host count tiles are sized by: the rack counts' until the list is in.
  function fleetSize() {
    if (st.loaded) return st.hosts.size;
    let n = 0;
    for (const r of st.racks.values()) n += Math.max(r.expected, r.names.size);
    return n;
  }
  function tileMode() { return fleetSize() <= 600 ? 'named' : 'compact'; }
  const GEOM = {
    named: { w: 113, h: 22, gap: 4, cols: 2 },
    compact: { w: 14, h: 14, gap: 2, cols: 14 },
  };

  function render() {
    const t0 = performance.now();
    st.renderQueued = false;
    st.renders++;
    const mode = tileMode();
    if (mode !== st.mode) { // tiles change size: redraw every rack
      st.mode = mode;
      for (const r of st.racks.values()) r.dirty = true;
      st.layoutDirty = true;
    }
    if (st.racksChanged) {
      st.racksChanged = false;
      st.rackOrder = [...st.racks.keys()].sort(collator.compare);
      st.layoutDirty = true;
    }
    if (st.layoutDirty || $('racks').clientWidth !== st.gridWidth) layoutRacks();
    updateWindow();
    const drawn = [];
    let matching = st.filter ? 0 : null;
    for (const r of st.racks.values()) {
      // The tally (summary, filter count) is kept for every rack; the
      // header's DOM only for racks on screen (others when they scroll in).
      if (r.headDirty) { r.tally = rackTally(r); r.headDirty = false; r.headStale = true; }
      if (r.headStale && r.visible) updateRackHeader(r);
      if (matching !== null) matching += r.tally.match;
      if (!r.dirty) continue;
      if (r.visible) {
        drawRack(r);
        r.dirty = false;
        for (const n of r.changed) drawn.push(n);
        r.changed.clear();
      }
    }
    st.matching = matching;
    st.appliedFilter = st.filter;
    renderSummary();
    renderPivots();
    renderToolbarState();
    if (st.panel && st.panel.kind === 'host' && st.loaded) {
      const h = st.hosts.get(st.panel.name);
      if (!h) { if (st.panel.modifiedIndex !== -2) renderGone(st.panel.name); }
      else if (h.modifiedIndex > st.panel.modifiedIndex) loadHostPanel(h.name, h.modifiedIndex);
    }
    // A frame requested from inside this one runs after this one painted:
    // its time bounds when the tiles drawn now reached the screen.
    const first = st.firstPaint === null && st.racks.size > 0;
    const loaded = st.loadedAt === null && st.loaded;
    if (first && st.firstLoad) st.firstLoad.renderMs = performance.now() - t0;
    requestAnimationFrame(() => {
      const t = performance.now();
      if (first) st.firstPaint = t;
      if (loaded) st.loadedAt = t;
      for (const n of drawn) st.drawnAt.set(n, t);
    });
  }

  function rackOrder(r) {
    if (!r.order) r.order = [...r.names].sort(collator.compare);
    return r.order;
  }

  // ---------- virtual rack grid ----------
  // Only the racks within a screenful (plus MARGIN) of the viewport have a
  // <section>; where every other rack is, is arithmetic. #racks is a box of
  // the whole grid's height, the sections absolutely placed in it and
  // recycled through a pool as they scroll out, so building the page and
  // filtering it do not grow with the rack count.
  const RACK_W = 248, RACK_GAP = 10, PAD_X = 14, PAD_TOP = 10, PAD_BOTTOM = 40, MARGIN = 400;
  const RACK_CHROME = 14 + 4; // a .rack's padding and border, its header's margin
  const POOL_MAX = 200;

  // rackTiles is how many tiles r shows: its counts stand for hosts not
  // read yet until the list is in.
  function rackTiles(r) { return r.counts && !st.loaded ? Math.max(r.names.size, r.expected) : r.names.size; }
  function canvasHeight(n, g) { return Math.max(1, Math.ceil(n / g.cols)) * (g.h + g.gap) + g.gap; }

  // headerHeight measures a rack header once (one line each for title,
  // lease and counts: the CSS keeps them from wrapping).
  function headerHeight() {
    if (st.headH) return st.headH;
    const sec = st.pool.pop() || buildRackEl();
    $('racks').append(sec);
    const h = sec.firstChild.offsetHeight;
    sec.remove(); st.pool.push(sec);
    if (h > 0) st.headH = h;
    return h || 52;
  }

  // layoutRacks places every rack: as many columns as the box is wide,
  // each row as tall as its tallest rack.
  function layoutRacks() {
    st.layoutDirty = false;
    const box = $('racks');
    st.gridWidth = box.clientWidth;
    const g = GEOM[tileMode()], n = st.rackOrder.length;
    const cols = Math.max(1, Math.floor((st.gridWidth - 2 * PAD_X + RACK_GAP) / (RACK_W + RACK_GAP)));
    const headH = n ? headerHeight() : 0, rows = [];
    let y = PAD_TOP;
    for (let i = 0; i < n; i += cols) {
      let h = 0;
      for (let j = i; j < Math.min(i + cols, n); j++) {
        const r = st.racks.get(st.rackOrder[j]);
        r.x = PAD_X + (j - i) * (RACK_W + RACK_GAP); r.y = y;
        h = Math.max(h, RACK_CHROME + headH + canvasHeight(rackTiles(r), g));
      }
      rows.push({ y, h, first: i });
      y += h + RACK_GAP;
    }
    box.style.height = (n ? y - RACK_GAP + PAD_BOTTOM : 0) + 'px';
    st.grid = { cols, rows };
    for (const r of st.bound.values()) placeRack(r);
  }

  function placeRack(r) { r.el.style.transform = `translate(${r.x}px, ${r.y}px)`; }

  // updateWindow gives the racks near the viewport a section and takes
  // it from the others.
  function updateWindow() {
    const { rows, cols } = st.grid;
    const top = $('racks').getBoundingClientRect().top;
    const lo = -top - MARGIN, hi = -top + window.innerHeight + MARGIN;
    // The first row ending below lo (rows are in order of y).
    let a = 0, b = rows.length;
    while (a < b) { const m = (a + b) >> 1; if (rows[m].y + rows[m].h < lo) a = m + 1; else b = m; }
    const want = new Set();
    for (let i = a; i < rows.length && rows[i].y <= hi; i++) {
      for (let j = rows[i].first; j < Math.min(rows[i].first + cols, st.rackOrder.length); j++) want.add(st.rackOrder[j]);
    }
    for (const [name, r] of st.bound) if (!want.has(name) || st.racks.get(name) !== r) unbindRack(r);
    for (const name of want) {
      const r = st.racks.get(name);
      if (!r.el) bindRack(r);
    }
  }

  function bindRack(r) {
    const sec = st.pool.pop() || buildRackEl();
    sec.dataset.rack = r.name;
    sec.parts.title.textContent = r.name;
    sec.parts.hist.title = 'Lease history of ' + r.name;
    if (sec.parts.sel) sec.parts.sel.title = 'Select (or unselect) every host of ' + r.name;
    sec.parts.canvas.title = '';
    r.el = sec; r.leaseEl = sec.parts.lease; r.countsEl = sec.parts.counts; r.canvas = sec.parts.canvas; r.ttlEl = null;
    r.visible = true; r.dirty = true; r.headStale = true;
    placeRack(r);
    $('racks').append(sec);
    st.bound.set(r.name, r);
  }

  function unbindRack(r) {
    st.bound.delete(r.name);
    if (!r.el) return;
    r.el.remove();
    if (st.pool.length < POOL_MAX) st.pool.push(r.el);
    r.el = r.leaseEl = r.countsEl = r.canvas = r.ttlEl = r.geom = null;
    r.visible = false; r.dirty = true;
  }

  // clearRacks forgets every section (sign out, or a role whose sections
  // have other buttons).
  function clearRacks() {
    for (const r of [...st.bound.values()]) unbindRack(r);
    st.pool = []; st.bound.clear(); st.headH = 0;
    $('racks').replaceChildren();
    $('racks').style.height = '0px';
  }

  // rackOf is the rack a section shows now (sections are recycled).
  const rackOf = (sec) => st.racks.get(sec.dataset.rack);

  function buildRackEl() {
    const sec = document.createElement('section');
    sec.className = 'rack';
    const head = document.createElement('header');
    const h3 = document.createElement('h3');
    const title = document.createElement('span');
    const btns = document.createElement('span');
    const hist = document.createElement('button');
    hist.type = 'button'; hist.textContent = 'leases';
    hist.addEventListener('click', () => openRack(sec.dataset.rack));
    btns.append(hist);
    let sel = null;
    if (canAct()) {
      sel = document.createElement('button');
      sel.type = 'button'; sel.textContent = 'select';
      sel.dataset.action = 'select-rack';
      sel.addEventListener('click', () => {
        const r = rackOf(sec);
        if (!r) return;
        const names = rackOrder(r);
        const all = names.length > 0 && names.every((n) => st.selection.has(n));
        for (const n of names) all ? st.selection.delete(n) : st.selection.add(n);
        r.dirty = true; scheduleRender();
      });
      btns.append(' ', sel);
    }
    h3.append(title, btns);
    const lease = document.createElement('div'); lease.className = 'lease';
    const counts = document.createElement('div'); counts.className = 'counts';
    head.append(h3, lease, counts);
    const canvas = document.createElement('canvas');
    canvas.addEventListener('click', (ev) => { const r = rackOf(sec); if (r) onTileClick(r, canvas, ev); });
    canvas.addEventListener('mousemove', (ev) => {
      const r = rackOf(sec);
      const h = r ? hostAt(r, canvas, ev) : null;
      canvas.title = h ? tileTitle(h) : '';
    });
    sec.append(head, canvas);
    sec.parts = { title, hist, sel, lease, counts, canvas };
    return sec;
  }

  function fmtLeft(ms) {
    if (ms <= 0) return 'expiring';
    return ms >= 60000 ? `${Math.floor(ms / 60000)}m${Math.round((ms % 60000) / 1000)}s left` : `${(ms / 1000).toFixed(1)}s left`;
  }

  function updateRackHeader(r) {
    const el = r.leaseEl;
    el.replaceChildren();
    if (!r.lease) {
      el.className = 'lease free';
      el.textContent = 'no lease holder: unmanaged';
    } else {
      el.className = 'lease';
      const ttl = document.createElement('span'); ttl.className = 'ttl';
      r.ttlEl = ttl;
      el.append(`${r.lease.holder} · epoch ${r.lease.epoch} · `, ttl);
      el.title = `held by ${r.lease.holder} under epoch ${r.lease.epoch}, TTL ${r.lease.ttl}`;
      tickRack(r, performance.now());
    }
    const t = r.tally;
    r.headStale = false;
    r.countsEl.replaceChildren(`${t.hosts} hosts`);
    if (t.err) { const b = document.createElement('span'); b.className = 'bad'; b.textContent = ` · ${t.err} in error`; r.countsEl.append(b); }
    if (t.det) r.countsEl.append(` · ${t.det} detached`);
    if (t.pend) r.countsEl.append(` · ${t.pend} unacknowledged`);
  }

  // rackTally counts r's hosts for its header, the summary and the filter:
  // from GET /v1/racks' counts while its hosts are not all in, from the
  // hosts after.
  function rackTally(r) {
    const c = r.counts;
    if (c && r.names.size < r.expected) {
      const st_ = c.statuses || {};
      return { hosts: r.expected, err: st_.error || 0, det: st_.detached || 0, maint: st_.maintenance || 0, pend: c.unacknowledged || 0, match: 0 };
    }
    const t = { hosts: r.names.size, err: 0, det: 0, maint: 0, pend: 0, match: 0 };
    for (const n of r.names) {
      const h = st.hosts.get(n);
      if (h.op === 'error') t.err++; else if (h.op === 'detached') t.det++; else if (h.op === 'maintenance') t.maint++;
      if (h.intents && pendingIntents(h)) t.pend++;
      if (st.filter && matches(h)) t.match++;
    }
    return t;
  }

  function tickRack(r, now) {
    if (!r.lease || !r.ttlEl) return;
    r.ttlEl.textContent = r.deadline === null ? `TTL ${r.lease.ttl}` : fmtLeft(r.deadline - now);
  }

  function pendingIntents(h) {
    const i = h.intents;
    if (!i) return 0;
    let n = 0;
    for (const k of INTENT_KINDS) if (i[k] && !i[k].acknowledged) n++;
    for (const x of Object.values(i.powerOff || {})) if (!x.acknowledged) n++;
    return n;
  }

  function matches(h) {
    const f = st.filter;
    if (!f) return true;
    return h.name.includes(f) || h.rack === f || (h.prov || 'none') === f ||
      h.op === f || (!!h.errorType && (h.errorType.includes(f) || 'error'.startsWith(f))) ||
      (f === 'pending' && pendingIntents(h) > 0) || (!!h.intents && !!h.intents[f]) ||
      (!!h.health && (h.health.toLowerCase() === f || (f === 'unhealthy' && h.health !== 'OK')));
  }

  function drawRack(r) {
    const mode = tileMode(), g = GEOM[mode];
    const names = rackOrder(r);
    // Until its hosts are in, the rack's counts stand for the rest: one
    // tile per host not read yet, in the colour of its state.
    const rest = r.counts && !st.loaded ? Math.max(0, r.expected - names.length) : 0;
    const rows = Math.max(1, Math.ceil((names.length + rest) / g.cols));
    const cssW = g.cols * (g.w + g.gap) + g.gap, cssH = rows * (g.h + g.gap) + g.gap;
    const dpr = window.devicePixelRatio || 1;
    const c = r.canvas;
    if (c.width !== Math.round(cssW * dpr) || c.height !== Math.round(cssH * dpr)) {
      c.width = Math.round(cssW * dpr); c.height = Math.round(cssH * dpr);
      c.style.width = cssW + 'px'; c.style.height = cssH + 'px';
    }
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);
    ctx.textBaseline = 'middle';
    ctx.font = '11px system-ui, sans-serif';
    for (let i = 0; i < names.length; i++) {
      const x = g.gap + (i % g.cols) * (g.w + g.gap), y = g.gap + Math.floor(i / g.cols) * (g.h + g.gap);
      drawTile(ctx, st.hosts.get(names[i]), x, y, g, mode);
    }
    if (rest) {
      const fills = [];
      for (const [state, n] of Object.entries(r.counts.states || {})) for (let k = 0; k < n; k++) fills.push(PROV_COLOR[state === 'none' ? '' : state] || PROV_COLOR['']);
      ctx.globalAlpha = 0.55;
      for (let k = 0; k < rest; k++) {
        const i = names.length + k;
        const x = g.gap + (i % g.cols) * (g.w + g.gap), y = g.gap + Math.floor(i / g.cols) * (g.h + g.gap);
        ctx.fillStyle = fills[fills.length - rest + k] || PROV_COLOR[''];
        ctx.fillRect(x, y, g.w, g.h);
      }
      ctx.globalAlpha = 1;
    }
    r.geom = { mode, g };
  }

  // Tile corner colour of a hardware health other than OK.
  const HEALTH_COLOR = { Warning: '#d69e2e', Critical: '#c53030', Unknown: '#718096' };

  function drawTile(ctx, h, x, y, g, mode) {
    const prov = h.prov, op = h.op;
    ctx.globalAlpha = matches(h) ? 1 : 0.18;
    ctx.fillStyle = PROV_COLOR[prov] || PROV_COLOR[''];
    ctx.fillRect(x, y, g.w, g.h);
    ctx.fillStyle = OP_COLOR[op] || OP_COLOR[''];
    if (mode === 'named') {
      ctx.fillRect(x, y, 7, g.h);
      ctx.fillStyle = '#1a202c';
      let right = x + g.w - 2;
      const holds = h.intents && h.intents.powerOff ? Object.values(h.intents.powerOff) : [];
      if (holds.length) {
        right -= 13;
        drawBadge(ctx, right, y + 5, INTENT_LETTER.powerOff, holds.every((x) => x.acknowledged));
      }
      for (const kind of ['inspect', 'reboot', 'resume', 'drain', 'detach']) {
        const it = h.intents && h.intents[kind];
        if (!it) continue;
        right -= 13;
        drawBadge(ctx, right, y + 5, INTENT_LETTER[kind], it.acknowledged);
      }
      ctx.fillStyle = '#1a202c';
      ctx.font = (op === 'detached' ? 'italic ' : '') + '11px system-ui, sans-serif';
      let label = h.name;
      const room = right - (x + 10) - 2;
      while (label.length > 1 && ctx.measureText(label).width > room) label = label.slice(0, -2) + '…';
      ctx.fillText(label, x + 10, y + g.h / 2 + 0.5);
      if (op === 'error') { ctx.fillStyle = '#e53e3e'; ctx.fillRect(x + g.w - 3, y, 3, g.h); }
    } else {
      ctx.lineWidth = 2;
      ctx.strokeStyle = OP_COLOR[op] || OP_COLOR[''];
      ctx.strokeRect(x + 1, y + 1, g.w - 2, g.h - 2);
      if (h.intents) {
        const p = pendingIntents(h);
        ctx.fillStyle = p ? '#f6ad55' : '#ffffff';
        ctx.fillRect(x + g.w - 6, y + 1, 5, 5);
      }
    }
    // Hardware health the BMC reports: a corner mark unless OK.
    const hc = h.health && HEALTH_COLOR[h.health];
    if (hc) {
      ctx.fillStyle = hc;
      ctx.beginPath();
      ctx.moveTo(x + g.w, y + g.h); ctx.lineTo(x + g.w - 8, y + g.h); ctx.lineTo(x + g.w, y + g.h - 8);
      ctx.closePath(); ctx.fill();
    }
    if (st.selection.has(h.name)) {
      ctx.lineWidth = 2;
      ctx.strokeStyle = '#1a202c';
      ctx.strokeRect(x - 1, y - 1, g.w + 2, g.h + 2);
    }
    ctx.globalAlpha = 1;
  }

  // A badge: filled when the rack agent acknowledged the intent, hollow
  // (dashed amber) while it has not.
  function drawBadge(ctx, x, y, letter, acked) {
    ctx.save();
    ctx.lineWidth = 1.2;
    if (acked) {
      ctx.fillStyle = '#ffffff'; ctx.fillRect(x, y, 12, 12);
      ctx.strokeStyle = '#1a202c'; ctx.strokeRect(x + 0.5, y + 0.5, 11, 11);
      ctx.fillStyle = '#1a202c';
    } else {
      ctx.setLineDash([2, 2]);
      ctx.strokeStyle = '#b7791f'; ctx.strokeRect(x + 0.5, y + 0.5, 11, 11);
      ctx.fillStyle = '#b7791f';
    }
    ctx.font = 'bold 9px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.fillText(letter, x + 6, y + 6.5);
    ctx.restore();
  }

  function tileIndex(r, canvas, ev) {
    if (!r.geom) return -1;
    const { g } = r.geom;
    const rect = canvas.getBoundingClientRect();
    const px = ev.clientX - rect.left - g.gap, py = ev.clientY - rect.top - g.gap;
    if (px < 0 || py < 0) return -1;
    const col = Math.floor(px / (g.w + g.gap)), row = Math.floor(py / (g.h + g.gap));
    if (col >= g.cols || px % (g.w + g.gap) > g.w || py % (g.h + g.gap) > g.h) return -1;
    return row * g.cols + col;
  }
  function hostAt(r, canvas, ev) {
    const i = tileIndex(r, canvas, ev);
    const names = rackOrder(r);
    return i >= 0 && i < names.length ? st.hosts.get(names[i]) : null;
  }
  function tileTitle(h) {
    let t = `${h.name}: ${h.prov || 'no status yet'} / ${h.op || '-'}`;
    if (h.errorType) t += `\n${h.errorType}: ${h.errorMessage || ''}`;
    if (h.health && h.health !== 'OK') t += `\nhardware health ${h.health} (the panel names the problems)`;
    for (const k of INTENT_KINDS) {
      const it = h.intents && h.intents[k];
      if (it) t += `\n${k}${it.mode ? ' (' + it.mode + ')' : ''}: ${it.acknowledged ? 'acknowledged' : 'not acknowledged yet'}`;
    }
    for (const [k, it] of Object.entries((h.intents && h.intents.powerOff) || {})) {
      t += `\npower-off held by ${k}: ${it.acknowledged ? 'acknowledged (off)' : 'not acknowledged yet'}`;
    }
    return t;
  }

  function onTileClick(r, canvas, ev) {
    const h = hostAt(r, canvas, ev);
    if (!h) return;
    if (canAct() && (ev.ctrlKey || ev.metaKey || ev.shiftKey)) {
      toggleSelect(h.name);
      return;
    }
    openHost(h.name);
  }

  function toggleSelect(name) {
    st.selection.has(name) ? st.selection.delete(name) : st.selection.add(name);
    const h = st.hosts.get(name);
    if (h) { const r = st.racks.get(h.rack); if (r) r.dirty = true; }
    scheduleRender();
    if (st.panel && st.panel.kind === 'host' && st.panel.name === name && st.panel.full) renderHostPanel(st.panel.full, false);
  }

  // renderSummary adds up the racks' tallies (counts until the hosts are in).
  function totals() {
    const t = { hosts: 0, err: 0, det: 0, maint: 0, pend: 0, free: 0 };
    for (const r of st.racks.values()) {
      const x = r.tally || rackTally(r);
      t.hosts += x.hosts; t.err += x.err; t.det += x.det; t.maint += x.maint; t.pend += x.pend;
      if (!r.lease && x.hosts) t.free++;
    }
    return t;
  }
  function renderSummary() {
    const t = totals();
    const { err, det, pend, maint, free } = t;
    const el = $('summary');
    el.replaceChildren();
    const item = (n, label, bad) => {
      const s = document.createElement('span');
      const b = document.createElement('b'); b.textContent = n;
      s.append(b, ' ' + label);
      if (bad && n) s.className = 'error';
      el.append(s);
    };
    item(t.hosts, 'hosts'); item(st.racks.size, 'racks'); item(free, 'racks without holder', true);
    item(err, 'in error', true); item(det, 'detached'); item(maint, 'in maintenance'); item(pend, 'with unacknowledged intents');
    if (!st.loaded) {
      const s = document.createElement('span'); s.id = 'loading';
      s.textContent = `loading hosts: ${st.hosts.size} of ${t.hosts}`;
      el.append(s);
    }
    if (st.matching !== null) {
      const s = document.createElement('span'); s.id = 'matching';
      s.textContent = `${st.matching} match “${st.filter}”` + (st.loaded ? '' : ' so far');
      el.append(s);
    }
  }

  function renderPivots() {
    // Handed to another tier (kept here, detached), or received from one
    // and not yet confirmed by the source (setHost keeps st.pivots).
    const inFlight = [];
    for (const n of st.pivots) { const h = st.hosts.get(n); if (h) inFlight.push(h); }
    const el = $('pivots');
    el.hidden = inFlight.length === 0;
    if (!inFlight.length) { el.replaceChildren(); return; }
    inFlight.sort((a, b) => collator.compare(a.name, b.name));
    const h2 = document.createElement('h2');
    h2.textContent = `Pivots (${inFlight.length})`;
    const ul = document.createElement('ul');
    for (const h of inFlight.slice(0, 30)) {
      const li = document.createElement('li');
      const op = h.op || 'no status';
      li.textContent = h.pivotedTo
        ? `${h.name} (${h.rack}) handed to tier ${h.pivotedTo}: ${op}`
        : `${h.name} (${h.rack}) from tier ${h.handoff ? h.handoff.sourceTier : 'another tier'}: ${h.handoff && h.handoff.confirmed ? 'handoff confirmed' : 'waiting for the source to confirm its detach'} (${op})`;
      li.addEventListener('click', () => openHost(h.name));
      ul.append(li);
    }
    if (inFlight.length > 30) { const li = document.createElement('li'); li.textContent = `and ${inFlight.length - 30} more (filter: awaiting-handoff)`; ul.append(li); }
    el.replaceChildren(h2, ul);
  }

  function buildLegend() {
    const el = $('legend');
    el.replaceChildren();
    const group = (title, colors, stripe) => {
      const g = document.createElement('span'); g.className = 'group'; g.textContent = title;
      el.append(g);
      for (const [k, c] of Object.entries(colors)) {
        const s = document.createElement('span');
        const sw = document.createElement('span'); sw.className = 'sw'; sw.style.background = c;
        if (stripe) sw.style.width = '5px';
        s.append(sw, k || 'no status');
        el.append(s);
      }
    };
    group('state', PROV_COLOR, false);
    group('status (left stripe)', OP_COLOR, true);
    const b = document.createElement('span');
    b.textContent = 'intents: ' + Object.entries(INTENT_LETTER).map(([k, l]) => `${l} ${k === 'drain' ? 'drain' : k === 'powerOff' ? 'power-off hold' : k}`).join(', ') + '; filled = acknowledged, dashed = not yet';
    el.append(b);
  }

  // ---------- actions ----------

  function buildToolbar() {
    const tb = $('toolbar');
    tb.replaceChildren();
    if (!canAct()) return; // viewers get no action buttons at all
    const count = document.createElement('span'); count.className = 'count'; count.id = 'sel-count';
    tb.append(count);
    for (const a of ACTIONS) {
      if (a.panelOnly) continue;
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = a.label; b.dataset.action = a.id;
      b.addEventListener('click', () => confirmAction(a, [...st.selection]));
      tb.append(b);
    }
    const selF = document.createElement('button');
    selF.type = 'button'; selF.textContent = 'Select filtered'; selF.dataset.action = 'select-filtered';
    selF.addEventListener('click', () => {
      for (const h of st.hosts.values()) if (matches(h)) st.selection.add(h.name);
      for (const r of st.racks.values()) r.dirty = true;
      scheduleRender();
    });
    const clr = document.createElement('button');
    clr.type = 'button'; clr.textContent = 'Clear'; clr.dataset.action = 'clear-selection';
    clr.addEventListener('click', () => {
      st.selection.clear();
      for (const r of st.racks.values()) r.dirty = true;
      scheduleRender();
    });
    tb.append(selF, clr);
  }

  function renderToolbarState() {
    if (!canAct()) return;
    const n = st.selection.size;
    $('sel-count').textContent = n ? `${n} selected` : 'ctrl-click tiles to select';
    for (const b of $('toolbar').querySelectorAll('button[data-action]')) {
      if (b.dataset.action !== 'select-filtered') b.disabled = n === 0;
    }
  }

  // confirmAction asks, naming every host, then sends one API call per
  // host; plan (a service of one host) is what it costs, stated in the
  // question.
  function confirmAction(a, names, plan) {
    if (!names.length) return;
    names.sort(collator.compare);
    const dlg = $('confirm');
    const noun = names.length === 1 ? '1 host' : `${names.length} hosts`;
    $('confirm-title').textContent = `${a.label.replace('…', '')} ${noun}?`;
    $('confirm-what').textContent = plan ? `${a.what} ${plan.text}` : a.what;
    const ul = $('confirm-hosts');
    ul.replaceChildren(...names.slice(0, 200).map((n) => { const li = document.createElement('li'); li.textContent = n; return li; }));
    if (names.length > 200) { const li = document.createElement('li'); li.textContent = `and ${names.length - 200} more`; ul.append(li); }
    const opts = $('confirm-options');
    opts.replaceChildren();
    if (a.id === 'drain') {
      const l = document.createElement('label'); l.textContent = 'Mode ';
      const sel = document.createElement('select'); sel.id = 'confirm-mode';
      for (const m of ['maintenance', 'removal']) { const o = document.createElement('option'); o.value = m; o.textContent = m; sel.append(o); }
      l.append(sel);
      const w = document.createElement('label');
      const cb = document.createElement('input'); cb.type = 'checkbox'; cb.id = 'confirm-wipe';
      w.append(cb, ' wipe (removal only: deprovision before removing)');
      opts.append(l, w);
    }
    if (a.id === 'reboot') {
      const l = document.createElement('label'); l.textContent = 'Mode ';
      const sel = document.createElement('select'); sel.id = 'confirm-reboot-mode';
      for (const m of ['hard', 'soft']) { const o = document.createElement('option'); o.value = m; o.textContent = m; sel.append(o); }
      l.append(sel);
      const w = document.createElement('label');
      const cb = document.createElement('input'); cb.type = 'checkbox'; cb.id = 'confirm-hold';
      w.append(cb, ' hold powered off for requester ');
      const rq = document.createElement('input'); rq.type = 'text'; rq.id = 'confirm-requester'; rq.placeholder = 'default'; rq.maxLength = 63;
      w.append(rq);
      opts.append(l, w);
    }
    $('confirm-reason').value = '';
    $('confirm-reason').parentElement.hidden = a.method === 'DELETE';
    $('confirm-ok').textContent = `${a.label.replace('…', '')} ${noun}`;
    dlg.returnValue = '';
    dlg.onclose = () => {
      if (dlg.returnValue !== 'ok') return;
      const body = a.method === 'POST' ? { reason: $('confirm-reason').value.trim() || undefined } : undefined;
      if (a.id === 'drain') {
        body.mode = $('confirm-mode').value;
        if ($('confirm-wipe').checked) body.wipe = true;
      }
      if (a.id === 'reboot') {
        body.mode = $('confirm-reboot-mode').value;
        if ($('confirm-hold').checked) {
          body.powerOff = true;
          body.requester = $('confirm-requester').value.trim() || undefined;
        }
      }
      runAction(a, names, body);
    };
    dlg.showModal();
  }

  async function runAction(a, names, body) {
    const out = $('result');
    out.textContent = `${a.verb}: sending ${names.length}…`;
    const failed = [], plans = [];
    let done = 0, next = 0;
    const worker = async () => {
      while (next < names.length) {
        const n = names[next++];
        try {
          const it = await api(a.method, `${hostPath(n)}/intents/${a.kind}`, body);
          if (it && it.plan) plans.push(`${n}: ${it.plan.message}`);
          done++;
        } catch (e) {
          failed.push(`${n}: ${e.message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, names.length) }, worker));
    out.textContent = `${a.verb}: ${done} of ${names.length} accepted` +
      (failed.length ? `; ${failed.length} refused:\n` + failed.slice(0, 20).join('\n') + (failed.length > 20 ? `\n…and ${failed.length - 20} more` : '') : '') +
      (done ? '. Tiles change once the rack agent acknowledges.' : '') +
      (plans.length ? '\nplan (the coordinator\'s): ' + plans.slice(0, 20).join('\n') : '');
  }

  // ---------- panel ----------

  function closePanel() { st.panel = null; $('panel').hidden = true; }

  // openHost opens the panel of a host and reads the whole host (the
  // page holds only its slim record).
  function openHost(name) {
    const h = st.hosts.get(name);
    if (!h) return;
    st.panel = { kind: 'host', name, modifiedIndex: h.modifiedIndex, full: null, asked: 0 };
    $('panel-body').replaceChildren(el('h2', name), el('div', 'loading…'));
    $('panel').hidden = false;
    loadHostPanel(name, h.modifiedIndex);
  }

  // loadHostPanel reads the whole host of the open panel and renders it;
  // called again when the host changes (the watch says so).
  async function loadHostPanel(name, index) {
    const p = st.panel;
    p.modifiedIndex = Math.max(p.modifiedIndex, index);
    const asked = ++p.asked;
    try {
      const full = await api('GET', hostPath(name));
      if (st.panel !== p || p.asked !== asked) return; // closed, or a newer read is under way
      p.full = full;
      p.modifiedIndex = Math.max(p.modifiedIndex, full.modifiedIndex || 0);
      renderHostPanel(full, true);
    } catch (e) {
      if (st.panel !== p) return;
      if (e.status === 404) { renderGone(name); return; }
      $('panel-body').replaceChildren(el('h2', name), el('div', 'could not read the host: ' + e.message));
    }
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  // Config drive records are shown by name only: their content never
  // leaves the coordinator except to the rack's agent.
  function secretRef(r) { return r && r.name ? `record ${r.name}` : ''; }
  function rootHints(r) {
    if (!r) return '';
    return Object.keys(r).sort().map(k => `${k}=${r[k]}`).join(', ');
  }
  function kv(rows) {
    const t = el('table');
    for (const [k, v] of rows) {
      if (v === undefined || v === null || v === '') continue;
      const tr = el('tr'); tr.append(el('th', k), el('td', String(v)));
      t.append(tr);
    }
    return t;
  }
  function grid(head, rows) {
    const t = el('table', null, 'grid');
    const tr = el('tr'); for (const h of head) tr.append(el('th', h)); t.append(tr);
    for (const r of rows) { const x = el('tr'); for (const c of r) x.append(el('td', c === undefined ? '' : String(c))); t.append(x); }
    return t;
  }

  // Day two: desired BIOS settings beside the current ones (and what did
  // not take), the firmware inventory, the volumes and the last erase.
  function renderDayTwo(h, parts) {
    const d2 = (h.status && h.status.dayTwo) || {};
    const want = (h.bios && h.bios.settings) || {};
    const cur = (d2.bios && d2.bios.settings) || {};
    const note = {};
    for (const n of (d2.bios && d2.bios.notApplied) || []) note[n.name] = n.message || 'did not take';
    const names = [...new Set([...Object.keys(want), ...Object.keys(cur)])].sort();
    if (names.length) {
      const rows = names.map(k => [k, want[k] || '', cur[k] || '', note[k] || (want[k] && cur[k] && want[k] !== cur[k] ? 'differs' : '')]);
      const t = grid(['BIOS attribute', 'desired', 'current', 'note'], rows);
      t.id = 'panel-bios';
      parts.push(el('h3', 'BIOS'), t);
    }
    const fw = [...(h.firmware || []).map(c => [c.component, 'want ' + (c.version || '(any other)')]),
      ...(d2.firmware || []).map(f => [f.component, 'is ' + (f.version || '?')])];
    if (fw.length) parts.push(el('h3', 'Firmware'), kv(fw));
    const vols = (d2.hardwareRAIDVolumes || []).map(v => [`RAID ${v.level}${v.name ? ' ' + v.name : ''}`, `${v.sizeGibibytes || '?'} GiB on ${v.controller || '?'}`]);
    if (vols.length) parts.push(el('h3', 'Volumes'), kv(vols));
    if (d2.lastErase) parts.push(el('h3', 'Last erase'), kv([[d2.lastErase.time, (d2.lastErase.disks || []).join('; ')]]));
  }

  // renderHostPanel renders h, the whole host, in the open panel.
  function renderHostPanel(h, refetchEvents) {
    const body = $('panel-body');
    const s = h.status;
    const op = s ? s.operationalStatus : '';
    const parts = [];
    const title = el('h2', h.name);
    const pill = el('span', s ? `${s.provisioningState} / ${op}` : 'no status yet', 'pill');
    pill.id = 'panel-state';
    pill.style.background = OP_COLOR[op] || OP_COLOR[''];
    const r = st.racks.get(h.rack);
    const rackLine = el('div', `rack ${h.rack} · ` + (r && r.lease ? `held by ${r.lease.holder} (epoch ${r.lease.epoch})` : 'no lease holder'));
    parts.push(title, pill, rackLine);
    if (canAct()) {
      const acts = el('div', null, 'actions');
      const i = h.intents || {};
      for (const a of ACTIONS) {
        if (opRefused(h, a.id)) continue;
        if (a.id === 'detach' && i.detach) continue;
        if (a.id === 'attach' && !i.detach) continue;
        if (a.id === 'drain' && i.drain) continue;
        if (a.id === 'restore' && !i.drain) continue;
        const b = el('button', a.label); b.type = 'button'; b.dataset.action = a.id;
        b.addEventListener('click', () => confirmAction(a, [h.name], a.id === 'service' ? servicePlan(h) : null));
        acts.append(b);
      }
      // One release button per power-off hold (DELETE …/intents/reboot/KEY).
      for (const k of Object.keys(i.powerOff || {}).sort()) {
        const rel = { id: 'release', label: `Release ${k}`, verb: 'release', kind: 'reboot/' + encodeURIComponent(k), method: 'DELETE',
          what: `Withdraws the power-off held by ${k}: the host powers on again once no requester holds it off.` };
        const b = el('button', rel.label); b.type = 'button'; b.dataset.action = 'release'; b.dataset.requester = k;
        b.addEventListener('click', () => confirmAction(rel, [h.name]));
        acts.append(b);
      }
      const sel = el('button', st.selection.has(h.name) ? 'Unselect' : 'Add to selection');
      sel.type = 'button'; sel.dataset.action = 'toggle-select';
      sel.addEventListener('click', () => toggleSelect(h.name));
      acts.append(sel);
      parts.push(acts);
    }
    if (s && (s.errorType || s.errorMessage)) {
      parts.push(el('h3', 'Error'), kv([['type', s.errorType], ['message', s.errorMessage], ['count', s.errorCount]]));
    }
    parts.push(el('h3', 'Intents'));
    const it = h.intents || {};
    const irows = [];
    const irow = (k, x) => irows.push([k + (x.mode ? ` (${x.mode}${x.wipe ? ', wipe' : ''})` : ''), x.acknowledged ? `acknowledged (epoch ${x.ackEpoch})` : 'not acknowledged yet', x.actor, x.reason, x.createdIndex]);
    for (const k of INTENT_KINDS) if (it[k]) irow(k, it[k]);
    for (const k of Object.keys(it.powerOff || {}).sort()) irow(`power-off held by ${k}`, it.powerOff[k]);
    if (irows.length) {
      const t = grid(['kind', 'state', 'by', 'reason', 'index'], irows);
      t.id = 'panel-intents';
      for (const tr of t.querySelectorAll('tr')) { const c = tr.children[1]; if (c && c.tagName === 'TD') c.className = c.textContent.startsWith('ack') ? 'ack' : 'pending'; }
      parts.push(t);
    } else parts.push(el('div', 'none'));
    if (h.handoff || h.pivotedTo) {
      parts.push(el('h3', 'Pivot'), kv([['pivoted to tier', h.pivotedTo], ['from tier', h.handoff && h.handoff.sourceTier],
        ['source cluster', h.handoff && h.handoff.sourceClusterID], ['handoff confirmed', h.handoff ? (h.handoff.confirmed ? 'yes' : 'no: waiting for the source') : '']]));
    }
    parts.push(el('h3', 'Status'));
    parts.push(s ? kv([['provisioning state', s.provisioningState], ['operational status', s.operationalStatus],
      ['powered on', s.poweredOn ? 'yes' : 'no'], ['provisioning ID', s.provisioningID], ['reported under epoch', s.epoch],
      ['last updated', s.lastUpdated], ['error count', s.errorCount],
      ['hardware health', s.health ? `${s.health.health} since ${s.health.since}` : 'not read'],
      ['health by component', s.health ? Object.entries(s.health.components || {}).map(([k, v]) => `${k} ${v}`).join(', ') : ''],
      ['health problems', s.health ? (s.health.problems || []).join('; ') : '']]) : el('div', 'The rack agent has not reported this host yet.'));
    renderDayTwo(h, parts);
    parts.push(el('h3', 'Spec'));
    parts.push(kv([['rack', h.rack], ['BMC address', h.bmc && h.bmc.address], ['BMC credentials', h.bmc && h.bmc.credentials],
      ['skip TLS verification', h.bmc && h.bmc.disableCertificateVerification ? 'yes' : ''],
      ['boot MAC', h.bootMACAddress], ['online', h.online ? 'yes' : 'no'], ['externally provisioned', h.externallyProvisioned ? 'yes' : ''],
      ['image', h.image && h.image.url], ['image checksum', h.image && h.image.checksum],
      ['image checksum type', h.image && h.image.checksumType], ['image format', h.image && h.image.format],
      ['boot mode', h.bootMode || 'UEFI'], ['boot method', h.bootMethod || 'auto'], ['root device hints', rootHints(h.rootDeviceHints)],
      ['automated cleaning', h.automatedCleaningMode], ['user data', secretRef(h.userData)],
      ['network data', secretRef(h.networkData)], ['meta data', secretRef(h.metaData)],
      ['ramdisk network data', secretRef(h.preprovisioningNetworkData)], ['consumer', h.consumer],
      ['deletion requested', h.deletionRequested ? 'yes' : ''], ['created / spec / modified index', `${h.createdIndex} / ${h.specIndex} / ${h.modifiedIndex}`]]));
    const hwBox = el('div'); hwBox.id = 'panel-hw';
    parts.push(hwBox);
    parts.push(el('h3', 'Events'));
    const evBox = el('div', 'loading…'); evBox.id = 'panel-events';
    const old = $('panel-events');
    if (!refetchEvents && old) evBox.replaceChildren(...old.childNodes);
    parts.push(evBox);
    body.replaceChildren(...parts);
    renderHardware(h, hwBox);
    if (refetchEvents) loadEvents(h.name, evBox);
  }

  // OPERATIONS are status.operationHistory's operations, in lifecycle
  // order, with the provisioning state each runs in.
  const OPERATIONS = [['register', 'registering'], ['inspect', 'inspecting'], ['provision', 'provisioning'], ['deprovision', 'deprovisioning']];

  // opDuration renders milliseconds as rackfencectl does: 4.2 s, 12m5s.
  function opDuration(ms) {
    if (!(ms >= 0)) return '';
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    const s = Math.round(ms / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return (h ? `${h}h` : '') + ((h || m) ? `${m}m` : '') + `${s % 60}s`;
  }

  // renderOperations is the host's operation history as a small table:
  // when each operation started and ended and how long it took; a running
  // one says so, one that failed or was abandoned says it did not finish.
  function renderOperations(s) {
    const oh = s && s.operationHistory;
    if (!oh) return [];
    const rows = [];
    for (const [op, state] of OPERATIONS) {
      const m = oh[op];
      if (!m || !m.start) continue;
      const start = new Date(m.start);
      let ended, took;
      if (m.end) { ended = new Date(m.end).toLocaleString(); took = opDuration(new Date(m.end) - start); }
      else if (s.provisioningState === state) { ended = 'running'; took = opDuration(Date.now() - start) + ' so far'; }
      else { ended = 'did not finish'; took = ''; }
      rows.push([op, start.toLocaleString(), ended, took]);
    }
    if (!rows.length) return [];
    const t = grid(['operation', 'started', 'ended', 'took'], rows);
    t.id = 'panel-ops';
    return [el('h3', 'Operations'), t];
  }

  function renderHardware(full, box) {
    const hw = full.status && full.status.hardwareDetails;
    const bmc = full.status && full.status.bmcDetails;
    const parts = [...renderOperations(full.status)];
    if (bmc) {
      parts.push(el('h3', 'BMC'));
      const vm = bmc.virtualMedia ? `${bmc.virtualMedia} (${bmc.virtualMediaMethod || '?'})` : (bmc.protocol === 'redfish' ? 'none taking CD or DVD' : '');
      parts.push(kv([['protocol', bmc.protocol], ['Redfish', bmc.redfishVersion], ['vendor', [bmc.vendor, bmc.model].filter(Boolean).join(' ')],
        ['firmware', bmc.firmwareVersion], ['auth', bmc.auth], ['system', bmc.system], ['manager', bmc.manager],
        ['virtual media', vm], ['boot modes', (bmc.bootModes || []).join(', ')]]));
      if (bmc.problems && bmc.problems.length) {
        const w = el('div', 'cannot: ' + bmc.problems.join('; '));
        w.className = 'warn';
        parts.push(w);
      }
    }
    if (hw) {
      parts.push(el('h3', 'Hardware'));
      parts.push(kv([['manufacturer', hw.manufacturer], ['model', hw.model], ['serial', hw.serialNumber], ['UUID', hw.systemUUID], ['BIOS', hw.biosVersion],
        ['memory', hw.memoryMiB ? `${hw.memoryMiB} MiB` : '']]));
      if (hw.cpus && hw.cpus.length) parts.push(grid(['CPU', 'cores', 'threads'], hw.cpus.map((c) => [c.model, c.cores, c.threads])));
      if (hw.nics && hw.nics.length) parts.push(grid(['NIC', 'MAC', 'Mbps'], hw.nics.map((n) => [n.name, n.mac, n.speedMbps])));
      if (hw.disks && hw.disks.length) parts.push(grid(['disk', 'model', 'size', 'type'], hw.disks.map((d) => [d.name, d.model, d.sizeBytes ? `${(d.sizeBytes / 1e9).toFixed(0)} GB` : '', d.type])));
      if (hw.firmware && hw.firmware.length) parts.push(grid(['firmware', 'version'], hw.firmware.map((f) => [f.name, f.version])));
      if (hw.accelerators && hw.accelerators.length) parts.push(grid(['accelerator', 'type', 'model'], hw.accelerators.map((x) => [x.name, x.type, x.model])));
    }
    box.replaceChildren(...parts);
  }

  async function loadEvents(name, box) {
    try {
      const list = await api('GET', `${hostPath(name)}/events`);
      if (!st.panel || st.panel.name !== name) return;
      const items = (list.items || []).slice().reverse();
      if (!items.length) { box.textContent = 'none'; return; }
      const t = grid(['time', 'type', 'reason', 'message'], items.map((e) => [new Date(e.time).toLocaleTimeString(), e.type, e.reason, e.message]));
      t.querySelectorAll('tr').forEach((tr, i) => { if (i > 0 && items[i - 1].type === 'Warning') tr.className = 'warn'; });
      box.replaceChildren(t);
    } catch (e) {
      box.textContent = 'could not read the events: ' + e.message;
    }
  }

  function renderGone(name) {
    $('panel-body').replaceChildren(el('h2', name), el('div', 'This host no longer exists (deleted or removed).'));
    st.panel.modifiedIndex = -2;
    st.panel.asked++;
  }

  async function openRack(name) {
    st.panel = { kind: 'rack', name };
    const body = $('panel-body');
    const r = st.racks.get(name);
    body.replaceChildren(el('h2', 'rack ' + name),
      el('div', r && r.lease ? `held by ${r.lease.holder} under epoch ${r.lease.epoch}, TTL ${r.lease.ttl}` : 'no lease holder now'),
      el('h3', 'Lease history (newest first)'), el('div', 'loading…'));
    $('panel').hidden = false;
    try {
      const list = await api('GET', `/v1/racks/${encodeURIComponent(name)}/leases`);
      if (!st.panel || st.panel.name !== name) return;
      const items = (list.items || []).slice().reverse();
      const t = grid(['epoch', 'holder', 'granted', 'ended', 'how'], items.map((l) => [l.epoch, l.holder,
        new Date(l.grantedAt).toLocaleString(), l.endedAt ? new Date(l.endedAt).toLocaleString() : 'current', l.end || '']));
      t.id = 'panel-leases';
      body.lastChild.replaceWith(items.length ? t : el('div', 'no lease was ever granted'));
    } catch (e) {
      body.lastChild.textContent = 'could not read the lease history: ' + e.message;
    }
  }

  // ---------- test and measurement hooks ----------
  // Read-only views of what is drawn, for the browser test and the scale
  // benchmark (they sample the canvas itself to check a tile's colour).
  window.rackfence = {
    tile(name) {
      const h = st.hosts.get(name);
      if (!h) return null;
      const out = { name, rack: h.rack, drawn: false, provisioningState: h.prov,
        operationalStatus: h.op, intents: h.intents || null, opColor: OP_COLOR[h.op] };
      const r = st.racks.get(h.rack);
      if (!r || !r.geom || !r.el) return out; // not on screen: no section
      const i = rackOrder(r).indexOf(name);
      const { g } = r.geom;
      const x = g.gap + (i % g.cols) * (g.w + g.gap), y = g.gap + Math.floor(i / g.cols) * (g.h + g.gap);
      const rect = r.canvas.getBoundingClientRect();
      const dpr = window.devicePixelRatio || 1;
      // Sample the status stripe (named tiles) or border (compact tiles).
      const px = r.canvas.getContext('2d').getImageData(Math.round((x + 1.5) * dpr), Math.round((y + g.h / 2) * dpr), 1, 1).data;
      return Object.assign(out, { drawn: !r.dirty && !r.changed.has(name), x: rect.left + x, y: rect.top + y, w: g.w, h: g.h,
        stripe: [px[0], px[1], px[2]] });
    },
    stats() {
      const t = totals();
      return { hosts: st.hosts.size, racks: st.racks.size, index: st.index, renders: st.renders, loaded: st.loaded, pages: st.pages,
        firstPaintMs: st.firstPaint, loadedMs: st.loadedAt, firstLoad: st.firstLoad, domNodes: document.getElementsByTagName('*').length,
        canvases: document.getElementsByTagName('canvas').length, mode: tileMode(),
        totals: { hosts: t.hosts, error: t.err, detached: t.det, maintenance: t.maint, unacknowledged: t.pend },
        filter: st.appliedFilter, matching: st.matching };
    },
    // scrollToRack scrolls the rack to the top of the window (a rack off
    // screen has no section to scroll into view).
    scrollToRack(name) {
      const r = st.racks.get(name);
      if (!r || r.y === undefined) return false;
      window.scrollTo(0, $('racks').getBoundingClientRect().top + window.scrollY + r.y - 60);
      scheduleRender();
      return true;
    },
    drawnAt(name) { return st.drawnAt.has(name) ? st.drawnAt.get(name) : null; },
    receivedAt(name) { return st.receivedAt.has(name) ? st.receivedAt.get(name) : null; },
  };

  // ---------- wiring ----------

  setInterval(() => {
    const now = performance.now();
    for (const r of st.racks.values()) if (r.visible) tickRack(r, now);
  }, 250);

  $('login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const tok = $('token').value.trim();
    $('login-error').textContent = '';
    $('login-btn').disabled = true;
    try { await signIn(tok); } catch (e) {
      st.token = '';
      $('login-error').textContent = e.status === 401 ? 'This token is not known to the cluster: check you copied all of it.' : e.message;
    } finally { $('login-btn').disabled = false; }
  });
  $('signout').addEventListener('click', () => signOut(''));
  // Scrolling and resizing move the window of racks that have a section.
  window.addEventListener('scroll', scheduleRender, { passive: true });
  new ResizeObserver(() => { if ($('racks').clientWidth !== st.gridWidth) scheduleRender(); }).observe($('racks'));
  $('panel-close').addEventListener('click', closePanel);
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && !$('confirm').open) closePanel(); });
  let filterTimer = 0;
  $('filter').addEventListener('input', () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => {
      st.filter = $('filter').value.trim();
      for (const r of st.racks.values()) r.dirty = r.headDirty = true;
      scheduleRender();
    }, 120);
  });
  $('filter').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      const v = $('filter').value.trim();
      if (st.hosts.has(v)) openHost(v);
    }
  });

  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) {
    signIn(saved).catch((e) => signOut(e.status === 401 ? 'The saved token is no longer accepted; sign in again.' : 'Could not sign in: ' + e.message));
  } else {
    signOut('');
  }
})();
