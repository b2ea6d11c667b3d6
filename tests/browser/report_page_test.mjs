// The page `proftrace report` writes, in headless Chromium: it renders with
// no network and no script error; every table of `proftrace stats --json`
// for the same traces is on the page with exactly its rows and values (the
// recommendations as one card per rule, the activity table as the
// utilization chart); the charts have one bar per step and per rank; the
// problems EXPECTED names are found with their source lines; sorting,
// filtering, expanding a stack, switching the code view's aggregation and
// clicking the treemap work; the memory tab is drawn. A screenshot of every
// tab is left in OUT_DIR.
//
//   node report_page_test.mjs PAGE.html STATS.json EXPECTED.json OUT_DIR
//
// STATS.json: `stats --json --top 200 --timeline-bins 240`, plus the code
// tables by function, file and module as sections code-function, code-file,
// code-module. EXPECTED.json: {"ranks": N, "found": {rule: [file:line, ...]}}.
import fs from 'node:fs';
import path from 'node:path';
import { checker, launchChromium, offlinePage } from './harness.mjs';

const [pagePath, statsPath, expectedPath, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node report_page_test.mjs PAGE.html STATS.json EXPECTED.json OUT_DIR');
  process.exit(2);
}
const stats = JSON.parse(fs.readFileSync(statsPath, 'utf8'));
const expected = JSON.parse(fs.readFileSync(expectedPath, 'utf8'));
const check = checker();
const cell = value => (value === null || value === undefined ? '' : String(value));
const tableOf = (section, title) => stats.tables.find(t => t.section === section && (!title || t.title.startsWith(title)));

