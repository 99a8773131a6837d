// `troupe serve` under load: SSE delivery latency (an event appended by the engine → received by
// a connected client), the task list's response time and the server's RSS with 100 scripted
// tasks running and 20 SSE clients connected, and the dashboard's first-load JS, gzipped.
// Spawns the built binary in a throwaway project. Writes only its own section of docs/benchmarks.md.
//   npm run build && node bench/server.js [--tasks 100] [--clients 20] [--no-write]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { nowMs, quantile, tempDir } from './lib.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const TASKS = arg('--tasks', 100);
const CLIENTS = arg('--clients', 20);
const log = (m) => process.stderr.write(`${m}\n`);
const started = nowMs();

// a project: writer → editor, each streaming 40 lines over 8 s (scripted delay_ms)
const dir = tempDir('server');
mkdirSync(join(dir, '.troupe', 'pipelines'), { recursive: true });
writeFileSync(join(dir, '.troupe', 'config.yaml'), 'default_pipeline: bench\n');
writeFileSync(
  join(dir, '.troupe', 'pipelines', 'bench.yaml'),
  `agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
    handoffs: [{ to: editor }]
  - id: editor
    runtime: claude
    system_prompt: "Edit: {{ input }}"
`,
);
const lines = (who) => Array.from({ length: 40 }, (_, i) => `${who} line ${i + 1}`).join('\n');
const script = {
  agents: {
    writer: [{ reply: lines('writer'), delay_ms: 8000 }],
    editor: [{ reply: lines('editor'), delay_ms: 8000 }],
  },
};

// the server, as people start it
const child = spawn(process.execPath, [join(ROOT, 'bin', 'troupe.js'), 'serve', '--port', '0'], {
  cwd: dir,
  env: { ...process.env, NO_COLOR: '1' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (b) => {
    out += b;
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
  child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
});
const api = (p) => new URL(p, url).toString();
log(`serve at ${url} (pid ${child.pid}) in ${dir}`);

let rssPeak = 0;
const rss = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  const mb = m ? Number(m[1]) / 1024 : 0;
  rssPeak = Math.max(rssPeak, mb);
  return mb;
};

/** An SSE client on /api/events: for each troupe event (the frames with an id), receipt − `at`. */
function sseClient(latencies, from) {
  const controller = new AbortController();
  const ready = (async () => {
    const response = await fetch(api(`/api/events?after=${from}`), { signal: controller.signal });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          const received = Date.now();
          buffer += decoder.decode(value, { stream: true });
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
            if (!frame.startsWith('id: ')) continue;
            const data = frame.slice(frame.indexOf('\ndata: ') + 7);
            const at = /"at":"([^"]+)"/.exec(data)?.[1];
            if (at) latencies.push(received - Date.parse(at));
          }
        }
      } catch {
        // aborted
      }
    })();
  })();
  return { ready, stop: () => controller.abort() };
}

