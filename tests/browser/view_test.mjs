// `proftrace view` as the Perfetto UI meets it, in headless Chromium.
//
//   node view_test.mjs direct URL SHA256 BYTES
//     URL is the trace on port 9001-style direct serving. A page on
//     https://elsewhere.example cannot read it; a page on the UI's origin
//     (https://ui.perfetto.dev, answered locally: there is no network) fetches
//     it through CORS and gets exactly the file (SHA-256 and size).
//
//   node view_test.mjs opener URL SHA256 BYTES
//     URL is the page proftrace serves on other ports. Its button opens the
//     UI in a new tab; a stand-in UI on the UI's origin that speaks Perfetto's
//     PING/PONG + postMessage protocol must receive exactly the file.
//
// Exit status 0 when every check passed. Only requests to 127.0.0.1 reach
// the network; https://ui.perfetto.dev and https://elsewhere.example are
// answered by the route handlers below.
import { checker, launchChromium } from './harness.mjs';

const [mode, url, expectedSha, expectedBytes] = process.argv.slice(2);
if (!expectedBytes || !['direct', 'opener'].includes(mode)) {
  console.error('usage: node view_test.mjs direct|opener URL SHA256 BYTES');
  process.exit(2);
}
const UI = 'https://ui.perfetto.dev';
const check = checker();

// SHA-256 of an ArrayBuffer, in the page (hex).
const DIGEST = `async function digest(buffer) {
  const hash = await crypto.subtle.digest('SHA-256', buffer);
  return Array.from(new Uint8Array(hash), b => b.toString(16).padStart(2, '0')).join('');
}`;

// A stand-in for the UI: answers PING with PONG and keeps what it is posted.
const STAND_IN_UI = `<!DOCTYPE html><html><body><script>
${DIGEST}
window.addEventListener('message', async event => {
  if (event.data === 'PING') { event.source.postMessage('PONG', event.origin); return; }
  const trace = event.data && event.data.perfetto;
  if (!trace) return;
  window.received = { bytes: trace.buffer.byteLength, sha: await digest(trace.buffer), title: trace.title };
});
</script></body></html>`;

// Chrome asks the user before a public site reaches 127.0.0.1 (Local Network
// Access); someone who runs `proftrace view` says yes, which this grants
// through CDP. The permission's name has changed across Chrome versions, and
// a grant replaces the origin's earlier ones: the names this Chromium knows
// are found one by one, then granted together.
async function allowLocalNetwork(page, origins) {
  const cdp = await page.context().newCDPSession(page);
  const known = [];
  for (const permission of ['loopbackNetwork', 'localNetwork', 'localNetworkAccess'])
    if (await cdp.send('Browser.grantPermissions', { permissions: [permission], origin: origins[0] }).then(() => true, () => false))
      known.push(permission);
  for (const origin of origins)
    await cdp.send('Browser.grantPermissions', { permissions: known, origin });
}

const browser = await launchChromium();
const context = browser.context;
try {
  await context.route(/^https:\/\/(ui\.perfetto\.dev|elsewhere\.example)\//, route =>
    route.fulfill({ status: 200, contentType: 'text/html', body: STAND_IN_UI }));

  if (mode === 'direct') {
    const page = await context.newPage();
    await allowLocalNetwork(page, [UI, 'https://elsewhere.example']);
    const fetchFrom = async origin => {
      await page.goto(origin + '/');
      return page.evaluate(async ([target, digestSource]) => {
        const digest = eval('(' + digestSource + ')');
        try {
          const response = await fetch(target);
          if (!response.ok) return { error: 'HTTP ' + response.status };
          const buffer = await response.arrayBuffer();
          return { bytes: buffer.byteLength, sha: await digest(buffer) };
        } catch (error) {
          return { error: String(error) };
        }
      }, [url, DIGEST]);
    };
    const foreign = await fetchFrom('https://elsewhere.example');
    check(foreign.error !== undefined, `a page on another origin cannot read the trace (${foreign.error || 'it could'})`);
    const ui = await fetchFrom(UI);
    check(ui.error === undefined, `a page on ${UI} fetches the trace through CORS (${ui.error || 'fetched'})`);
    check(ui.bytes === Number(expectedBytes), `it got ${ui.bytes} bytes, the file has ${expectedBytes}`);
    check(ui.sha === expectedSha, `its SHA-256 is the file's (${ui.sha})`);
  } else {
    const page = await context.newPage();
    await page.goto(url);
    const [ui] = await Promise.all([context.waitForEvent('page'), page.click('#open')]);
    await ui.waitForLoadState();
    check(ui.url().startsWith(UI), `the button opened the UI (${ui.url()})`);
    await ui.waitForFunction(() => window.received !== undefined, null, { timeout: 15000 });
    const received = await ui.evaluate(() => window.received);
    check(received.bytes === Number(expectedBytes), `the UI was handed ${received.bytes} bytes, the file has ${expectedBytes}`);
    check(received.sha === expectedSha, `their SHA-256 is the file's (${received.sha})`);
    check(received.title.length > 0, `with a title (${received.title})`);
    await page.waitForSelector('body[data-handed-over="true"]', { timeout: 5000 });
    check(true, 'the page says it handed the trace over');
  }
} catch (error) {
  check(false, 'no exception: ' + error.message);
} finally {
  await browser.close();
}
check.finish();
