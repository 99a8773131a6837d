import { lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf, NotFoundError, StateError, UsageError } from '../core/errors.js';
import { rfc3339 } from './clock.js';
import { errno, writeFileAtomic } from './durable.js';
import { goJson } from './go-json.js';
import { HUMAN, isValidHandle } from './handle.js';

export interface Mailbox {
  handle: string;
  dir: string;
  inboxTmp: string;
  inboxNew: string;
  inboxCur: string;
  sent: string;
  dlqTmp: string;
  dlqNew: string;
  dlqCur: string;
  receipts: string;
  presence: string;
}

/** The eight leaf directories of a complete mailbox (AMQ's layout.go). */
const LEAVES = [
  'inbox/tmp',
  'inbox/new',
  'inbox/cur',
  'outbox/sent',
  'dlq/tmp',
  'dlq/new',
  'dlq/cur',
  'receipts',
] as const;

// a send names two mailboxes; their ten paths are joined once per process, not per message
const mailboxes = new Map<string, Mailbox>();

export function mailbox(root: string, handle: string): Mailbox {
  const key = `${root}\u0000${handle}`;
  const known = mailboxes.get(key);
  if (known) return known;
  if (!isValidHandle(handle)) throw new UsageError(`invalid handle '${handle}'`);
  const box = mailboxAt(root, handle);
  if (mailboxes.size > 1000) mailboxes.clear();
  mailboxes.set(key, box);
  return box;
}

function mailboxAt(root: string, handle: string): Mailbox {
  const dir = join(root, 'agents', handle);
  return Object.freeze({
    handle,
    dir,
    inboxTmp: join(dir, 'inbox', 'tmp'),
    inboxNew: join(dir, 'inbox', 'new'),
    inboxCur: join(dir, 'inbox', 'cur'),
    sent: join(dir, 'outbox', 'sent'),
    dlqTmp: join(dir, 'dlq', 'tmp'),
    dlqNew: join(dir, 'dlq', 'new'),
    dlqCur: join(dir, 'dlq', 'cur'),
    receipts: join(dir, 'receipts'),
    presence: join(dir, 'presence.json'),
  });
}

// mkdir -p of eight dirs is eight syscalls a send; a process only needs to do it once per mailbox
// (and again if a write finds a directory gone: see ensureMailbox's callers). A symlinked folder
// is refused then too: a send checks once per process and mailbox (its folders' lstats, ~8 µs
// each on a busy 2-core VM, cost more than a send's own work); drain, list and read every time.
const ensured = new Set<string>();

export function ensureMailbox(box: Mailbox, force = false): void {
  if (!force && ensured.has(box.dir)) return;
  refuseSymlinks(box);
  for (const leaf of LEAVES) mkdirSync(join(box.dir, leaf), { recursive: true, mode: 0o700 });
  ensured.add(box.dir);
}

export function forgetMailbox(box: Mailbox): void {
  ensured.delete(box.dir);
}

/** Every folder of a mailbox, itself first. */
const FOLDERS = ['.', 'inbox', 'outbox', 'dlq', ...LEAVES] as const;

/**
 * Refuses a mailbox with a symlinked folder (the mailbox itself, `inbox/new`, `inbox/cur`, …):
 * following it would move or write mail somewhere else entirely. Missing folders are fine.
 */
export function refuseSymlinks(box: Mailbox): void {
  for (const folder of FOLDERS) {
    const path = folder === '.' ? box.dir : join(box.dir, folder);
    let link: boolean;
    try {
      link = lstatSync(path).isSymbolicLink();
    } catch (error) {
      if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR') continue;
      throw error;
    }
    if (link) {
      throw new StateError(
        `${path} is a symlink: troupe does not follow symlinked mailbox folders (make it a real directory)`,
      );
    }
  }
}

/** Leaves that are missing or not real directories (a symlink does not count). */
export function missingLeaves(box: Mailbox): string[] {
  return LEAVES.filter((leaf) => {
    try {
      return !lstatSync(join(box.dir, leaf)).isDirectory();
    } catch {
      return true;
    }
  });
}