const browser = await launchChromium({ viewport: { width: 1100, height: 1200 } });
try {
  const { page, external, errors } = await offlinePage(browser.context);
  await page.goto('file://' + path.resolve(pagePath));
  await page.waitForSelector('body[data-report-ready="true"]', { timeout: 15000 });
  check(external.length === 0, `no network request (saw: ${external.join(', ') || 'none'})`);
  check(errors.length === 0, `no script error (saw: ${errors.join('; ') || 'none'})`);

  // ---- tabs: each shows its own section only
  const tabIds = await page.locator('nav#tabs button').evaluateAll(bs => bs.map(b => b.getAttribute('data-tab')));
  // The CPU tab is there when the trace holds CPU samples or blocking calls
  // (sampling is on by default, so a traced run usually has it).
  const baseTabs = ['overview', 'recommendations', 'kernels', 'memory-operations', 'code', 'memory', 'distributed'];
  check(JSON.stringify(tabIds) === JSON.stringify([...baseTabs, 'other']) ||
        JSON.stringify(tabIds) === JSON.stringify([...baseTabs, 'cpu', 'other']),
        `the tabs are ${tabIds.join(', ')}`);
  async function openTab(id) {
    await page.locator(`nav#tabs button[data-tab="${id}"]`).click();
    const visible = await page.locator('section.tab:not([hidden])').evaluateAll(ss => ss.map(s => s.getAttribute('data-tab')));
    check(visible.length === 1 && visible[0] === id, `tab ${id} shows only its section (visible: ${visible.join(', ')})`);
  }

  // ---- every stats table is on the page, row for row, value for value
  const special = t => t.section === 'recommendations' || t.title.startsWith('Overview: GPU activity over time') ||
                       t.title === 'Device metrics over time';
  for (const table of stats.tables.filter(t => !special(t))) {
    const selector = `.data-table[data-section="${table.section}"][data-title="${table.title.replace(/"/g, '\\"')}"]`;
    const found = page.locator(selector);
    if (table.section.startsWith('code-')) {
      // Drawn when its aggregation is picked.
      await openTab('code');
      await page.locator(`input[name="code-by"][value="${table.section.slice(5)}"]`).check();
    }
    if (await found.count() !== 1) {
      check(false, `"${table.title}" (${table.section}) is on the page once (found ${await found.count()})`);
      continue;
    }
    const cells = await found.locator('tbody tr:not(.stack-row)').evaluateAll(
      trs => trs.map(tr => Array.from(tr.children).map(td => td.getAttribute('data-value'))));
    const want = table.rows.map(r => table.columns.map(c => cell(r[c])));
    const same = JSON.stringify(cells) === JSON.stringify(want);
    check(same, `"${table.title}" (${table.section}): ${cells.length} rows equal stats' ${want.length}` +
                (same ? '' : `\n     page:  ${JSON.stringify(cells[0])}\n     stats: ${JSON.stringify(want[0])}`));
    const notes = await found.locator('ul.notes li').allTextContents();
    check(JSON.stringify(notes) === JSON.stringify(table.notes), `"${table.title}": the notes are stats' notes`);
  }
  await page.locator('input[name="code-by"][value="line"]').check().catch(() => {});

  // ---- overview
  await openTab('overview');
  const utilization = tableOf('overview', 'Overview: GPU utilization');
  if (utilization) {
    const all = utilization.rows.find(r => r.Device === 'all');
    const shown = await page.locator('.card.utilization .value').textContent();
    check(shown === all['Utilization (%)'].toFixed(1) + ' %', `utilization card "${shown}" is stats' ${all['Utilization (%)']}`);
  }
  const steps = tableOf('overview', 'Overview: step time breakdown');
  if (steps) {
    const stepRows = steps.rows.filter(r => r.Step !== 'average' && r.Step !== 'total');
    const bars = await page.locator('.step-chart g.bar').evaluateAll(gs => gs.map(g => g.getAttribute('data-label')));
    check(JSON.stringify(bars) === JSON.stringify(stepRows.map(r => String(r.Step))),
          `one bar per step (${bars.length} bars, ${stepRows.length} steps)`);
    // The first step's stacked kernel time is its kernel column.
    const kernel = await page.locator('.step-chart g.bar').first().locator('rect[data-series="Kernel"]').getAttribute('data-ns');
    check(Number(kernel) === stepRows[0]['Kernel (ns)'], `the first bar's kernel part is ${kernel} ns, stats says ${stepRows[0]['Kernel (ns)']}`);
  }
  const activity = tableOf('overview', 'Overview: GPU activity over time');
  if (activity) {
    const drawn = await page.locator('.activity-chart polygon').evaluateAll(ps => ps.map(p => p.getAttribute('data-series')));
    const busy = ['Communication', 'Kernel', 'Memcpy', 'Memset', 'Other', 'Sync Wait']
      .filter(s => activity.rows.some(r => r[s + ' (ns)'] > 0));
    check(JSON.stringify(drawn) === JSON.stringify(busy), `the activity chart draws ${drawn.join(', ')} (stats: ${busy.join(', ')})`);
    // Hovering the chart says what the bin under the pointer holds.
    const box = await page.locator('.activity-chart svg').boundingBox();
    await page.mouse.move(box.x + 44 + (box.width - 54) * 0.5, box.y + box.height / 2);
    const tip = await page.locator('.chart-tip').textContent();
    check(/GPU busy [\d.]+ %/.test(tip), `hovering the activity chart shows the interval ("${tip.slice(0, 80)}")`);
    await page.mouse.move(0, 0);
  }
  // Device metrics: a chart per metric, a line per device, each line a step
  // per bin that stats has a mean for, on the activity chart's time axis.
  const overTime = tableOf('gpu-metrics', 'Device metrics over time');
  check(Boolean(overTime && overTime.rows.length) === Boolean(expected.metrics),
        `stats has device metrics over time: ${Boolean(overTime && overTime.rows.length)} (expected ${Boolean(expected.metrics)})`);
  if (overTime && overTime.rows.length) {
    const metrics = [...new Set(overTime.rows.map(r => r.Metric))];
    const charts = await page.locator('.metric-charts svg.metric-chart').evaluateAll(
      ss => ss.map(s => ({ metric: s.getAttribute('data-metric'),
                           lines: Array.from(s.querySelectorAll('polyline')).map(p => ({
                             device: p.getAttribute('data-device'),
                             points: p.getAttribute('points').trim().split(/\s+/).length })) })));
    check(JSON.stringify(charts.map(c => c.metric)) === JSON.stringify(metrics),
          `one chart per metric (${charts.map(c => c.metric).join(', ')}; stats: ${metrics.join(', ')})`);
    for (const chart of charts) {
      for (const line of chart.lines) {
        const bins = overTime.rows.filter(r => r.Metric === chart.metric && r.Device === line.device).length;
        check(line.points === 2 * bins, `${chart.metric} of ${line.device}: ${line.points} points for ${bins} bins`);
      }
      const devices = new Set(overTime.rows.filter(r => r.Metric === chart.metric).map(r => r.Device));
      check(chart.lines.length === devices.size, `${chart.metric}: ${chart.lines.length} lines for ${devices.size} devices`);
    }
    // The same instant at the same x as the activity chart: a bin's start.
    const utilization = overTime.rows.filter(r => r.Metric === 'gpu_utilization');
    if (utilization.length && activity) {
      const end = activity.rows[activity.rows.length - 1]['End (ns)'];
      const first = await page.locator('.metric-charts svg[data-metric="gpu_utilization"] polyline').first()
        .getAttribute('points');
      const x0 = Number(first.trim().split(/\s+/)[0].split(',')[0]);
      const want = 44 + (960 - 44 - 10) * utilization[0]['Start (ns)'] / end;
      check(Math.abs(x0 - want) < 0.01, `the utilization line starts at x ${x0} (bin start ${want})`);
      const box = await page.locator('.metric-charts svg[data-metric="gpu_utilization"]').boundingBox();
      await page.mouse.move(box.x + 44 + (box.width - 54) * 0.5, box.y + box.height / 2);
      const tip = await page.locator('.chart-tip').textContent();
      check(/[\d.]+ %/.test(tip), `hovering the utilization chart shows the devices' values ("${tip.slice(0, 80)}")`);
      await page.mouse.move(0, 0);
    }
  }
  await page.screenshot({ path: path.join(outDir, 'overview.png'), fullPage: true });

  // ---- recommendations: one card per rule, found first, with the lines
  await openTab('recommendations');
  const rules = tableOf('recommendations');
  const cards = await page.locator('.rule').evaluateAll(rs => rs.map(r => ({
    rule: r.getAttribute('data-rule'), found: r.classList.contains('found'),
    finding: r.querySelector('.finding').textContent, sites: r.querySelector('pre.sites')?.textContent || '' })));
  check(cards.length === rules.rows.length, `${cards.length} rule cards for ${rules.rows.length} rules`);
  const foundRules = rules.rows.filter(r => r.Result === 'found').map(r => r.Rule);
  check(JSON.stringify(cards.slice(0, foundRules.length).map(c => c.rule)) === JSON.stringify(foundRules),
        `the rules that found a problem come first: ${foundRules.join(', ') || 'none'}`);
  for (const r of rules.rows) {
    const c = cards.find(c => c.rule === r.Rule);
    check(c && c.found === (r.Result === 'found') && c.finding === r.Finding, `card ${r.Rule}: ${r.Result}, stats' finding`);
  }
  for (const [rule, lines] of Object.entries(expected.found || {})) {
    const c = cards.find(c => c.rule === rule);
    check(c && c.found, `${rule} is found`);
    for (const line of lines) check(c && c.sites.includes(line), `${rule} names ${line}`);
  }
  const badge = await page.locator('nav#tabs button[data-tab="recommendations"] .badge').count();
  check(badge === (foundRules.length ? 1 : 0), 'the tab carries a badge when a rule found something');
  await page.screenshot({ path: path.join(outDir, 'recommendations.png'), fullPage: true });

  // ---- kernels: sort and filter
  await openTab('kernels');
  const kernels = tableOf('gpu-kernels');
  if (kernels) {
    const table = page.locator('#tab-kernels .data-table').first();
    const header = table.locator('th[data-column="Total Time (ns)"]');
    const column = kernels.columns.indexOf('Total Time (ns)');
    const values = async () => (await table.locator('tbody tr').evaluateAll(
      (trs, c) => trs.map(tr => Number(tr.children[c].getAttribute('data-value'))), column));
    await header.click();
    let v = await values();
    check(v.every((x, i) => i === 0 || v[i - 1] >= x) && (await header.getAttribute('aria-sort')) === 'descending',
          'clicking Total Time sorts descending');
    await header.click();
    v = await values();
    check(v.every((x, i) => i === 0 || v[i - 1] <= x) && (await header.getAttribute('aria-sort')) === 'ascending',
          'a second click sorts ascending');
    const nameColumn = kernels.columns[kernels.columns.length - 1];
    const needle = String(kernels.rows[0][nameColumn]).slice(0, 12);
    await table.locator('input[type="search"]').fill(needle);
    const visible = await table.locator('tbody tr:not([hidden])').count();
    const want = kernels.rows.filter(r => kernels.columns.some(c => cell(r[c] === null ? '-' : r[c]).toLowerCase()
      .includes(needle.toLowerCase()))).length;
    check(visible === want && visible > 0, `filtering "${needle}" leaves ${visible} rows (${want} match)`);
    const count = await table.locator('.row-count').textContent();
    check(count === `${want} of ${kernels.rows.length} rows`, `the count says "${count}"`);
    await table.locator('input[type="search"]').fill('');
    check(await table.locator('tbody tr:not([hidden])').count() === kernels.rows.length, 'clearing the filter shows every row');
    const bars = await page.locator('.kernel-chart rect').count();
    check(bars === Math.min(12, kernels.rows.length), `the kernel chart has ${bars} bars`);
  }
  await page.screenshot({ path: path.join(outDir, 'kernels.png'), fullPage: true });
  await openTab('memory-operations');
  await page.screenshot({ path: path.join(outDir, 'memory-operations.png'), fullPage: true });

  // ---- code: expand a stack, switch aggregation, treemap
  await openTab('code');
  const code = tableOf('code');
  if (code) {
    const table = page.locator('#tab-code .data-table');
    const first = code.rows.findIndex(r => r.stack && r.stack.length);
    if (first >= 0) {
      await table.locator(`tbody tr[data-index="${first}"]`).click();
      const frames = await table.locator('tr.stack-row li').allTextContents();
      check(JSON.stringify(frames) === JSON.stringify(code.rows[first].stack),
            `clicking a row expands its stack (${frames.length} frames, stats: ${code.rows[first].stack.length})`);
      await page.screenshot({ path: path.join(outDir, 'code.png'), fullPage: true });
      await table.locator(`tbody tr[data-index="${first}"]`).click();
      check(await table.locator('tr.stack-row').count() === 0, 'a second click folds it');
    }
    const cells = await page.locator('#tab-code rect.treemap-cell').count();
    const withGpu = code.rows.filter(r => r['GPU Time (ns)'] > 0);
    check(cells === withGpu.length, `the treemap has a cell per row with GPU time (${cells}, ${withGpu.length})`);
    if (cells > 0) {
      const cellRect = page.locator('#tab-code rect.treemap-cell').first();
      const label = await cellRect.getAttribute('data-label');
      await cellRect.click();
      const filter = await page.locator('#tab-code input[type="search"]').inputValue();
      check(filter === label, `clicking a treemap cell filters the table to "${label}"`);
      check(await page.locator('#tab-code tbody tr:not([hidden]):not(.stack-row)').count() >= 1, 'and leaves its row');
    }
    for (const by of ['function', 'file', 'module']) {
      if (!tableOf('code-' + by)) continue;
      await page.locator(`input[name="code-by"][value="${by}"]`).check();
      const title = await page.locator('#tab-code .data-table h3').textContent();
      check(title.includes('by ' + by), `picking ${by} shows the table by ${by}`);
    }
    await page.locator('input[name="code-by"][value="line"]').check();
  }

  // ---- memory: the memory page's content
  await openTab('memory');
  check(await page.locator('#memory-report section.space').count() >= 1, 'the memory tab draws a memory space');
  check(await page.locator('#memory-report g.peak-marker').count() >= 1, 'with its peak marker');
  await page.screenshot({ path: path.join(outDir, 'memory.png'), fullPage: true });

  // ---- distributed
  await openTab('distributed');
  const ranks = tableOf('nccl-ranks');
  const rankBars = await page.locator('.rank-chart g.bar').count();
  check(rankBars === (expected.ranks || 0), `${rankBars} rank bars for ${expected.ranks} ranks`);
  check((ranks ? ranks.rows.length : 0) === (expected.ranks || 0), `stats has ${ranks ? ranks.rows.length : 0} ranks`);
  if (!ranks) check(await page.locator('#tab-distributed .empty').count() === 1, 'without ranks the tab says how to get them');
  await page.screenshot({ path: path.join(outDir, 'distributed.png'), fullPage: true });
  await openTab('other');
  await page.screenshot({ path: path.join(outDir, 'other.png'), fullPage: true });

  // A link to a tab opens it.
  await page.goto('file://' + path.resolve(pagePath) + '#kernels');
  await page.waitForSelector('body[data-report-ready="true"]');
  const opened = await page.locator('section.tab:not([hidden])').getAttribute('data-tab');
  check(opened === 'kernels', `#kernels opens the kernels tab (${opened})`);
  check(errors.length === 0, `still no script error (saw: ${errors.join('; ') || 'none'})`);
} finally {
  await browser.close();
}
check.finish();
