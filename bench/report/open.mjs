// Times opening HTML reports in headless Chromium: for each round, each
// file in turn (interleaved) is loaded in a fresh page; prints the median
// and range of navigation start → load event (the page's own clock) and
// of the driver's goto → load event per file. Uses the playwright-core that report/testdata/browser
// installs (run its run.sh, or npm ci there, first).
//
//	node bench/report/open.mjs [-rounds 9] FILE.html...
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(new URL('../../report/testdata/browser/package.json', import.meta.url));
const { chromium } = require('playwright-core');
let args = process.argv.slice(2), rounds = 9;
if (args[0] === '-rounds') { rounds = Number(args[1]); args = args.slice(2); }
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trajcompress-open-'));
const ctx = await chromium.launchPersistentContext(dir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, viewport: { width: 1280, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const t = Object.fromEntries(args.map((f) => [f, { load: [], wall: [] }]));
for (let r = 0; r < rounds; r++) {
  for (const f of args) {
    const page = await ctx.newPage();
    const t0 = performance.now();
    await page.goto(pathToFileURL(path.resolve(f)).href, { waitUntil: 'load' });
    const wall = performance.now() - t0;
    const load = await page.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd);
    t[f].load.push(load); t[f].wall.push(wall);
    await page.close();
  }
}
await ctx.close();
fs.rmSync(dir, { recursive: true, force: true });
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
for (const f of args) {
  const { load, wall } = t[f];
  console.log(`${f}: ${fs.statSync(f).size} bytes; load event median ${med(load).toFixed(1)} ms (${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)}), goto to load median ${med(wall).toFixed(1)} ms, ${rounds} rounds`);
}
