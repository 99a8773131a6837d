// Preloaded into a child (`node --import ./bench/rss-probe.js …`): at exit, writes the process's
// peak RSS (kB, from getrusage) to the file named by TROUPE_BENCH_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.TROUPE_BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    writeFileSync(file, JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS }));
  });
}
