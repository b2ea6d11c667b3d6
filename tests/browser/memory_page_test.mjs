// The page `proftrace memory -o` writes, in headless Chromium: it renders
// with no network and no script error; the peak marker says the program's
// peak; there is one failure marker per failed allocation; the table of
// allocations live at the peak has exactly the program's blocks; hovering at
// the peak shows those allocations; zoom changes the view and reset restores
// it. A screenshot is left next to the page.
//
//   node memory_page_test.mjs PAGE.html EXPECTED.json SCREENSHOT.png
//
// EXPECTED.json (written by tests/e2e/memory/memory_page_browser_test.py
// from the target program's own output): {"device": {"peak_bytes": N,
// "live_at_peak": [bytes, ...], "failures": N, "failed_request": N},
// "host": {"peak_bytes": N, "failures": N}}.
import fs from 'node:fs';
import path from 'node:path';
import { checker, launchChromium, offlinePage } from './harness.mjs';

const [pagePath, expectedPath, screenshotPath] = process.argv.slice(2);
if (!screenshotPath) {
  console.error('usage: node memory_page_test.mjs PAGE.html EXPECTED.json SCREENSHOT.png');
  process.exit(2);
}
const expected = JSON.parse(fs.readFileSync(expectedPath, 'utf8'));
const check = checker();
// The page's size format: binary units, one decimal.
function human(bytes) {
  if (bytes < 1024) return bytes + ' B';
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024, unit = 0;
  while (value >= 1024 && unit + 1 < units.length) { value /= 1024; unit++; }
  return value.toFixed(1) + ' ' + units[unit];
}

const browser = await launchChromium({ viewport: { width: 1100, height: 1500 } });
try {
  const { page, external, errors } = await offlinePage(browser.context);
  await page.goto('file://' + path.resolve(pagePath));
  await page.waitForSelector('body[data-ready="true"]', { timeout: 10000 });
  check(external.length === 0, `no network request (saw: ${external.join(', ') || 'none'})`);
  check(errors.length === 0, `no script error (saw: ${errors.join('; ') || 'none'})`);

  const gpu = page.locator('section.space[data-space-id$="/0"]');
  check(await gpu.count() === 1, 'one section for GPU 0');

  // Peak marker: present, the program's peak, labelled with it.
  const peak = gpu.locator('g.peak-marker');
  check(await peak.count() === 1, 'one peak marker');
  const peakBytes = Number(await peak.getAttribute('data-bytes'));
  check(peakBytes === expected.device.peak_bytes, `peak marker at ${peakBytes} bytes, the program's peak ${expected.device.peak_bytes}`);
  const peakLabel = await peak.locator('text').textContent();
  check(peakLabel.includes(human(expected.device.peak_bytes)), `peak label "${peakLabel}" shows ${human(expected.device.peak_bytes)}`);

  // Failure markers: one per failed allocation, with the size requested.
  const oom = gpu.locator('g.oom-marker');
  check(await oom.count() === expected.device.failures, `${await oom.count()} failure markers, ${expected.device.failures} failed allocations`);
  for (const requested of await oom.evaluateAll(nodes => nodes.map(n => Number(n.getAttribute('data-requested-bytes')))))
    check(requested === expected.device.failed_request, `failure marker for ${requested} bytes requested`);

  // The table of allocations live at the peak: exactly the program's blocks.
  const rows = await gpu.locator('table.live-at-peak tbody tr').evaluateAll(trs => trs.map(tr => Number(tr.getAttribute('data-bytes'))));
  check(JSON.stringify(rows) === JSON.stringify(expected.device.live_at_peak),
        `live-at-peak rows ${JSON.stringify(rows)} are the program's ${JSON.stringify(expected.device.live_at_peak)}`);
  const stacks = await gpu.locator('table.live-at-peak tbody td.stack').allTextContents();
  // Recorded by default: every block names the program's code that allocated it.
  check(stacks.length === rows.length && stacks.every(s => s.includes('main (memory_phases.cpp:')),
        `the stack column shows the program's frames (first: ${JSON.stringify((stacks[0] || '').slice(0, 120))})`);

  // Hover just after the peak (the program holds it for a while).
  const svg = gpu.locator('svg.chart');
  const box = await peak.locator('circle').boundingBox();
  await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2);
  const details = gpu.locator('.hover-details');
  check(await details.isVisible(), 'hover shows the details panel');
  const allocatedRow = await details.locator('table.totals tr', { hasText: 'allocated' }).first().textContent();
  check(allocatedRow.includes(human(expected.device.peak_bytes)), `hover at the peak says "${allocatedRow}"`);
  const hovered = await details.locator('ul.live-here li').evaluateAll(lis => lis.map(li => Number(li.getAttribute('data-bytes'))));
  const largest = expected.device.live_at_peak.slice(0, 8);
  check(JSON.stringify(hovered) === JSON.stringify(largest), `hover lists the largest live allocations ${JSON.stringify(hovered)}`);

  // Zoom in (button and wheel) narrows the view; reset restores it.
  const view = async () => [Number(await svg.getAttribute('data-view-start-ns')), Number(await svg.getAttribute('data-view-end-ns'))];
  const width = ([start, end]) => end - start;
  const before = await view();
  await gpu.locator('button.zoom-zoom-in').click();
  const zoomed = await view();
  check(Math.abs(width(zoomed) - width(before) / 2) <= 1, `zoom in halves the view (${width(before)} ns -> ${width(zoomed)} ns)`);
  const svgBox = await svg.boundingBox();
  await page.mouse.move(svgBox.x + svgBox.width / 2, svgBox.y + svgBox.height / 2);
  await page.mouse.wheel(0, -300);
  const wheeled = await view();
  check(width(wheeled) < width(zoomed), `the wheel zooms in further (${width(wheeled)} ns)`);
  await page.mouse.move(svgBox.x + svgBox.width / 2, svgBox.y + svgBox.height / 2);
  await page.mouse.down();
  await page.mouse.move(svgBox.x + svgBox.width / 2 + 100, svgBox.y + svgBox.height / 2, { steps: 4 });
  await page.mouse.up();
  const panned = await view();
  check(panned[0] < wheeled[0] && Math.abs(width(panned) - width(wheeled)) <= 1, 'dragging pans to earlier times');
  await svg.dispatchEvent('dblclick');
  check(JSON.stringify(await view()) === JSON.stringify(before), 'double-click resets the view');
  check(await peak.count() === 1, 'the peak marker survives redraws');

  // The process's pinned host memory.
  const host = page.locator('section.space[data-space-id$="/host"]');
  check(await host.count() === 1, 'one section for pinned host memory');
  const hostPeak = Number(await host.locator('g.peak-marker').getAttribute('data-bytes'));
  check(hostPeak === expected.host.peak_bytes, `host peak marker at ${hostPeak}, the program's ${expected.host.peak_bytes}`);
  const hostFailures = await host.locator('g.oom-marker').count();
  check(hostFailures === expected.host.failures, `${hostFailures} failure markers on pinned host memory, ${expected.host.failures} failed`);

  await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2);
  await page.screenshot({ path: screenshotPath, fullPage: true });
} finally {
  await browser.close();
}
console.log('screenshot: ' + screenshotPath);
check.finish();