/** Handles with a mailbox directory under `agents/`. */
export function mailboxHandles(root: string): string[] {
  try {
    return readdirSync(join(root, 'agents'), { withFileTypes: true })
      .filter((d) => d.isDirectory() && isValidHandle(d.name))
      .map((d) => d.name)
      .sort();
  } catch (error) {
    if (errno(error) === 'ENOENT') return [];
    throw error;
  }
}

/** Names a base root holds that are not sessions: its own folders, and `_`/`.` names. */
const NOT_SESSIONS = new Set(['agents', 'threads', 'meta', 'extensions', 'bridge']);

/** `[name, root]` of each session of a base root: a direct child with `agents/` (AMQ's `who`). */
export function sessionRoots(baseRoot: string): Array<[session: string, root: string]> {
  let names: string[];
  try {
    names = readdirSync(baseRoot).sort();
  } catch {
    return [];
  }
  return names
    .filter((n) => !n.startsWith('_') && !n.startsWith('.') && !NOT_SESSIONS.has(n))
    .filter((n) => {
      try {
        return lstatSync(join(baseRoot, n, 'agents')).isDirectory();
      } catch {
        return false;
      }
    })
    .map((n) => [n, join(baseRoot, n)]);
}

export interface RootConfig {
  version: number;
  created_utc: string;
  agents: string[];
}

export function configPath(root: string): string {
  return join(root, 'meta', 'config.json');
}

/** `meta/config.json`, or undefined when the root has none; throws when it is not valid. */
export function readConfig(root: string): RootConfig | undefined {
  let text: string;
  try {
    text = readFileSync(configPath(root), 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${configPath(root)}: invalid JSON: ${messageOf(error)}`);
  }
  const config = raw as Partial<RootConfig> | null;
  if (!config || typeof config !== 'object' || !Array.isArray(config.agents)) {
    throw new UsageError(`${configPath(root)}: expected {"version":1,"agents":[...]}`);
  }
  return {
    version: config.version ?? 1,
    created_utc: config.created_utc ?? '',
    agents: config.agents.filter((a): a is string => typeof a === 'string'),
  };
}

export interface InitResult {
  root: string;
  agents: string[];
  created: boolean;
}

/** `amq init`: dirs (0700), config (0600, atomic), a mailbox for each agent and for `user`. */
export function initRoot(root: string, agents: string[], force = false): InitResult {
  const handles = [...new Set(agents)].sort();
  for (const h of handles) if (!isValidHandle(h)) throw new UsageError(`invalid handle '${h}'`);
  const existing = safeReadConfig(root);
  if (existing && !force) {
    const same = existing.agents.join(',') === handles.join(',');
    if (!same) {
      throw new UsageError(`${configPath(root)} already exists with agents [${existing.agents.join(', ')}]`, {
        hint: 'pass --force to overwrite it',
      });
    }
  }
  for (const dir of ['agents', 'threads', 'meta'])
    mkdirSync(join(root, dir), { recursive: true, mode: 0o700 });
  if (!existing || force) {
    const config: RootConfig = { version: 1, created_utc: rfc3339(), agents: handles };
    writeFileAtomic(join(root, 'meta'), 'config.json', Buffer.from(`${goJson(config)}\n`));
  }
  for (const h of [...handles, HUMAN]) ensureMailbox(mailbox(root, h), true);
  return { root, agents: handles, created: !existing };
}

function safeReadConfig(root: string): RootConfig | undefined {
  try {
    return readConfig(root);
  } catch {
    return undefined;
  }
}

/** A root a local send may deliver into: it has a config, or is a session of a base that has one. */
export function requireInitialized(root: string, baseRoot?: string): RootConfig {
  const config = readConfig(root) ?? (baseRoot && baseRoot !== root ? readConfig(baseRoot) : undefined);
  if (!config) {
    throw new NotFoundError(`${root} is not initialized (no meta/config.json)`, {
      hint: 'run `troupe bus init --root <dir> --agents a,b`',
    });
  }
  return config;
}
