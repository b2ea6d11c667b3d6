// The report page's script: reads the analyses embedded in #report-data (the
// tables `proftrace stats --json` writes, plus the code view by function,
// file and module) and draws the tabs: overview, recommendations, kernels,
// memory operations, code, memory (drawn by the memory page's own script
// into #tab-memory), distributed, and every other table. Tables sort,
// filter and expand; charts are plain SVG. No network, no library.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('report-data').textContent);
  const root = document.getElementById('report');
  const nav = document.getElementById('tabs');
  const SVG = 'http://www.w3.org/2000/svg';
  const used = new Set();  // tables a tab has shown (the rest go to "other tables")

  // ---- formatting
  function grouped(n) {
    const [whole, fraction] = String(n).split('.');
    return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (fraction !== undefined ? '.' + fraction : '');
  }
  function duration(ns) {
    if (ns === null || ns === undefined) return '-';
    const a = Math.abs(ns);
    if (a < 1e3) return ns + ' ns';
    if (a < 1e6) return (ns / 1e3).toFixed(2) + ' us';
    if (a < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
  }
  function bytes(n) {
    if (n === null || n === undefined) return '-';
    if (n < 1024) return n + ' B';
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let value = n / 1024, unit = 0;
    while (value >= 1024 && unit + 1 < units.length) { value /= 1024; unit++; }
    return value.toFixed(1) + ' ' + units[unit];
  }
  // How a column's numbers read, by its name ("Total Time (ns)", "Share (%)", "Bytes Allocated").
  function columnKind(name) {
    if (/\(ns\)$/.test(name)) return 'ns';
    if (/\(%\)$/.test(name)) return 'percent';
    if (/bytes/i.test(name) && !/GB\/s|bandwidth/i.test(name)) return 'bytes';
    if (/^(PID|TID|Device|Rank|Step|Sequence|Id)$/i.test(name)) return 'id';
    return 'number';
  }
  function formatCell(value, kind) {
    if (value === null || value === undefined) return '-';
    if (typeof value !== 'number') return String(value);
    if (kind === 'ns') return duration(value);
    if (kind === 'percent') return value.toFixed(1) + ' %';
    if (kind === 'bytes') return bytes(value);
    if (kind === 'id') return String(value);
    return grouped(value);
  }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- the analyses
  const tables = data.stats.tables;
  function tablesOf(section) { return tables.filter(t => t.section === section); }
  function tableOf(section, titleStart) {
    return tables.find(t => t.section === section && (!titleStart || t.title.startsWith(titleStart))) || null;
  }

  // A floating box that follows the pointer over charts.
  const tip = el('div', { class: 'chart-tip', hidden: '' });
  document.body.appendChild(tip);
  function showTip(event, lines) {
    tip.textContent = '';
    for (const line of lines) tip.appendChild(el('div', {}, line));
    tip.hidden = false;
    tip.style.left = Math.min(event.clientX + 14, window.innerWidth - 540) + 'px';
    tip.style.top = (event.clientY + 14) + 'px';
  }
  function hideTip() { tip.hidden = true; }

  // ---- sortable, filterable, expandable table
  // `table`: {section, title, columns, rows: [{column: value, stack?: [frames]}], notes}.
  function DataTable(table, options) {
    used.add(table);
    options = options || {};
    this.table = table;
    this.kinds = table.columns.map(columnKind);
    this.box = el('div', { class: 'data-table', 'data-section': table.section, 'data-title': table.title });
    if (!options.untitled) this.box.appendChild(el('h3', {}, table.title));
    const tools = el('div', { class: 'table-tools' });
    this.filter = el('input', { type: 'search', placeholder: 'filter rows', 'aria-label': 'filter ' + table.title });
    this.count = el('span', { class: 'row-count' });
    tools.appendChild(this.filter);
    tools.appendChild(this.count);
    this.box.appendChild(tools);
    this.element = el('table', { class: 'data' });
    const head = el('tr');
    this.headers = table.columns.map((name, c) => {
      const th = el('th', { 'data-column': name, scope: 'col' }, name);
      th.addEventListener('click', () => this.sortBy(c));
      head.appendChild(th);
      return th;
    });
    this.element.appendChild(el('thead')).appendChild(head);
    this.body = el('tbody');
    this.element.appendChild(this.body);
    this.box.appendChild(this.element);
    this.items = table.rows.map((row, index) => this.makeRow(row, index));
    this.items.forEach(item => this.body.appendChild(item.tr));
    if (table.notes && table.notes.length) {
      const notes = el('ul', { class: 'notes' });
      for (const n of table.notes) notes.appendChild(el('li', {}, n));
      this.box.appendChild(notes);
    }
    this.filter.addEventListener('input', () => this.applyFilter(this.filter.value));
    this.applyFilter('');
  }
  DataTable.prototype.makeRow = function (row, index) {
    const tr = el('tr', { 'data-index': index });
    const text = [];
    this.table.columns.forEach((name, c) => {
      const value = row[name];
      const numeric = typeof value === 'number' || value === null;
      const shown = formatCell(value, this.kinds[c]);
      // Short text stays on one line (the table scrolls sideways); long text wraps.
      const td = el('td', { class: numeric ? 'num' : shown.length > 48 ? 'text long' : 'text' }, shown);
      td.setAttribute('data-value', value === null || value === undefined ? '' : String(value));
      if (numeric && this.kinds[c] === 'ns' && value !== null) td.title = grouped(value) + ' ns';
      tr.appendChild(td);
      text.push(String(value === null ? '-' : value));
    });
    const item = { tr: tr, row: row, text: text.join('\u0001').toLowerCase(), stackRow: null };
    if (row.stack && row.stack.length) {
      tr.classList.add('has-stack');
      tr.title = 'click for the call stack';
      tr.addEventListener('click', () => this.toggleStack(item));
    }
    return item;
  };
  DataTable.prototype.toggleStack = function (item) {
    if (item.stackRow) {
      item.stackRow.remove();
      item.stackRow = null;
      item.tr.classList.remove('expanded');
      return;
    }
    const tr = el('tr', { class: 'stack-row' });
    const td = el('td', { colspan: this.table.columns.length });
    td.appendChild(el('div', { class: 'note' }, 'heaviest call stack, root first:'));
    const list = el('ol', { class: 'stack' });
    for (const frame of item.row.stack) list.appendChild(el('li', {}, frame));
    td.appendChild(list);
    tr.appendChild(td);
    item.tr.after(tr);
    item.stackRow = tr;
    item.tr.classList.add('expanded');
  };
  DataTable.prototype.applyFilter = function (text) {
    const needle = text.trim().toLowerCase();
    let shown = 0;
    for (const item of this.items) {
      const visible = needle === '' || item.text.includes(needle);
      item.tr.hidden = !visible;
      if (item.stackRow) item.stackRow.hidden = !visible;
      shown += visible;
    }
    this.count.textContent = (needle ? shown + ' of ' : '') + this.items.length + ' rows';
  };
  DataTable.prototype.setFilter = function (text) {
    this.filter.value = text;
    this.applyFilter(text);
  };
  // Numbers first descending, text first ascending; a second click reverses.
  DataTable.prototype.sortBy = function (c) {
    const name = this.table.columns[c];
    const numeric = this.items.every(i => typeof i.row[name] === 'number' || i.row[name] === null);
    const current = this.headers[c].getAttribute('aria-sort');
    const descending = current ? current === 'ascending' : numeric;
    const key = i => i.row[name];
    const fixed = this.items.filter(i => this.pinned(i));
    const sortable = this.items.filter(i => !this.pinned(i));
    sortable.sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;  // '-' last either way
      if (y === null || y === undefined) return -1;
      const order = numeric ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
      return descending ? -order : order;
    });
    this.items = sortable.concat(fixed);
    for (const item of this.items) {
      this.body.appendChild(item.tr);
      if (item.stackRow) this.body.appendChild(item.stackRow);
    }
    this.headers.forEach(h => h.removeAttribute('aria-sort'));
    this.headers[c].setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  };
  // Summary rows ("average", "total", "all") stay at the bottom when sorting.
  DataTable.prototype.pinned = function (item) {
    const first = item.row[this.table.columns[0]];
    return first === 'average' || first === 'total' || first === 'all';
  };

  // ---- charts
  const COLORS = {
    'Kernel': '#4e79a7', 'Memcpy': '#f28e2b', 'Memset': '#edc948', 'Communication': '#59a14f',
    'Sync Wait': '#e15759', 'CPU Only': '#bab0ac', 'Other': '#b07aa1',
    'Compute': '#4e79a7', 'Overlap': '#76b7b2', 'Wait': '#e15759', 'Others Waited': '#ff9da7',
  };
  const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
                   '#9c755f', '#bab0ac'];

  function legend(names) {
    const box = el('div', { class: 'legend' });
    for (const n of names) {
      const item = el('span', {}, n);
      item.style.setProperty('--swatch', COLORS[n] || '#999');
      box.appendChild(item);
    }
    return box;
  }

  // Vertical stacked bars: one per row, `series` columns stacked (values in ns).
  function stackedBars(title, rows, label, series, className) {
    const box = el('div', { class: 'chart ' + className });
    box.appendChild(el('div', { class: 'chart-title' }, title));
    box.appendChild(legend(series));
    const W = 960, H = 260, L = 72, R = 10, T = 10, B = 28;
    const chart = svg('svg', { class: 'report-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const totals = rows.map(r => series.reduce((s, name) => s + (r[name + ' (ns)'] || 0), 0));
    const max = Math.max(1, ...totals);
    const step = (W - L - R) / Math.max(1, rows.length);
    const bar = Math.max(1, Math.min(60, step * 0.8));
    for (let k = 0; k <= 4; k++) {
      const y = T + (H - T - B) * (1 - k / 4);
      chart.appendChild(svg('line', { x1: L, x2: W - R, y1: y, y2: y, stroke: '#eee' }));
      chart.appendChild(svg('text', { x: L - 4, y: y + 4, 'text-anchor': 'end' }, duration(Math.round(max * k / 4))));
    }
    rows.forEach((r, i) => {
      let y = H - B;
      const x = L + i * step + (step - bar) / 2;
      const g = svg('g', { class: 'bar', 'data-label': String(r[label]) });
      for (const name of series) {
        const v = r[name + ' (ns)'] || 0;
        const h = (H - T - B) * v / max;
        y -= h;
        g.appendChild(svg('rect', { x: x, y: y, width: bar, height: Math.max(0, h), fill: COLORS[name] || '#999',
                                    'data-series': name, 'data-ns': v }));
      }
      g.addEventListener('mousemove', e => showTip(e, [label + ' ' + r[label] + ': ' + duration(totals[i])].concat(
        series.filter(n => r[n + ' (ns)']).map(n => n + ': ' + duration(r[n + ' (ns)']) +
          (totals[i] ? ' (' + (100 * r[n + ' (ns)'] / totals[i]).toFixed(1) + ' %)' : '')))));
      g.addEventListener('mouseleave', hideTip);
      chart.appendChild(g);
      if (rows.length <= 40 || i % Math.ceil(rows.length / 40) === 0)
        chart.appendChild(svg('text', { x: x + bar / 2, y: H - B + 14, 'text-anchor': 'middle' }, String(r[label])));
    });
    box.appendChild(chart);
    return box;
  }

  // The activity table as an area chart: each bin's time per category over the bin's length.
  function activityChart(table) {
    const series = ['Communication', 'Kernel', 'Memcpy', 'Memset', 'Other', 'Sync Wait'];
    const box = el('div', { class: 'chart activity-chart' });
    box.appendChild(el('div', { class: 'chart-title' }, 'GPU activity over time (share of each interval)'));
    box.appendChild(legend(series));
    const W = 960, H = 220, L = 44, R = 10, T = 8, B = 26;
    const chart = svg('svg', { class: 'report-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const rows = table.rows;
    if (!rows.length) return box;
    const end = rows[rows.length - 1]['End (ns)'];
    const x = t => L + (W - L - R) * t / Math.max(1, end);
    const y = f => T + (H - T - B) * (1 - f);
    for (let k = 0; k <= 4; k++) {
      chart.appendChild(svg('line', { x1: L, x2: W - R, y1: y(k / 4), y2: y(k / 4), stroke: '#eee' }));
      chart.appendChild(svg('text', { x: L - 4, y: y(k / 4) + 4, 'text-anchor': 'end' }, (25 * k) + '%'));
    }
    for (let k = 0; k <= 5; k++)
      chart.appendChild(svg('text', { x: x(end * k / 5), y: H - 8, 'text-anchor': k === 0 ? 'start' : k === 5 ? 'end' : 'middle' },
                            duration(Math.round(end * k / 5))));
    // Stacked: each series' polygon from the running sum below it to the sum with it.
    const below = rows.map(() => 0);
    for (const name of series) {
      const top = rows.map((r, i) => {
        const length = Math.max(1, r['End (ns)'] - r['Start (ns)']);
        return below[i] + (r[name + ' (ns)'] || 0) / length;
      });
      if (top.every((v, i) => v === below[i])) continue;
      const points = [];
      rows.forEach((r, i) => { points.push([x(r['Start (ns)']), y(top[i])], [x(r['End (ns)']), y(top[i])]); });
      for (let i = rows.length - 1; i >= 0; i--)
        points.push([x(rows[i]['End (ns)']), y(below[i])], [x(rows[i]['Start (ns)']), y(below[i])]);
      chart.appendChild(svg('polygon', { points: points.map(p => p.join(',')).join(' '), fill: COLORS[name],
                                         'data-series': name, opacity: 0.9 }));
      top.forEach((v, i) => { below[i] = v; });
    }
    const cursor = svg('line', { y1: T, y2: H - B, stroke: '#444', 'stroke-dasharray': '3 3', visibility: 'hidden' });
    chart.appendChild(cursor);
    chart.addEventListener('mousemove', e => {
      const box = chart.getBoundingClientRect();
      const t = (e.clientX - box.left - L) / (W - L - R) * end;
      const r = rows.find(r => r['Start (ns)'] <= t && t < r['End (ns)']);
      if (!r) { hideTip(); cursor.setAttribute('visibility', 'hidden'); return; }
      cursor.setAttribute('x1', x(t)); cursor.setAttribute('x2', x(t)); cursor.setAttribute('visibility', 'visible');
      showTip(e, [duration(r['Start (ns)']) + ' to ' + duration(r['End (ns)']) + ': GPU busy ' +
                  r['GPU Busy (%)'].toFixed(1) + ' %'].concat(series.filter(n => r[n + ' (ns)'])
                  .map(n => n + ': ' + duration(r[n + ' (ns)']))));
    });
    chart.addEventListener('mouseleave', () => { hideTip(); cursor.setAttribute('visibility', 'hidden'); });
    box.appendChild(chart);
    return box;
  }

  // The device metrics over time (proftrace's "Device metrics over time"
  // table: each metric's mean per activity bin): one small line chart per
  // metric, a line per device, on the activity chart's time axis (`end`: its
  // last bin's end, so both read the same instant at the same x).
  const METRIC_TITLES = {
    gpu_utilization: 'GPU utilization', memory_utilization: 'Memory utilization', memory_used: 'Device memory used',
    sm_clock: 'SM clock', memory_clock: 'Memory clock', power: 'Power', temperature: 'Temperature',
    pcie_tx: 'PCIe TX', pcie_rx: 'PCIe RX',
  };
  function metricValue(value, unit) {
    if (unit === 'bytes') return bytes(Math.round(value));
    if (unit === 'mW') return (value / 1000).toFixed(1) + ' W';
    if (unit === 'KiB/s') return bytes(Math.round(value * 1024)) + '/s';
    return value.toFixed(unit === '%' || unit === 'C' ? 1 : 0) + ' ' + unit;
  }
  function metricCharts(table, end) {
    const box = el('div', { class: 'chart metric-charts' });
    box.appendChild(el('div', { class: 'chart-title' },
                       'Device metrics over time (the devices\' own readings, same time axis as above)'));
    const devices = [...new Set(table.rows.map(r => r.Device))];
    const deviceColor = d => PALETTE[devices.indexOf(d) % PALETTE.length];
    if (devices.length > 1) {
      const names = el('div', { class: 'legend' });
      for (const d of devices) {
        const item = el('span', {}, d);
        item.style.setProperty('--swatch', deviceColor(d));
        names.appendChild(item);
      }
      box.appendChild(names);
    }
    // The activity chart's width and margins: an instant has one x in both.
    const W = 960, H = 96, L = 44, R = 10, T = 18, B = 6;
    const x = t => L + (W - L - R) * t / Math.max(1, end);
    for (const metric of [...new Set(table.rows.map(r => r.Metric))]) {
      const rows = table.rows.filter(r => r.Metric === metric);
      const unit = rows[0].Unit;
      const max = unit === '%' ? 100 : Math.max(1, ...rows.map(r => r.Mean));
      const y = v => T + (H - T - B) * (1 - v / max);
      const chart = svg('svg', { class: 'report-chart metric-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`,
                                 'data-metric': metric });
      chart.appendChild(svg('text', { x: L, y: 12 }, (METRIC_TITLES[metric] || metric) + ' (max ' +
                                                      metricValue(max, unit) + ')'));
      chart.appendChild(svg('line', { x1: L, x2: W - R, y1: y(0), y2: y(0), stroke: '#ccc' }));
      chart.appendChild(svg('line', { x1: L, x2: W - R, y1: y(max), y2: y(max), stroke: '#eee' }));
      for (const device of devices) {
        const points = [];
        for (const r of rows.filter(r => r.Device === device))
          points.push([x(r['Start (ns)']), y(r.Mean)], [x(r['End (ns)']), y(r.Mean)]);
        if (!points.length) continue;
        chart.appendChild(svg('polyline', { points: points.map(p => p.join(',')).join(' '), fill: 'none',
                                            stroke: deviceColor(device), 'stroke-width': 1.5,
                                            'data-device': device }));
      }
      chart.addEventListener('mousemove', e => {
        const at = (e.clientX - chart.getBoundingClientRect().left - L) / (W - L - R) * end;
        const here = rows.filter(r => r['Start (ns)'] <= at && at < r['End (ns)']);
        if (!here.length) { hideTip(); return; }
        showTip(e, [duration(here[0]['Start (ns)']) + ' to ' + duration(here[0]['End (ns)'])]
          .concat(here.map(r => r.Device + ': ' + metricValue(r.Mean, unit))));
      });
      chart.addEventListener('mouseleave', hideTip);
      box.appendChild(chart);
    }
    return box;
  }

  // Horizontal bars, one per row: `value(row)` in ns, `name(row)` as the label.
  function barList(title, rows, name, value, className) {
    const box = el('div', { class: 'chart ' + className });
    box.appendChild(el('div', { class: 'chart-title' }, title));
    const W = 960, row = 20, L = 330, R = 90;
    const H = rows.length * row + 8;
    const chart = svg('svg', { class: 'report-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const max = Math.max(1, ...rows.map(value));
    rows.forEach((r, i) => {
      const label = String(name(r));
      const short = label.length > 52 ? label.slice(0, 50) + '\u2026' : label;
      const y = 4 + i * row;
      chart.appendChild(svg('text', { x: L - 6, y: y + 13, 'text-anchor': 'end' }, short));
      const w = (W - L - R) * value(r) / max;
      const rect = svg('rect', { x: L, y: y + 2, width: Math.max(1, w), height: row - 6, fill: PALETTE[0] });
      rect.addEventListener('mousemove', e => showTip(e, [label, duration(value(r))]));
      rect.addEventListener('mouseleave', hideTip);
      chart.appendChild(rect);
      chart.appendChild(svg('text', { x: L + w + 4, y: y + 13 }, duration(value(r))));
    });
    box.appendChild(chart);
    return box;
  }

  // Squarified treemap (Bruls et al.) of `items` [{label, value}] in a W x H box.
  function squarify(items, x, y, w, h) {
    const out = [];
    const total = items.reduce((s, i) => s + i.value, 0);
    if (total <= 0) return out;
    const scale = w * h / total;
    let rest = items.map(i => ({ item: i, area: i.value * scale }));
    while (rest.length) {
      const side = Math.min(w, h);
      let row = [rest[0]], best = worst(row, side), k = 1;
      while (k < rest.length) {
        const candidate = row.concat([rest[k]]);
        const score = worst(candidate, side);
        if (score > best) break;
        row = candidate; best = score; k++;
      }
      const area = row.reduce((s, r) => s + r.area, 0);
      if (w >= h) {  // a column on the left
        const cw = area / h;
        let cy = y;
        for (const r of row) { const ch = r.area / cw; out.push({ item: r.item, x: x, y: cy, w: cw, h: ch }); cy += ch; }
        x += cw; w -= cw;
      } else {       // a row on top
        const rh = area / w;
        let cx = x;
        for (const r of row) { const cw = r.area / rh; out.push({ item: r.item, x: cx, y: y, w: cw, h: rh }); cx += cw; }
        y += rh; h -= rh;
      }
      rest = rest.slice(k);
    }
    return out;
    function worst(row, side) {
      const s = row.reduce((a, r) => a + r.area, 0);
      const max = Math.max(...row.map(r => r.area)), min = Math.min(...row.map(r => r.area));
      return Math.max(side * side * max / (s * s), s * s / (side * side * min));
    }
  }

  // ---- tabs
  const tabs = [];
  function addTab(id, label, build) {
    const button = el('button', { role: 'tab', 'data-tab': id, 'aria-selected': 'false' }, label);
    nav.appendChild(button);
    let section = document.getElementById('tab-' + id);
    if (!section) {
      section = el('section', { class: 'tab', id: 'tab-' + id, 'data-tab': id, hidden: '' });
      root.appendChild(section);
    }
    button.addEventListener('click', () => select(id));
    tabs.push({ id: id, button: button, section: section });
    if (build) build(section, button);
  }
  function select(id) {
    const known = tabs.find(t => t.id === id) ? id : tabs[0].id;
    for (const t of tabs) {
      t.section.hidden = t.id !== known;
      t.button.setAttribute('aria-selected', String(t.id === known));
    }
    if (location.hash !== '#' + known) history.replaceState(null, '', '#' + known);
  }
  function empty(section, text) { section.appendChild(el('p', { class: 'empty' }, text)); }

  // ---- overview
  function card(parent, value, label, className) {
    const c = el('div', { class: 'card ' + (className || '') });
    c.appendChild(el('div', { class: 'value' }, value));
    c.appendChild(el('div', { class: 'label' }, label));
    parent.appendChild(c);
  }
  function buildOverview(section) {
    const cards = el('div', { class: 'cards' });
    section.appendChild(cards);
    const utilization = tableOf('overview', 'Overview: GPU utilization');
    const steps = tableOf('overview', 'Overview: step time breakdown');
    const activity = tableOf('overview', 'Overview: GPU activity over time');
    const recommendations = tableOf('recommendations');
    if (utilization) {
      const all = utilization.rows.find(r => r.Device === 'all');
      if (all) card(cards, all['Utilization (%)'].toFixed(1) + ' %', 'GPU utilization (any GPU busy)', 'utilization');
    }
    let stepRows = [];
    if (steps) {
      stepRows = steps.rows.filter(r => r.Step !== 'average' && r.Step !== 'total');
      const average = steps.rows.find(r => r.Step === 'average');
      const count = steps.notes.join(' ').match(/of (\d+) steps/);
      card(cards, count ? count[1] : String(stepRows.length), 'steps', 'steps');
      if (average) card(cards, duration(Math.round(average['Duration (ns)'])), 'average step', 'step-time');
    }
    if (recommendations) {
      const found = recommendations.rows.filter(r => r.Result === 'found').length;
      card(cards, found + ' of ' + recommendations.rows.length, 'rules found a problem', found ? 'bad' : 'good');
    }
    if (!tablesOf('overview').length) {
      empty(section, 'The trace has no events to analyse.');
      return;
    }
    if (steps && steps.notes.length) section.appendChild(el('p', { class: 'tab-intro steps-method' }, steps.notes[0]));
    if (activity) section.appendChild(activityChart(activity));
    // The devices' own state over the same run (NVML through the launcher):
    // beside the activity, what the device was doing about it.
    const metricsOverTime = tableOf('gpu-metrics', 'Device metrics over time');
    if (metricsOverTime) {
      used.add(metricsOverTime);
      if (activity && activity.rows.length && metricsOverTime.rows.length)
        section.appendChild(metricCharts(metricsOverTime, activity.rows[activity.rows.length - 1]['End (ns)']));
    }
    const deviceMetrics = tableOf('gpu-metrics', 'Device metrics:');
    if (deviceMetrics) {
      section.appendChild(new DataTable(deviceMetrics).box);
      used.add(deviceMetrics);
    }
    if (stepRows.length) {
      const series = ['Kernel', 'Memcpy', 'Memset', 'Communication', 'Sync Wait', 'Other', 'CPU Only'];
      section.appendChild(stackedBars('Step time breakdown', stepRows, 'Step', series, 'step-chart'));
    }
    // "CPU Only" explained by the CPU samples and blocking calls.
    if (data.cpu && data.cpu.idle_split.length) cpuSplit(section, data.cpu);
    for (const t of tablesOf('overview')) if (t !== activity) section.appendChild(new DataTable(t).box);
    if (activity) used.add(activity);
  }

  // ---- recommendations
  function buildRecommendations(section, button) {
    const table = tableOf('recommendations');
    if (!table) { empty(section, 'No recommendations: the trace has no events to check.'); return; }
    used.add(table);
    const found = table.rows.filter(r => r.Result === 'found');
    if (found.length) {
      const badge = el('span', { class: 'badge' }, String(found.length));
      button.appendChild(badge);
    }
    section.appendChild(el('p', { class: 'tab-intro' }, table.notes.join('; ')));
    const ordered = found.concat(table.rows.filter(r => r.Result !== 'found'));
    for (const r of ordered) {
      const box = el('div', { class: 'rule' + (r.Result === 'found' ? ' found' : ''), 'data-rule': r.Rule });
      const h = el('h3', {}, r.Rule);
      h.appendChild(el('span', { class: 'result' }, r.Result));
      box.appendChild(h);
      box.appendChild(el('div', { class: 'finding' }, r.Finding));
      if (r.Result === 'found') {
        const parts = [];
        if (r.Calls) parts.push(grouped(r.Calls) + ' calls');
        if (r.Bytes) parts.push(bytes(r.Bytes));
        if (r['Host Time (ns)']) parts.push('host time ' + duration(r['Host Time (ns)']));
        if (r['GPU Time (ns)']) parts.push('GPU time ' + duration(r['GPU Time (ns)']));
        if (r.Steps !== null && r.Steps !== undefined && r.Steps !== '-') parts.push('steps ' + r.Steps);
        if (parts.length) box.appendChild(el('div', { class: 'evidence' }, parts.join(' \u00b7 ')));
        if (r['Call Sites'] && r['Call Sites'] !== '-') {
          box.appendChild(el('div', { class: 'evidence' }, 'where:'));
          box.appendChild(el('pre', { class: 'sites' }, String(r['Call Sites']).split(' | ').join('\n')));
        }
      }
      section.appendChild(box);
    }
  }

  // ---- kernels, memory operations
  function buildKernels(section) {
    const kernels = tableOf('gpu-kernels');
    if (!kernels) { empty(section, 'No kernel with GPU time was recorded.'); return; }
    const nameColumn = kernels.columns[kernels.columns.length - 1];
    const top = kernels.rows.slice().sort((a, b) => b['Total Time (ns)'] - a['Total Time (ns)']).slice(0, 12);
    section.appendChild(barList('GPU time of the heaviest kernels', top, r => r[nameColumn], r => r['Total Time (ns)'],
                                'kernel-chart'));
    for (const t of tablesOf('gpu-kernels')) section.appendChild(new DataTable(t).box);
  }
  function buildMemoryOperations(section) {
    const list = tablesOf('mem-ops');
    if (!list.length) { empty(section, 'No copy or memset was recorded.'); return; }
    for (const t of list) section.appendChild(new DataTable(t).box);
  }

  // ---- code
  function buildCode(section) {
    const views = { line: tableOf('code'), function: tableOf('code-function'), file: tableOf('code-file'),
                    module: tableOf('code-module') };
    if (!views.line) {
      empty(section, 'No GPU work or allocation with a call stack: record stacks (proflaunch records them by ' +
                     'default) to see which code launched what.');
      return;
    }
    section.appendChild(el('p', { class: 'tab-intro' }, 'GPU time, launches and bytes allocated by the innermost ' +
      'frame of your code (Python first; runtime, driver and vendor-library frames skipped). The treemap shows ' +
      'GPU time; click a cell to filter the table to it.'));
    const tools = el('div', { class: 'code-tools' });
    tools.appendChild(el('span', {}, 'aggregate by: '));
    section.appendChild(tools);
    const holder = el('div', { class: 'code-view' });
    section.appendChild(holder);
    function show(by) {
      holder.textContent = '';
      const table = views[by];
      if (!table) { empty(holder, 'No rows.'); return; }
      const nameColumn = table.columns[table.columns.length - 1];
      const dataTable = new DataTable(table);
      const items = table.rows.filter(r => r['GPU Time (ns)'] > 0)
                              .map(r => ({ label: String(r[nameColumn]), value: r['GPU Time (ns)'] }))
                              .sort((a, b) => b.value - a.value);
      if (items.length) holder.appendChild(treemap(items, dataTable));
      holder.appendChild(dataTable.box);
      holder.setAttribute('data-by', by);
    }
    for (const by of ['line', 'function', 'file', 'module']) {
      if (!views[by]) continue;
      const label = el('label');
      const radio = el('input', { type: 'radio', name: 'code-by', value: by });
      if (by === 'line') radio.checked = true;
      radio.addEventListener('change', () => show(by));
      label.appendChild(radio);
      label.appendChild(document.createTextNode(' ' + by));
      tools.appendChild(label);
      used.add(views[by]);
    }
    show('line');
  }
  function treemap(items, dataTable) {
    const box = el('div', { class: 'chart treemap' });
    box.appendChild(el('div', { class: 'chart-title' }, 'GPU time by code'));
    const W = 960, H = 300;
    const chart = svg('svg', { class: 'report-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const total = items.reduce((s, i) => s + i.value, 0);
    squarify(items, 0, 0, W, H).forEach((cell, i) => {
      const g = svg('g', {});
      const rect = svg('rect', { class: 'treemap-cell', x: cell.x, y: cell.y, width: Math.max(0, cell.w),
                                 height: Math.max(0, cell.h), fill: PALETTE[i % PALETTE.length],
                                 'data-label': cell.item.label, 'data-ns': cell.item.value });
      g.appendChild(rect);
      if (cell.w > 60 && cell.h > 16) {
        const chars = Math.floor((cell.w - 8) / 6.2);
        const text = cell.item.label.length > chars ? cell.item.label.slice(0, Math.max(1, chars - 1)) + '\u2026'
                                                    : cell.item.label;
        g.appendChild(svg('text', { x: cell.x + 4, y: cell.y + 13, 'pointer-events': 'none', fill: '#fff' }, text));
      }
      rect.addEventListener('mousemove', e => showTip(e, [cell.item.label, duration(cell.item.value) + ' (' +
        (100 * cell.item.value / total).toFixed(1) + ' % of the attributed GPU time)']));
      rect.addEventListener('mouseleave', hideTip);
      rect.addEventListener('click', () => {
        const selected = rect.classList.contains('selected');
        chart.querySelectorAll('rect.selected').forEach(r => r.classList.remove('selected'));
        if (selected) { dataTable.setFilter(''); return; }
        rect.classList.add('selected');
        dataTable.setFilter(cell.item.label);
      });
      chart.appendChild(g);
    });
    box.appendChild(chart);
    return box;
  }

  // ---- distributed
  function buildDistributed(section) {
    const ranks = tableOf('nccl-ranks');
    const collectives = tableOf('nccl-collectives');
    if (!ranks && !collectives) {
      empty(section, 'No NCCL or RCCL collective in these traces. For this view, record each rank ' +
                     '(proflaunch -o rank%q{RANK}.trace) and pass every rank\'s file to proftrace report.');
      return;
    }
    if (ranks) {
      // Wait is part of the communication time (a rank waits inside the collective).
      const rows = ranks.rows.map(r => Object.assign({}, r, {
        'Compute (ns)': Math.max(0, r['Compute (ns)'] - r['Overlap (ns)']),
        'Overlap (ns)': r['Overlap (ns)'],
        'Communication (ns)': Math.max(0, r['Communication (ns)'] - r['Overlap (ns)'] - r['Wait (ns)']),
        'Wait (ns)': Math.min(r['Wait (ns)'], r['Communication (ns)']),
      }));
      section.appendChild(stackedBars('Per rank: compute only, compute overlapped with communication, ' +
                                      'communication not waiting, and waiting in collectives for the other ranks',
                                      rows, 'Rank', ['Compute', 'Overlap', 'Communication', 'Wait'], 'rank-chart'));
      section.appendChild(new DataTable(ranks).box);
    }
    for (const t of tablesOf('nccl-collectives')) section.appendChild(new DataTable(t).box);
  }


  // What each launching thread did while its GPU was idle: blocked, Python
  // (the running frame a Python one), native, and what no sample or wait
  // accounts for. On the overview (what "CPU Only" was) and the CPU tab.
  function cpuSplit(section, cpu) {
    section.appendChild(el('div', { class: 'chart-title' }, 'GPU idle time of each launching thread, split ' +
      '(gaps of at least ' + duration(cpu.min_idle_gap_ns) + ')'));
    const split = el('table', { class: 'data cpu-split' });
    const head = el('tr');
    for (const c of ['PID', 'TID', 'GPU idle', 'Blocked', 'Python', 'Native', 'Unaccounted']) head.appendChild(el('th', {}, c));
    split.appendChild(el('thead')).appendChild(head);
    const body = el('tbody');
    for (const r of cpu.idle_split) {
      const tr = el('tr');
      tr.appendChild(el('td', { class: 'num' }, String(r.pid)));
      tr.appendChild(el('td', { class: 'num' }, String(r.tid)));
      tr.appendChild(el('td', { class: 'num' }, duration(r.idle_ns)));
      for (const k of ['blocked_ns', 'python_ns', 'native_ns', 'unaccounted_ns'])
        tr.appendChild(el('td', { class: 'num', 'data-key': k }, duration(r[k]) + ' (' +
          (r.idle_ns ? (100 * r[k] / r.idle_ns).toFixed(1) : '0.0') + ' %)'));
      body.appendChild(tr);
    }
    split.appendChild(body);
    section.appendChild(split);
  }

  // ---- CPU: where each thread's CPU time went (samples) and where it waited
  // (blocking calls), as a flame graph filtered by time, thread and "while
  // the GPU was idle" (data.cpu, stats/cpu_page_data.h).
  function buildCpu(section) {
    const cpu = data.cpu;
    for (const t of tablesOf('cpu')) used.add(t);
    section.appendChild(el('p', { class: 'tab-intro' }, 'Each thread is sampled on its own CPU-time clock; a ' +
      'blocked thread takes no sample, its waits are the blocking calls below. Width is CPU time (samples x the ' +
      'sampling period); click a frame to zoom in, on the root to zoom out. "While the GPU was idle": gaps of at ' +
      'least ' + duration(cpu.min_idle_gap_ns) + ' with no work on the devices the thread (else its process) used.'));
    if (cpu.idle_split.length) cpuSplit(section, cpu);
    const controls = el('div', { class: 'cpu-controls' });
    const thread = el('select', { 'aria-label': 'thread' });
    thread.appendChild(el('option', { value: '-1' }, 'All threads'));
    cpu.threads.forEach((t, i) => thread.appendChild(el('option', { value: String(i) },
      'pid ' + t.pid + ' tid ' + t.tid + (t.name ? ' ' + t.name : '') + (t.launching ? ' (launches GPU work)' : ''))));
    const from = el('input', { type: 'number', min: '0', step: 'any', value: '0', 'aria-label': 'from (ms)' });
    const to = el('input', { type: 'number', min: '0', step: 'any', value: String(Math.ceil(cpu.span_ns / 1e6) + 1),
                             'aria-label': 'to (ms)' });
    const idle = el('input', { type: 'checkbox', 'aria-label': 'only while the GPU was idle' });
    const label = (text, input) => { const l = el('label', {}, text + ' '); l.appendChild(input); return l; };
    controls.appendChild(label('Thread', thread));
    controls.appendChild(label('From (ms)', from));
    controls.appendChild(label('to (ms)', to));
    const idleLabel = el('label', {});
    idleLabel.appendChild(idle);
    idleLabel.appendChild(document.createTextNode(' only while the GPU was idle'));
    controls.appendChild(idleLabel);
    section.appendChild(controls);
    const summary = el('p', { class: 'cpu-summary' });
    section.appendChild(summary);
    const flame = el('div', { class: 'flame', role: 'img', 'aria-label': 'flame graph' });
    section.appendChild(flame);
    const waitsBox = el('div');
    section.appendChild(waitsBox);
    let zoom = [];  // frame ids from the root to the zoomed node

    function filtered() {
      const t = Number(thread.value), a = Number(from.value) * 1e6, b = Number(to.value) * 1e6;
      return {
        samples: cpu.samples.filter(s => (t < 0 || s[0] === t) && s[1] >= a && s[1] < b && (!idle.checked || s[3] === 1)),
        waits: cpu.waits.filter(w => (t < 0 || w[0] === t) && w[2] > a && w[1] < b && (!idle.checked || w[4] > 0)),
        a: a, b: b,
      };
    }
    function tree(samples) {
      const root = { frame: -1, ns: 0, children: new Map() };
      for (const s of samples) {
        const ns = cpu.threads[s[0]].period_ns * cpu.sample_weight * (s[4] || 1);
        let node = root;
        node.ns += ns;
        for (const f of cpu.stacks[s[2]]) {
          let child = node.children.get(f);
          if (!child) { child = { frame: f, ns: 0, children: new Map() }; node.children.set(f, child); }
          child.ns += ns;
          node = child;
        }
      }
      return root;
    }
    function draw() {
      const f = filtered();
      const full = tree(f.samples);
      let root = full;
      for (const id of zoom) { const next = root.children.get(id); if (!next) { zoom = []; root = full; break; } root = next; }
      let blocked = 0;
      for (const w of f.waits) blocked += idle.checked ? w[4] : Math.min(w[2], f.b) - Math.max(w[1], f.a);
      summary.textContent = f.samples.length + ' samples (' + duration(full.ns) + ' of CPU time), ' + f.waits.length +
        ' blocking calls (' + duration(blocked) + ' blocked)' + (cpu.sample_weight > 1 ? '; one sample in ' +
        cpu.sample_weight + ' is shown, each weighing as many' : '');
      flame.textContent = '';
      if (!root.ns) { flame.appendChild(el('p', { class: 'empty' }, 'No sample passes the filters.')); }
      const rowHeight = 17;
      let depthMax = 0;
      const place = (node, depth, left, width, path) => {
        if (width < 0.001) return;
        depthMax = Math.max(depthMax, depth);
        const name = node.frame < 0 ? (zoom.length ? '\u2191 all (zoomed: click to zoom out)' : 'all') : cpu.frames[node.frame];
        const box = el('div', { class: 'flame-frame' + (node.frame >= 0 && cpu.python_frames[node.frame] ? ' python' : '') },
                       width > 0.02 ? name : '');
        box.style.left = (100 * left) + '%';
        box.style.width = (100 * width) + '%';
        box.style.top = (depth * rowHeight) + 'px';
        box.title = name + '\n' + duration(node.ns) + ' (' + (100 * node.ns / root.ns).toFixed(1) + ' % of the shown)';
        box.setAttribute('data-frame', name);
        box.setAttribute('data-ns', String(node.ns));
        box.addEventListener('click', () => {
          zoom = node === root ? zoom.slice(0, Math.max(0, zoom.length - 1)) : path;
          draw();
        });
        flame.appendChild(box);
        let x = left;
        const children = [...node.children.values()].sort((p, q) => q.ns - p.ns);
        for (const c of children) {
          const w = width * c.ns / node.ns;
          place(c, depth + 1, x, w, path.concat([c.frame]));
          x += w;
        }
      };
      if (root.ns) place(root, 0, 0, 1, zoom.slice());
      flame.style.height = ((depthMax + 1) * rowHeight + 2) + 'px';
      // The waits, by call site.
      const sites = new Map();
      for (const w of f.waits) {
        const ns = idle.checked ? w[4] : Math.min(w[2], f.b) - Math.max(w[1], f.a);
        const key = cpu.threads[w[0]].tid + '\u0001' + w[3];
        const site = sites.get(key) || { 'TID': cpu.threads[w[0]].tid, 'Call site': w[3], 'Calls': 0, 'Blocked (ns)': 0 };
        site['Calls'] += 1;
        site['Blocked (ns)'] += ns;
        sites.set(key, site);
      }
      waitsBox.textContent = '';
      waitsBox.appendChild(new DataTable({ section: 'cpu-waits', title: 'Blocking calls in the range, by call site',
        columns: ['TID', 'Call site', 'Calls', 'Blocked (ns)'],
        rows: [...sites.values()].sort((p, q) => q['Blocked (ns)'] - p['Blocked (ns)']) }).box);
    }
    for (const input of [thread, from, to, idle]) input.addEventListener('change', () => { zoom = []; draw(); });
    draw();
    for (const t of tablesOf('cpu')) section.appendChild(new DataTable(t).box);
  }

  // ---- everything else
  function buildOthers(section) {
    const rest = tables.filter(t => !used.has(t));
    if (!rest.length) { empty(section, 'Every table is on another tab.'); return; }
    section.appendChild(el('p', { class: 'tab-intro' }, 'The other tables of proftrace stats: API calls, NVTX ranges, ' +
                                  'CUDA graphs, call sites and allocation sites, capture windows.'));
    for (const t of rest) section.appendChild(new DataTable(t).box);
  }

  try {
    if (data.notes.length) {
      const notes = el('ul', { class: 'notes report-notes' });
      for (const n of data.notes) notes.appendChild(el('li', {}, n));
      root.appendChild(notes);
    }
    addTab('overview', 'Overview', buildOverview);
    addTab('recommendations', 'Recommendations', buildRecommendations);
    addTab('kernels', 'Kernels', buildKernels);
    addTab('memory-operations', 'Memory operations', buildMemoryOperations);
    addTab('code', 'Code', buildCode);
    addTab('memory', 'Memory', null);  // drawn by the memory page's script
    addTab('distributed', 'Distributed', buildDistributed);
    if (data.cpu) addTab('cpu', 'CPU', buildCpu);
    addTab('other', 'Other tables', buildOthers);
    select(location.hash.slice(1) || 'overview');
    window.addEventListener('hashchange', () => select(location.hash.slice(1)));
  } finally {
    document.body.setAttribute('data-report-ready', 'true');
  }
})();
