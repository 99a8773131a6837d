import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBus } from '../src/bus/bus.js';
import { repoRoot } from './support/troupe.js';

const child = join(repoRoot, 'test', 'support', 'bus-child.js');
const SENDERS = 8;
const EACH = 500;
const DRAINERS = 4;

function run(args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const p = spawn(process.execPath, [child, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    p.on('exit', (code) =>
      code === 0 ? resolvePromise(out) : reject(new Error(`${args[0]} exited ${code}`)),
    );
  });
}

describe('concurrency', () => {
  it(`${SENDERS} processes send ${EACH} messages each while ${DRAINERS} drain: each drained exactly once, one receipt each`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-conc-'));
    const root = join(dir, '.agent-mail');
    const senders = Array.from({ length: SENDERS }, (_, i) => `s${i}`);
    openBus(root).init([...senders, 'inbox']);
    const stop = join(dir, 'stop');
    const drainers = Array.from({ length: DRAINERS }, () => run(['drain', root, stop]));
    await Promise.all(senders.map((s) => run(['send', root, s, String(EACH)])));
    writeFileSync(stop, '');
    const drained = (await Promise.all(drainers)).map((out) => JSON.parse(out) as string[]);

    const all = drained.flat();
    expect(all).toHaveLength(SENDERS * EACH);
    expect(new Set(all).size).toBe(SENDERS * EACH);
    // more than one drainer took part, so the single-winner claim was really contended
    expect(drained.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
    const box = join(root, 'agents', 'inbox');
    expect(readdirSync(join(box, 'inbox', 'new'))).toEqual([]);
    expect(readdirSync(join(box, 'inbox', 'cur'))).toHaveLength(SENDERS * EACH);
    const receipts = readdirSync(join(box, 'receipts'));
    expect(receipts).toHaveLength(SENDERS * EACH);
    expect(new Set(receipts)).toEqual(new Set(all.map((id) => `${id}__inbox__drained.json`)));
  }, 120_000);
});
