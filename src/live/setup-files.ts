import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { loadAmqrc } from '../bus/amqrc.js';
import { rfc3339 } from '../bus/clock.js';
import { errno, writeFileAtomic } from '../bus/durable.js';
import { goJson } from '../bus/go-json.js';
import { ensureMailbox, mailbox, missingLeaves, readConfig, sessionRoots } from '../bus/layout.js';
import { gitTop } from '../bus/root.js';
import { LAUNCH_FILE, readLaunchConfig } from './launch-config.js';
import { LAUNCH_LOCAL_FILE, readLocalLaunchConfig } from './launcher-preference.js';
import { createSession } from './session-record.js';
import { DEFAULT_ROOT, type SetupPlan, type SetupState } from './setup-plan.js';

/** Where a project's `.amqrc` and `.amq/` live: the Git worktree top, else the directory given. */
export function projectDirOf(cwd: string): string {
  return gitTop(cwd) ?? resolve(cwd);
}

/** What the plan depends on, read from disk; reads only. */
export function readSetupState(projectDir: string): SetupState {
  const rcFile = join(projectDir, '.amqrc');
  let amqrc: SetupState['amqrc'];
  if (existsSync(rcFile)) {
    const rc = loadAmqrc(rcFile);
    const rel = relative(projectDir, rc.root);
    amqrc = {
      text: readFileSync(rcFile, 'utf8'),
      root: rel.startsWith('..') || isAbsolute(rel) ? rc.root : rel,
    };
  }
  const root = amqrc?.root ?? DEFAULT_ROOT;
  const absRoot = resolve(projectDir, root);
  const launchText = readOptional(join(projectDir, LAUNCH_FILE));
  const launch = readLaunchConfig(projectDir);
  const localLaunchText = readOptional(join(projectDir, LAUNCH_LOCAL_FILE));
  const localLaunch = readLocalLaunchConfig(projectDir);
  const configAgents = readConfig(absRoot)?.agents;
  const completeMailboxes: string[] = [];
  for (const r of [root, ...sessionRoots(absRoot).map(([s]) => `${root}/${s}`)]) {
    for (const handle of listDir(join(resolve(projectDir, r), 'agents'))) {
      try {
        if (missingLeaves(mailbox(resolve(projectDir, r), handle)).length === 0)
          completeMailboxes.push(`${r}/agents/${handle}`);
      } catch {
        // not a handle: not a mailbox
      }
    }
  }
  const inGit = gitTop(projectDir) === projectDir;
  const gitignore = readOptional(join(projectDir, '.gitignore')) ?? '';
  return {
    projectDir,
    inGit,
    ...(amqrc ? { amqrc } : {}),
    ...(launch ? { launch } : {}),
    ...(launchText !== undefined ? { launchText } : {}),
    ...(localLaunch ? { localLaunch } : {}),
    ...(localLaunchText !== undefined ? { localLaunchText } : {}),
    ...(configAgents ? { configAgents } : {}),
    completeMailboxes: completeMailboxes.sort(),
    gitignoreLines: gitignore.split('\n').map((l) => l.trim()),
  };
}

/**
 * Writes exactly the plan: mailboxes and the root first, `.amqrc` last, so the file that points
 * tools at the root only appears once the root is whole. Each file is written atomically.
 */
export function applySetup(plan: SetupPlan): void {
  const at = (p: string) => resolve(plan.project_dir, p);
  const absRoot = at(plan.root);
  for (const dir of ['agents', 'threads', 'meta'])
    mkdirSync(join(absRoot, dir), { recursive: true, mode: 0o700 });
  createSession(absRoot, plan.default_session, []);
  for (const box of plan.mailboxes) {
    const dir = at(box);
    ensureMailbox(mailbox(dirname(dirname(dir)), basename(dir)), true);
  }
  const byPath = new Map(plan.files.map((f) => [f.path, f]));
  const config = byPath.get(`${plan.root}/meta/config.json`);
  if (config && config.action !== 'keep') {
    const created = readConfig(absRoot)?.created_utc || rfc3339();
    const body = { version: 1, created_utc: created, agents: plan.config_agents };
    writeFileAtomic(join(absRoot, 'meta'), 'config.json', Buffer.from(`${goJson(body)}\n`));
  }
  const ignore = byPath.get('.gitignore');
  if (ignore?.content) {
    const file = at('.gitignore');
    const have = readOptional(file) ?? '';
    appendFileSync(file, `${have && !have.endsWith('\n') ? '\n' : ''}${ignore.content}`);
  }
  // committed project files are readable like any other (AMQ refuses only group/world-writable);
  // this machine's preferences are its owner's alone, as AMQ writes them
  const modes: Array<[string, number]> = [
    [LAUNCH_FILE, 0o644],
    [LAUNCH_LOCAL_FILE, 0o600],
    ['.amqrc', 0o644],
  ];
  for (const [path, mode] of modes) {
    const file = byPath.get(path);
    if (!file?.content || file.action === 'keep') continue;
    const target = at(path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileAtomic(dirname(target), basename(target), Buffer.from(file.content));
    chmodSync(target, mode);
  }
}

function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}
