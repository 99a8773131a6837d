import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { currentHolder, type TaskFilter } from '../../core/event-store.js';
import { TASK_CREATED } from '../../engine/test-pipelines.js';
import { storeContract } from '../contract.js';
import { openSqliteStore, SQLITE_SCHEMA_VERSION, taskListSql } from './sqlite-store.js';

storeContract('sqlite', () =>
  openSqliteStore(join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db')),
);

describe('sqlite store: provider windows across connections', () => {
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('a window another process closes is seen at the next turn of the event loop, and one that reset is gone', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    const mine = openSqliteStore(file);
    const other = openSqliteStore(file);
    try {
      const now = new Date('2026-11-29T12:00:00Z');
      expect(mine.closedProviders(now)).toEqual([]);
      other.closeProvider('claude', '2026-11-29T12:05:00Z');
      // within one turn (no await: no other task of this process ran) the answer is the one just read
      expect(mine.closedProviders(now)).toEqual([]);
      await nextTurn();
      expect(mine.closedProviders(now)).toEqual([{ provider: 'claude', resetAt: '2026-11-29T12:05:00Z' }]);
      // a window this connection closes is seen at once
      mine.closeProvider('gemini', '2026-11-29T12:01:00Z');
      expect(mine.closedProviders(now).map((w) => w.provider)).toEqual(['claude', 'gemini']);
      expect(other.closedProviders(now).map((w) => w.provider)).toEqual(['claude', 'gemini']);
      expect(mine.closedProviders(new Date('2026-11-29T12:02:00Z')).map((w) => w.provider)).toEqual([
        'claude',
      ]);
    } finally {
      mine.close();
      other.close();
    }
  });
});

describe('sqlite store: a store written before provider keys', () => {
  it('keeps its windows, each now closing every provider of its runtime; a later open changes nothing', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    const old = new Database(file);
    old.exec('CREATE TABLE provider_windows (provider TEXT PRIMARY KEY, reset_at TEXT NOT NULL)');
    old.prepare('INSERT INTO provider_windows VALUES (?, ?)').run('openai', '2026-11-29T12:05:00Z');
    old.close();
    const now = new Date('2026-11-29T12:00:00Z');
    let store = openSqliteStore(file);
    try {
      expect(store.closedProviders(now)).toEqual([{ provider: 'openai*', resetAt: '2026-11-29T12:05:00Z' }]);
      store.closeProvider('claude', '2026-11-29T12:06:00Z');
    } finally {
      store.close();
    }
    store = openSqliteStore(file);
    try {
      // `claude` is a provider key of this troupe: not taken for an old window again
      expect(store.closedProviders(now).map((w) => w.provider)).toEqual(['claude', 'openai*']);
    } finally {
      store.close();
    }
  });
});

describe('sqlite store: a task list costs the same whatever the store holds', () => {
  it('picks the page through an index first, and summarises only its rows', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    openSqliteStore(file).close();
    const db = new Database(file, { readonly: true });
    const plan = (filter: TaskFilter) => {
      const { sql, params } = taskListSql(filter);
      return db
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...params)
        .map((row) => row.detail);
    };
    try {
      for (const filter of [
        { limit: 50 },
        { limit: 50, offset: 100 },
        { status: ['completed' as const], limit: 50 },
        { pipeline: 'p', limit: 50 },
      ]) {
        const steps = plan(filter);
        // the page is a co-routine of its own, read from an index in list order (no sort of all tasks)...
        expect(steps.slice(0, 2), JSON.stringify(filter)).toEqual([
          'CO-ROUTINE t',
          expect.stringMatching(/^(SCAN|SEARCH) tasks USING (COVERING )?INDEX tasks_by_/),
        ]);
        expect(steps, JSON.stringify(filter)).not.toContain('USE TEMP B-TREE FOR ORDER BY');
        // ...and the per-task subqueries on events run over its rows only
        expect(steps.indexOf('SCAN t')).toBeLessThan(steps.indexOf('CORRELATED SCALAR SUBQUERY 1'));
      }
    } finally {
      db.close();
    }
  });
});

describe('sqlite store: a store written before lease holders had a pid scope', () => {
  it("gives its leases on this host this process's scope, so a holder that died before the upgrade can be resumed", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    let store = openSqliteStore(file);
    const dead = store.createTask(TASK_CREATED).taskId;
    const remote = store.createTask(TASK_CREATED).taskId;
    store.close();
    // as troupe 0.1.0 left it: user_version 1, leases by pid and host only
    const old = new Database(file);
    old.exec('ALTER TABLE tasks DROP COLUMN lease_boot_id; ALTER TABLE tasks DROP COLUMN lease_pid_ns');
    old.exec('ALTER TABLE events DROP COLUMN engine');
    const gone = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']));
    old.prepare('UPDATE tasks SET lease_pid = ?, lease_host = ? WHERE id = ?').run(gone, hostname(), dead);
    old.prepare('UPDATE tasks SET lease_pid = ?, lease_host = ? WHERE id = ?').run(gone, 'elsewhere', remote);
    old.pragma('user_version = 1');
    old.close();
    store = openSqliteStore(file);
    try {
      expect(store.lease(dead)).toEqual({ holder: { ...currentHolder(), pid: gone }, alive: false });
      expect(store.tryLease(dead, currentHolder())).toBe(true);
      expect(store.lease(remote)).toEqual({ holder: { pid: gone, host: 'elsewhere' }, alive: true });
    } finally {
      store.close();
    }
  });
});

describe('sqlite store: two troupes upgrading one store at once', () => {
  it('the second, which read the old version before the first migrated, neither runs a step again nor writes the old version back', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    openSqliteStore(file).close();
    const old = new Database(file);
    old.exec('ALTER TABLE tasks DROP COLUMN lease_boot_id; ALTER TABLE tasks DROP COLUMN lease_pid_ns');
    old.exec('ALTER TABLE events DROP COLUMN engine');
    old.pragma('user_version = 0');
    old.close();
    // the other troupe holds the write lock mid-migration, and commits once this one has read the version
    const other = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(process.argv[1]);
         db.exec('BEGIN IMMEDIATE; ALTER TABLE tasks ADD COLUMN lease_boot_id TEXT; ALTER TABLE tasks ADD COLUMN lease_pid_ns TEXT; ALTER TABLE events ADD COLUMN engine TEXT; PRAGMA user_version = 2');
         process.stdout.write('locked\\n');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
         db.exec('COMMIT');`,
        file,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => other.stdout.once('data', () => resolve()));
    const store = openSqliteStore(file);
    store.close();
    await new Promise((resolve) => other.once('exit', resolve));
    const after = new Database(file, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    after.close();
  });
});

describe('sqlite store: a store from before issue claims recorded their pull request', () => {
  it('gains the column on open and keeps its claims', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    let store = openSqliteStore(file);
    store.claimIssue('github:acme/app', '12', new Date());
    store.close();
    const old = new Database(file);
    old.exec('ALTER TABLE issue_claims DROP COLUMN pull_request');
    old.pragma('user_version = 3');
    old.close();
    store = openSqliteStore(file);
    try {
      const url = 'https://github.com/acme/app/pull/3';
      expect(store.updateIssueClaim('github:acme/app', '12', { pullRequest: url })).toBe(true);
      expect(store.issueClaims('github:acme/app')).toMatchObject([{ issueId: '12', pullRequest: url }]);
    } finally {
      store.close();
    }
  });
});
