// Takes docs/images/report-overview.png, the report page's first tab, in the
// headless Chromium the browser tests use (tests/browser/harness.mjs):
//
//   scripts/run-sample.sh                       # writes out/sample-report.html
//   node docs/images/report_screenshot.mjs [out/sample-report.html]
//
// The PNG is then made small with pngquant (Debian's package):
//   pngquant --quality 70-95 --nofs --strip --force --output X.png X.png
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launchChromium, offlinePage } from '../../tests/browser/harness.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page_file = path.resolve(process.argv[2] ?? path.join(root, 'out/sample-report.html'));
const png = path.join(root, 'docs/images/report-overview.png');

const { context, close } = await launchChromium({ viewport: { width: 1000, height: 860 } });
const { page, external, errors } = await offlinePage(context);
await page.goto(pathToFileURL(page_file).href);
await page.waitForSelector('#tabs [role=tab]');
await page.waitForTimeout(500);  // the charts draw after the tables
await page.screenshot({ path: png });
await close();
if (external.length || errors.length) {
  console.error('report_screenshot: the page asked for', external, 'or failed:', errors);
  process.exit(1);
}
console.log(`report_screenshot: wrote ${png}`);
