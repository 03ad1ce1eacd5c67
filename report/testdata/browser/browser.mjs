// Opens each report of run.sh in headless Chromium and checks it (see
// run.sh). Usage: node browser.mjs CHROMIUM OUT_DIR
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [, , executablePath, out] = process.argv;
const shots = path.join(out, 'shots');
fs.mkdirSync(shots, { recursive: true });
const cases = ['example', 'empty', 'rejected', 'baseline', 'million'];
const failures = [];
const fail = (c, msg) => { failures.push(`${c}: ${msg}`); console.log(`  FAIL ${msg}`); };

// The metrics value at a dotted path.
const at = (doc, p) => p.split('.').reduce((v, k) => (v == null ? undefined : v[k]), doc);

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trajcompress-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
  colorScheme: 'light',
});
const version = context.browser()?.version() ?? (await context.newCDPSession(await context.newPage()).send('Browser.getVersion')).product;
console.log(`test-browser: ${version}, playwright-core ${JSON.parse(fs.readFileSync(new URL('./node_modules/playwright-core/package.json', import.meta.url))).version}`);

const timings = {};
try {
  for (const c of cases) {
    const dir = path.join(out, c);
    const file = path.join(dir, 'report.html');
    const url = pathToFileURL(file).href;
    const metrics = JSON.parse(fs.readFileSync(path.join(dir, 'metrics.json'), 'utf8'));
    const size = fs.statSync(file).size;
    console.log(`== ${c}: ${file} (${size} bytes)`);
    const page = await context.newPage();
    const errors = [], requests = [];
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
    page.on('requestfailed', (r) => { if (r.url() !== url) requests.push(`failed: ${r.url()}`); });

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light', media: 'screen' });
    await page.goto(url, { waitUntil: 'load' });

    // Headline: every figure marked with its metrics key shows that value.
    const shown = await page.$$eval('[data-metric]', (els) => els.map((e) => [e.dataset.metric, e.textContent]));
    const required = ['outcomes.records_in', 'outcomes.records_out', 'outcomes.records_rejected', 'tokens.total_before',
      'tokens.total_after', 'tokens.total_saved', 'tokens.overall_compression_ratio', 'processing.duration_seconds',
      'run.tokenizer', 'summary.trajectories_still_over_limit', 'outcomes.failed_to_fit'];
    if (metrics.run.budget) required.push('run.budget.target_max_tokens');
    for (const p of required) if (!shown.some(([k]) => k === p)) fail(c, `the headline does not show ${p}`);
    for (const [p, text] of shown) {
      const want = at(metrics, p);
      const got = text.replaceAll(',', '');
      if (typeof want === 'number' ? Number(got) !== want : got !== String(want)) fail(c, `${p}: the page shows ${text}, the metrics ${want}`);
    }
    const overBefore = await page.$eval('.card.derived .v', (e) => e.textContent.replaceAll(',', ''));
    if (Number(overBefore) !== metrics.outcomes.records_out - metrics.outcomes.skipped_under_target) fail(c, `over target before: ${overBefore}`);

    // Outcomes table: every outcome's count.
    const outcomeRows = await page.$$eval('#outcomes-table tbody tr', (rows) => rows.map((r) => [r.dataset.outcome, r.cells[1].textContent]));
    for (const k of ['skipped_under_target', 'compressed', 'compressed_over_limit', 'uncompressible', 'summary_failed', 'invalid']) {
      const row = outcomeRows.find(([o]) => o === k);
      if (!row || Number(row[1].replaceAll(',', '')) !== metrics.outcomes[k]) fail(c, `outcome ${k}: ${row?.[1]} vs ${metrics.outcomes[k]}`);
    }

    // The length chart: its bars add up to the histograms; none when empty.
    const hist = metrics.distributions.tokens_before.histogram;
    const bars = await page.$$eval('#lengths rect[data-series]', (rs) => rs.map((r) => [r.dataset.series, Number(r.dataset.count)]));
    if (hist.count === 0) {
      if (bars.length || !(await page.textContent('#lengths-section, #h-lengths ~ *, body')).includes('No record was written')) fail(c, 'a length chart of no record');
    } else {
      for (const [s, h] of [['before', hist], ['after', metrics.distributions.tokens_after.histogram]]) {
        const sum = bars.filter(([n]) => n === s).reduce((a, [, v]) => a + v, 0);
        if (sum !== h.count) fail(c, `${s} bars hold ${sum} records, the histogram ${h.count}`);
      }
      const foot = await page.$$eval('#lengths-table tfoot td', (tds) => tds.map((t) => Number(t.textContent.replaceAll(',', ''))));
      if (foot[0] !== hist.count || foot[1] !== metrics.distributions.tokens_after.histogram.count) fail(c, `the bins table sums ${foot}`);
    }

    // Per-source table: the groups of the metrics, in order.
    const names = await page.$$eval('#sources-table tbody th', (ths) => ths.map((t) => t.textContent));
    const want = metrics.groups.values.map((g) => g.name).concat(metrics.groups.other ? ['other'] : []);
    if (JSON.stringify(names) !== JSON.stringify(want)) fail(c, `sources ${JSON.stringify(names)}, the metrics ${JSON.stringify(want)}`);

    if (c === 'example' && (await page.$$('#worst-over tbody tr')).length === 0) fail(c, 'no worst cases');
    if (c === 'baseline') {
      const verdict = (await page.textContent('#verdict')).trim();
      const checkSays = fs.readFileSync(path.join(dir, 'check.txt'), 'utf8').trim().split('\n').pop();
      if (verdict !== checkSays) fail(c, `the page's verdict "${verdict}" is not check's "${checkSays}"`);
      const rows = await page.$$eval('#gate-table tbody tr', (rs) => rs.map((r) => [r.cells[0].textContent, r.dataset.status]));
      // The default checks: 6, and the 2 retention floors when the baseline has retention figures.
      const checks = Number((checkSays.match(/(\d+) checks/) || [])[1]);
      if (rows.length !== checks || rows.length < 6) fail(c, `${rows.length} gate rows, check made ${checks} (the 6 default checks, and retention's when the baseline has it)`);
      if (!(await page.$('#overlay'))) fail(c, 'no overlay of the baseline distribution');
      console.log(`  gate: ${verdict}; ${rows.map(([p, s]) => `${p} ${s}`).join(', ')}`);
    }

    // Light and dark, desktop and phone: no horizontal overflow of the page
    // (charts and wide tables scroll in their own boxes), a dark background
    // in dark mode, a screenshot of each.
    const bg = {};
    for (const [w, h, label] of [[1280, 900, 'desktop'], [390, 844, 'phone']]) {
      for (const scheme of ['light', 'dark']) {
        await page.setViewportSize({ width: w, height: h });
        await page.emulateMedia({ colorScheme: scheme, media: 'screen' });
        const sw = await page.evaluate(() => document.documentElement.scrollWidth);
        if (sw > w) fail(c, `${label} ${scheme}: the page is ${sw}px wide in a ${w}px window`);
        bg[scheme] = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        const shot = path.join(shots, `${c}-${label}-${scheme}.png`);
        await page.screenshot({ path: shot, fullPage: true });
      }
    }
    if (bg.light === bg.dark) fail(c, `the same background in light and dark mode (${bg.light})`);

    // Print: A4 width without overflow, and a PDF.
    await page.setViewportSize({ width: 794, height: 1123 });
    await page.emulateMedia({ colorScheme: 'dark', media: 'print' });
    const pw = await page.evaluate(() => document.documentElement.scrollWidth);
    if (pw > 794) fail(c, `print: ${pw}px wide on A4`);
    if (await page.evaluate(() => getComputedStyle(document.body).backgroundColor) !== 'rgb(255, 255, 255)') fail(c, 'print is not on white');
    const pdf = await page.pdf({ format: 'A4', printBackground: false });
    fs.writeFileSync(path.join(shots, `${c}.pdf`), pdf);
    const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) || []).length;

    // Load time: five fresh loads, the median of navigation start to the
    // load event (reported, never asserted: timing lives in bench/README.md).
    const loads = [];
    for (let i = 0; i < 5; i++) {
      const p2 = await context.newPage();
      p2.on('console', (m) => { if (m.type() === 'error') errors.push(`error: ${m.text()}`); });
      p2.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
      await p2.goto(url, { waitUntil: 'load' });
      loads.push(await p2.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd));
      await p2.close();
    }
    loads.sort((a, b) => a - b);
    timings[c] = { size, load: loads[2] };
    console.log(`  ${shown.length} headline figures equal the metrics; PDF ${pages} pages; load median ${loads[2].toFixed(1)} ms (of ${loads.map((l) => l.toFixed(1)).join(', ')})`);

    for (const e of errors) fail(c, `console ${e}`);
    for (const r of requests) fail(c, `network request ${r}`);
    if (!errors.length && !requests.length) console.log('  no console error, no network request');
    await page.close();
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(`screenshots and PDFs: ${shots}`);
if (failures.length) {
  console.log(`test-browser: FAIL: ${failures.length} problem(s)`);
  process.exit(1);
}
console.log(`test-browser: ok: ${cases.length} reports (${cases.map((c) => `${c} ${timings[c].size} B`).join(', ')})`);