const health = async () => (await (await fetch(api('/api/health'))).json()).last_seq;
const run = async (input) => {
  const r = await fetch(api('/api/run'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ input, script }),
  });
  if (r.status !== 202) throw new Error(`run: ${r.status} ${await r.text()}`);
  return (await r.json()).task_id;
};
const waitIdle = async () => {
  for (;;) {
    const body = await (await fetch(api('/api/tasks?status=running,pending&limit=1'))).json();
    if (body.tasks.length === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// 1. one task, one client: the bare delivery latency
const idle = [];
{
  const client = sseClient(idle, await health());
  await client.ready;
  await run('alone');
  await waitIdle();
  await sleep(200);
  client.stop();
}
log(`idle: ${idle.length} events`);

// 2. TASKS tasks running, CLIENTS clients connected; the task list asked every 100 ms
const loaded = [];
const listMs = [];
const rssSamples = [];
{
  const from = await health();
  const clients = Array.from({ length: CLIENTS }, () => sseClient(loaded, from));
  await Promise.all(clients.map((c) => c.ready));
  const ids = await Promise.all(Array.from({ length: TASKS }, (_, i) => run(`task ${i}`)));
  log(`${ids.length} tasks started`);
  let running = true;
  const lister = (async () => {
    while (running) {
      const t0 = nowMs();
      const r = await fetch(api('/api/tasks'));
      await r.json();
      listMs.push(nowMs() - t0);
      rssSamples.push(rss());
      await sleep(100);
    }
  })();
  await waitIdle();
  running = false;
  await lister;
  await sleep(300);
  for (const c of clients) c.stop();
}
const { last_seq } = await (await fetch(api('/api/health'))).json();
log(`loaded: ${loaded.length} deliveries, ${listMs.length} list requests, last seq ${last_seq}`);
const rssEnd = rss();
child.kill('SIGTERM');
await new Promise((r) => child.on('exit', r));

// 3. the dashboard's first load: the JS index.html loads, gzipped
const webDir = join(ROOT, 'dist', 'web');
const html = readFileSync(join(webDir, 'index.html'), 'utf8');
const scripts = [...html.matchAll(/(?:src|href)="\/?([^"]+\.js)"/g)].map((m) => m[1]);
const jsBytes = scripts.map((s) => readFileSync(join(webDir, s)));
const gzipKb = jsBytes.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0) / 1024;
const rawKb = jsBytes.reduce((n, b) => n + b.length, 0) / 1024;

const tookS = (nowMs() - started) / 1000;
const p = (values, q) => quantile(values, q);
const pass = (ok) => (ok ? 'PASS' : 'FAIL');
const table = [
  '| Figure | Value | Target | Result |',
  '| --- | --- | --- | --- |',
  `| SSE delivery, 1 task, 1 client: p95 (p50, max) | ${p(idle, 0.95)} ms (${p(idle, 0.5)}, ${Math.max(...idle)}) | ≤ 50 ms | ${pass(p(idle, 0.95) <= 50)} |`,
  `| SSE delivery, ${TASKS} tasks, ${CLIENTS} clients: p95 (p50, max) | ${p(loaded, 0.95)} ms (${p(loaded, 0.5)}, ${Math.max(...loaded)}) | ≤ 50 ms | ${pass(p(loaded, 0.95) <= 50)} |`,
  `| \`GET /api/tasks\` under that load: p95 (p50, max) | ${p(listMs, 0.95).toFixed(1)} ms (${p(listMs, 0.5).toFixed(1)}, ${Math.max(...listMs).toFixed(1)}) | ≤ 100 ms | ${pass(p(listMs, 0.95) <= 100)} |`,
  `| server RSS, peak under that load (at the end) | ${rssPeak.toFixed(0)} MB (${rssEnd.toFixed(0)}) | < 250 MB | ${pass(rssPeak < 250)} |`,
  `| dashboard first-load JS, gzipped (raw) | ${gzipKb.toFixed(1)} KB (${rawKb.toFixed(1)}) | < 300 KB | ${pass(gzipKb < 300)} |`,
].join('\n');

const section = `<!-- server:start -->
## Server (\`troupe serve\`)

Written by \`node bench/server.js\` (after \`npm run build\`); do not edit by hand.

- **Date:** ${new Date().toISOString().slice(0, 19)}Z
- **Machine:** Node ${process.version}, ${cpus()[0]?.model.trim() ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}
- **Bench time:** ${Math.round(tookS)} s

${table}

**Method** (bench/server.js). The built binary, \`troupe serve --port 0\`, in a fresh project with a
two-agent pipeline (writer → editor) on the scripted runtime; each stage streams 40 lines over 8 s
(\`delay_ms: 8000\`), so a task runs about 16 s and writes about 90 events. *Delivery latency*: SSE
clients read \`/api/events\` with \`fetch\`; for every troupe event (the frames with an \`id\`), the
time it was read minus its \`at\` (stamped when the engine appends it; same clock, millisecond
resolution). First one task with one client (${idle.length} events), then ${TASKS} tasks started
at once through \`POST /api/run\` with ${CLIENTS} clients connected (${loaded.length} deliveries,
${last_seq} events in the log). *Task list*: \`GET /api/tasks\` (first page, 50 rows with usage
and what each waits for), timed to the parsed body, every 100 ms while the tasks run
(${listMs.length} requests). *RSS*: VmRSS of the server process, sampled with each list request.
*First load*: the JS files \`dist/web/index.html\` loads, each gzipped at level 9.
<!-- server:end -->`;

process.stdout.write(`${table}\n`);
if (!process.argv.includes('--no-write')) {
  const old = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const re = /<!-- server:start -->[\s\S]*?<!-- server:end -->/;
  const next = re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`;
  writeFileSync(DOC, next);
  log(`updated ${DOC}`);
}
