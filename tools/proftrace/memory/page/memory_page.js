// The memory page's script: reads the report embedded in #memory-data (the
// same document as `proftrace memory --json`) and draws, per memory space, a
// zoomable timeline stacked by kind with peak and failure markers, hover
// details and the table of allocations live at the peak. No network, no
// library: plain DOM and SVG.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('memory-data').textContent);
  const root = document.getElementById('memory-report');
  const SVG = 'http://www.w3.org/2000/svg';

  // ---- formatting (as the terminal report writes it)
  function bytes(n) {
    if (n < 1024) return n + ' B';
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let value = n / 1024, unit = 0;
    while (value >= 1024 && unit + 1 < units.length) { value /= 1024; unit++; }
    return value.toFixed(1) + ' ' + units[unit];
  }
  function seconds(ns) { return (ns / 1e9).toFixed(3) + ' s'; }
  function duration(ns) {
    if (ns < 1e3) return ns + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(1) + ' us';
    if (ns < 1e9) return (ns / 1e6).toFixed(1) + ' ms';
    return (ns / 1e9).toFixed(1) + ' s';
  }
  function grouped(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function who(a) { return a.api + ', thread ' + a.tid + (a.thread ? ' (' + a.thread + ')' : ''); }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  }

  // ---- what a space's timeline holds
  const DEVICE_SERIES = [
    { column: 'device_bytes', label: 'cuMemAlloc / cudaMalloc', color: '#4e79a7' },
    { column: 'pool_bytes', label: 'stream-ordered (cudaMallocAsync)', color: '#59a14f' },
    { column: 'mapped_bytes', label: 'VMM mapped (expandable segments)', color: '#f28e2b' },
  ];
  const HOST_SERIES = [
    { column: 'pinned_bytes', label: 'pinned (cudaMallocHost)', color: '#b07aa1' },
    { column: 'registered_bytes', label: 'registered (cudaHostRegister)', color: '#ff9da7' },
  ];

  function Timeline(space) {
    const columns = {};
    space.timeline_columns.forEach((name, i) => { columns[name] = i; });
    this.rows = space.timeline;
    this.columns = columns;
  }
  // The last row at or before t (the state from then on), or null before the first.
  Timeline.prototype.at = function (t) {
    let lo = 0, hi = this.rows.length - 1, found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.rows[mid][0] <= t) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found < 0 ? null : this.rows[found];
  };
  Timeline.prototype.value = function (row, column) { return row ? row[this.columns[column]] : 0; };

  // ---- one chart
  const WIDTH = 960, HEIGHT = 280, LEFT = 78, RIGHT = 16, TOP = 14, BOTTOM = 30;

  function Chart(box, space, failures, intervals) {
    this.space = space;
    this.host = space.device === 'host';
    this.series = this.host ? HOST_SERIES : DEVICE_SERIES;
    this.timeline = new Timeline(space);
    this.failures = failures;
    this.intervals = intervals;
    const span = Math.max(space.last_ns - space.first_ns, 1000);
    this.home = [Math.max(0, space.first_ns - span * 0.02), space.last_ns + span * 0.02];
    this.view = this.home.slice();
    const peakField = this.host ? 'peak_pinned' : 'peak_allocated';
    this.peak = space[peakField];
    // Scaled to what was held: a failed request of many times the device
    // would flatten everything else (its size is in the marker's tooltip).
    const top = Math.max(this.peak.bytes, this.host ? 0 : space.peak_reserved.bytes, space.peak_managed.bytes);
    this.yMax = Math.max(top * 1.12, 1024);

    const tools = el('div', { class: 'chart-tools' });
    const buttons = [['+', 'zoom in', () => this.zoom(0.5, 0.5)], ['\u2212', 'zoom out', () => this.zoom(2, 0.5)],
                     ['reset', 'show everything', () => this.reset()]];
    for (const [label, title, action] of buttons) {
      const button = el('button', { type: 'button', title: title, class: 'zoom-' + title.replace(/ /g, '-') }, label);
      button.addEventListener('click', action);
      tools.appendChild(button);
    }
    box.appendChild(tools);
    const legend = el('div', { class: 'legend' });
    for (const s of this.series) legend.appendChild(el('span', { style: '--swatch:' + s.color }, s.label));
    if (!this.host) legend.appendChild(el('span', { style: '--swatch:repeating-linear-gradient(90deg,#333 0 3px,#fff 3px 6px)' }, 'reserved'));
    if (space.peak_managed.bytes > 0) legend.appendChild(el('span', { style: '--swatch:#e15759' }, 'managed (not stacked)'));
    box.appendChild(legend);

    this.svg = svg('svg', { class: 'chart', width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}` });
    box.appendChild(this.svg);
    this.details = el('div', { class: 'hover-details', hidden: '' });
    box.appendChild(this.details);
    this.bind();
    this.draw();
  }

  Chart.prototype.x = function (t) {
    return LEFT + (t - this.view[0]) / (this.view[1] - this.view[0]) * (WIDTH - LEFT - RIGHT);
  };
  Chart.prototype.timeAt = function (px) {
    return this.view[0] + (px - LEFT) / (WIDTH - LEFT - RIGHT) * (this.view[1] - this.view[0]);
  };
  Chart.prototype.y = function (b) { return HEIGHT - BOTTOM - b / this.yMax * (HEIGHT - TOP - BOTTOM); };

  Chart.prototype.zoom = function (factor, anchor) {
    const [t0, t1] = this.view;
    const at = t0 + (t1 - t0) * anchor;
    const width = Math.max((t1 - t0) * factor, 1000);
    this.view = [at - width * anchor, at - width * anchor + width];
    this.draw();
  };
  Chart.prototype.reset = function () { this.view = this.home.slice(); this.draw(); };

  // Step-function path of `top(row)` stacked on `bottom(row)` over the view.
  Chart.prototype.area = function (top, bottom) {
    const rows = this.timeline.rows, [t0, t1] = this.view;
    const upper = [], lower = [];
    let previous = this.timeline.at(t0);
    const push = (t, row) => {
      upper.push([this.x(t), this.y(top(row))]);
      lower.push([this.x(t), this.y(bottom(row))]);
    };
    push(t0, previous);
    for (const row of rows) {
      if (row[0] <= t0) continue;
      if (row[0] > t1) break;
      push(row[0], previous);
      push(row[0], row);
      previous = row;
    }
    push(t1, previous);
    const points = upper.concat(lower.reverse());
    return 'M' + points.map(p => p[0].toFixed(1) + ',' + p[1].toFixed(1)).join('L') + 'Z';
  };
  Chart.prototype.line = function (value) {
    const rows = this.timeline.rows, [t0, t1] = this.view;
    let previous = this.timeline.at(t0);
    const points = [[this.x(t0), this.y(value(previous))]];
    for (const row of rows) {
      if (row[0] <= t0) continue;
      if (row[0] > t1) break;
      points.push([this.x(row[0]), this.y(value(previous))], [this.x(row[0]), this.y(value(row))]);
      previous = row;
    }
    points.push([this.x(t1), this.y(value(previous))]);
    return 'M' + points.map(p => p[0].toFixed(1) + ',' + p[1].toFixed(1)).join('L');
  };

  Chart.prototype.draw = function () {
    const s = this.svg, tl = this.timeline;
    while (s.firstChild) s.removeChild(s.firstChild);
    s.setAttribute('data-view-start-ns', Math.round(this.view[0]));
    s.setAttribute('data-view-end-ns', Math.round(this.view[1]));
    const clip = 'clip-' + this.space.id.replace(/[^a-zA-Z0-9]/g, '_');
    const defs = svg('defs');
    const clipPath = svg('clipPath', { id: clip });
    clipPath.appendChild(svg('rect', { x: LEFT, y: 0, width: WIDTH - LEFT - RIGHT, height: HEIGHT - BOTTOM }));
    defs.appendChild(clipPath);
    s.appendChild(defs);
    this.drawAxes();
    const plot = svg('g', { 'clip-path': `url(#${clip})` });
    s.appendChild(plot);
    let stacked = [];
    for (const series of this.series) {
      const below = stacked.slice();
      const bottom = row => below.reduce((sum, c) => sum + tl.value(row, c), 0);
      const top = row => bottom(row) + tl.value(row, series.column);
      plot.appendChild(svg('path', { class: 'area ' + series.column, d: this.area(top, bottom), fill: series.color, 'fill-opacity': 0.75 }));
      stacked.push(series.column);
    }
    if (!this.host)
      plot.appendChild(svg('path', { class: 'line reserved', d: this.line(row => tl.value(row, 'reserved_bytes')), fill: 'none', stroke: '#333', 'stroke-dasharray': '5 3' }));
    if (this.space.peak_managed.bytes > 0)
      plot.appendChild(svg('path', { class: 'line managed', d: this.line(row => tl.value(row, 'managed_bytes')), fill: 'none', stroke: '#e15759', 'stroke-dasharray': '2 2' }));
    this.drawMarkers(s);
    this.cursor = svg('line', { class: 'cursor', y1: TOP, y2: HEIGHT - BOTTOM, visibility: 'hidden' });
    s.appendChild(this.cursor);
  };

  Chart.prototype.drawAxes = function () {
    const s = this.svg, axis = svg('g', { class: 'axis' }), grid = svg('g', { class: 'grid' });
    for (let i = 0; i <= 4; i++) {
      const b = this.yMax * i / 4, y = this.y(b);
      grid.appendChild(svg('line', { x1: LEFT, x2: WIDTH - RIGHT, y1: y, y2: y }));
      const label = svg('text', { x: LEFT - 6, y: y + 4, 'text-anchor': 'end' });
      label.textContent = bytes(Math.round(b));
      axis.appendChild(label);
    }
    const [t0, t1] = this.view;
    const rough = (t1 - t0) / 8, power = Math.pow(10, Math.floor(Math.log10(rough)));
    const step = [1, 2, 5, 10].map(m => m * power).find(v => v >= rough);
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = this.x(t);
      axis.appendChild(svg('line', { x1: x, x2: x, y1: HEIGHT - BOTTOM, y2: HEIGHT - BOTTOM + 4 }));
      const label = svg('text', { x: x, y: HEIGHT - BOTTOM + 16, 'text-anchor': 'middle' });
      label.textContent = (t / 1e9).toFixed(Math.max(0, Math.min(6, -Math.floor(Math.log10(step / 1e9)))) ) + ' s';
      axis.appendChild(label);
    }
    axis.appendChild(svg('path', { d: `M${LEFT},${TOP}V${HEIGHT - BOTTOM}H${WIDTH - RIGHT}`, fill: 'none' }));
    s.appendChild(grid);
    s.appendChild(axis);
  };

  // Markers stay in the document when out of view (hidden), so that what the
  // page says about the peak and the failures does not depend on the zoom.
  Chart.prototype.drawMarkers = function (s) {
    const inView = t => t >= this.view[0] && t <= this.view[1];
    if (this.peak.bytes > 0) {
      const g = svg('g', { class: 'peak-marker', 'data-bytes': this.peak.bytes, 'data-time-ns': this.peak.time_ns,
                           visibility: inView(this.peak.time_ns) ? 'visible' : 'hidden' });
      const x = this.x(this.peak.time_ns), y = this.y(this.peak.bytes);
      g.appendChild(svg('circle', { cx: x, cy: y, r: 5 }));
      const label = svg('text', { x: x + 8, y: Math.max(y - 6, TOP + 10) });
      label.textContent = 'peak ' + bytes(this.peak.bytes) + ' at ' + seconds(this.peak.time_ns);
      g.appendChild(label);
      const title = svg('title');
      title.textContent = label.textContent;
      g.appendChild(title);
      s.appendChild(g);
    }
    for (const f of this.failures) {
      const held = this.host ? f.state.pinned_bytes + f.state.registered_bytes : f.state.allocated_bytes;
      const x = this.x(f.time_ns), y = this.y(held);
      const g = svg('g', { class: 'oom-marker', 'data-time-ns': f.time_ns, 'data-requested-bytes': f.requested_bytes,
                           'data-result': f.result_name, visibility: inView(f.time_ns) ? 'visible' : 'hidden' });
      g.appendChild(svg('path', { d: `M${x},${y}l-6,-11h12z` }));
      const title = svg('title');
      title.textContent = f.message;
      g.appendChild(title);
      s.appendChild(g);
    }
  };

  Chart.prototype.bind = function () {
    const s = this.svg;
    const local = e => {
      const r = s.getBoundingClientRect();
      return (e.clientX - r.left) * WIDTH / r.width;
    };
    s.addEventListener('wheel', e => {
      e.preventDefault();
      const px = Math.min(Math.max(local(e), LEFT), WIDTH - RIGHT);
      this.zoom(e.deltaY < 0 ? 0.8 : 1.25, (px - LEFT) / (WIDTH - LEFT - RIGHT));
    }, { passive: false });
    let drag = null;
    s.addEventListener('mousedown', e => { drag = { px: local(e), view: this.view.slice() }; });
    window.addEventListener('mouseup', () => { drag = null; });
    s.addEventListener('mousemove', e => {
      const px = local(e);
      if (drag && e.buttons === 1) {
        const shift = (px - drag.px) / (WIDTH - LEFT - RIGHT) * (drag.view[1] - drag.view[0]);
        this.view = [drag.view[0] - shift, drag.view[1] - shift];
        this.draw();
      }
      this.hover(px);
    });
    s.addEventListener('mouseleave', () => { this.details.hidden = true; this.cursor.setAttribute('visibility', 'hidden'); });
    s.addEventListener('dblclick', () => this.reset());
  };

  // What was live at the time under the pointer: the totals, and the largest
  // allocations among those the page carries (all of them on small traces).
  Chart.prototype.hover = function (px) {
    if (px < LEFT || px > WIDTH - RIGHT) return;
    const t = this.timeAt(px), tl = this.timeline, row = tl.at(t);
    this.cursor.setAttribute('x1', px);
    this.cursor.setAttribute('x2', px);
    this.cursor.setAttribute('visibility', 'visible');
    const d = this.details;
    d.textContent = '';
    d.appendChild(el('div', {}, 'at ' + seconds(t)));
    const totals = el('table', { class: 'totals' });
    const add = (label, value) => {
      const tr = el('tr');
      tr.appendChild(el('td', {}, label));
      tr.appendChild(el('td', { class: 'bytes' }, bytes(value)));
      totals.appendChild(tr);
    };
    if (this.host) {
      add('pinned', tl.value(row, 'pinned_bytes'));
      add('registered', tl.value(row, 'registered_bytes'));
    } else {
      add('allocated', tl.value(row, 'allocated_bytes'));
      add('reserved', tl.value(row, 'reserved_bytes'));
      for (const s of this.series) add(s.label, tl.value(row, s.column));
      if (this.space.peak_managed.bytes > 0) add('managed', tl.value(row, 'managed_bytes'));
    }
    d.appendChild(totals);
    const all = this.intervals.filter(a => a.time_ns <= t && (a.end_ns === null || a.end_ns > t))
                              .sort((a, b) => b.bytes - a.bytes);
    // Managed memory is not part of what the chart stacks: listed on its own.
    const live = all.filter(a => a.kind !== 'managed'), managed = all.filter(a => a.kind === 'managed');
    const listing = (items, className, heading) => {
      d.appendChild(el('div', {}, heading));
      const list = el('ul', { class: className });
      for (const a of items.slice(0, 8)) {
        list.appendChild(el('li', { 'data-bytes': a.bytes },
                            bytes(a.bytes) + ' ' + a.kind + ', ' + who(a) + ', since ' + seconds(a.time_ns)));
      }
      d.appendChild(list);
      if (items.length > 8) d.appendChild(el('div', { class: 'note' }, '... and ' + (items.length - 8) + ' more'));
    };
    listing(live, 'live-here', live.length ? 'live allocations, largest first:' : 'no allocation live here');
    if (managed.length) listing(managed, 'managed-here', 'managed allocations:');
    d.hidden = false;
  };

  // ---- tables and lists
  function allocationTable(rows, className, reference, referenceLabel) {
    const table = el('table', { class: 'allocations ' + className });
    const head = el('tr');
    for (const h of ['size', referenceLabel, 'kind', 'allocated by', 'stack', 'address'])
      head.appendChild(el('th', {}, h));
    table.appendChild(el('thead')).appendChild(head);
    const body = el('tbody');
    for (const a of rows) {
      const tr = el('tr', { 'data-bytes': a.bytes, 'data-address': a.address });
      tr.appendChild(el('td', { class: 'bytes' }, bytes(a.bytes)));
      tr.appendChild(el('td', {}, referenceLabel === 'age' ? duration(Math.max(0, reference - a.time_ns)) : seconds(a.time_ns)));
      tr.appendChild(el('td', {}, a.kind));
      tr.appendChild(el('td', {}, who(a)));
      tr.appendChild(el('td', { class: 'stack' }, a.stack === null ? '-' : a.stack));
      tr.appendChild(el('td', {}, a.address));
      body.appendChild(tr);
    }
    table.appendChild(body);
    return table;
  }

  function renderSpace(space) {
    const section = el('section', { class: 'space', 'data-space-id': space.id });
    section.appendChild(el('h2', {}, space.label + ' \u2014 pid ' + space.pid + ' (' + space.process + ')'));
    const peak = space.device === 'host' ? space.peak_pinned : space.peak_allocated;
    let summary = (space.device === 'host' ? 'peak pinned ' : 'peak allocated ') + bytes(peak.bytes) + ' at ' + seconds(peak.time_ns);
    if (space.device !== 'host') summary += '; peak reserved ' + bytes(space.peak_reserved.bytes) + ' at ' + seconds(space.peak_reserved.time_ns);
    summary += '; ' + grouped(space.allocations) + ' allocations, ' + grouped(space.frees) + ' frees, ' + grouped(space.failures) + ' failed';
    if (space.leaked_blocks > 0) summary += '; never freed: ' + grouped(space.leaked_blocks) + ' blocks, ' + bytes(space.leaked_bytes);
    section.appendChild(el('p', { class: 'summary' }, summary));
    const box = el('div', { class: 'chart-box' });
    section.appendChild(box);
    const failures = data.failures.filter(f => f.space === space.id);
    const intervals = data.intervals.filter(a => a.space === space.id);
    new Chart(box, space, failures, intervals);
    section.appendChild(el('h3', {}, 'Live at the peak (' + seconds(peak.time_ns) + '): ' + grouped(space.live_at_peak_count) + ' allocations'));
    section.appendChild(allocationTable(space.live_at_peak, 'live-at-peak', peak.time_ns, 'age'));
    if (space.live_at_peak_count > space.live_at_peak.length)
      section.appendChild(el('p', { class: 'note' }, (space.live_at_peak_count - space.live_at_peak.length) +
        ' smaller allocations not listed (' + bytes(space.live_at_peak_unlisted_bytes) + ')'));
    if (failures.length) {
      section.appendChild(el('h3', {}, 'Failed allocations (' + failures.length + ')'));
      const list = el('ul', { class: 'failures' });
      for (const f of failures) list.appendChild(el('li', { 'data-time-ns': f.time_ns }, f.message));
      section.appendChild(list);
    }
    root.appendChild(section);
  }

  const c = data.counters;
  root.appendChild(el('p', { class: 'summary' }, grouped(c.allocations) + ' allocations, ' + grouped(c.frees) + ' frees, ' +
                       grouped(c.failed_allocations) + ' failed allocations in ' + data.spaces.length + ' memory spaces'));
  if (!data.spaces.length) root.appendChild(el('p', {}, 'No allocation was recorded in this trace.'));
  data.spaces.forEach(renderSpace);
  if (data.leaks.length) {
    root.appendChild(el('h2', {}, 'Never freed by exit'));
    root.appendChild(allocationTable(data.leaks, 'leaks', 0, 'allocated at'));
  }
  const notes = [];
  if (c.unknown_frees) notes.push(c.unknown_frees + ' frees of addresses never seen allocated');
  if (c.lost_records) notes.push(c.lost_records + ' records were lost while tracing: allocations may be missing');
  if (c.late_events) notes.push(c.late_events + ' events arrived far out of time order');
  for (const n of notes) root.appendChild(el('p', { class: 'note' }, n));
  document.body.setAttribute('data-ready', 'true');
})();
