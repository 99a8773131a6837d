import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deliver } from '../src/bus/deliver.js';
import { mailbox } from '../src/bus/layout.js';
import { crashMessage } from './support/bus-child.js';
import { repoRoot } from './support/troupe.js';

const child = join(repoRoot, 'test', 'support', 'bus-child.js');
// 80 kills in `npm test`; TROUPE_CRASH_RUNS=1000 for a soak (docs/reliability.md).
const RUNS = Number(process.env.TROUPE_CRASH_RUNS ?? 80);

/** Starts a crash child, kills it with SIGKILL 0–20 ms after it starts delivering; returns the last index it finished. */
function killedRun(root: string, run: number): Promise<number> {
  return new Promise((resolvePromise) => {
    const p: ChildProcess = spawn(process.execPath, [child, 'crash', root, String(run)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let armed = false;
    p.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!armed && out.startsWith('ready\n')) {
        armed = true;
        setTimeout(() => p.kill('SIGKILL'), Math.random() * 20);
      }
    });
    p.on('exit', () => {
      const done = [...out.matchAll(/^done (\d+)$/gm)].map((m) => Number(m[1]));
      resolvePromise(done.length ? Math.max(...done) : -1);
    });
  });
}

describe('crash safety', () => {
  it(`SIGKILL at random points of ${RUNS} sends: every message is fully delivered or absent, and a retry converges`, async () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-crash-'));
    const inbox = mailbox(root, 'inbox');
    let retried = 0;
    // Two children at a time: the machines have two cores, and runs write different names.
    for (let run = 0; run < RUNS; run += 2) {
      const lasts = await Promise.all([killedRun(root, run), killedRun(root, run + 1)]);
      lasts.forEach((last, k) => {
        // The send in flight when the kill landed: retrying it with the same bytes must succeed
        // whatever state it was left in (nothing, a tmp attempt, or already published).
        const j = last + 1;
        deliver([{ box: inbox }], `crash-${run + k}-${j}.md`, crashMessage(run + k, j));
        retried++;
      });
    }
    const names = readdirSync(inbox.inboxNew);
    expect(names.length).toBeGreaterThanOrEqual(RUNS);
    for (const name of names) {
      const [, run, j] = /^crash-(\d+)-(\d+)\.md$/.exec(name)!;
      expect(
        readFileSync(join(inbox.inboxNew, name)).equals(crashMessage(Number(run), Number(j))),
        name,
      ).toBe(true);
    }
    // Leftovers may remain in tmp/ (cleanup removes them); they are hidden, so never read as mail.
    expect(readdirSync(inbox.inboxTmp).every((n) => n.startsWith('.'))).toBe(true);
    expect(retried).toBe(RUNS);
  }, 120_000);
});
