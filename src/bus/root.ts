import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { messageOf, NotFoundError } from '../core/errors.js';
import { type Amqrc, loadAmqrc } from './amqrc.js';
import { ContextMismatchError } from './errors.js';
import { identityChanged } from './shell-context.js';

export const DEFAULT_DIR = '.agent-mail';

export type RootSource = 'flag' | 'env' | 'amqrc' | 'global' | 'detected' | 'home_amqrc';

export interface ResolvedRoot {
  root: string;
  source: RootSource;
  /** The base root: the root itself, or its parent when the root is a session. */
  baseRoot: string;
  session?: string;
  /** The project `.amqrc` in effect (for project name and peers), if any. */
  amqrc?: Amqrc;
  warnings: string[];
}

export interface RootInput {
  root?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** The top of the Git worktree holding `dir` (a `.git` dir or file), if any. */
export function gitTop(dir: string): string | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return undefined;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A relative root is tried against cwd, then each parent (AMQ's findRootInParents). */
function absoluteRoot(path: string, cwd: string): string {
  if (isAbsolute(path)) return path;
  for (let d = cwd; ; d = dirname(d)) {
    if (isDir(join(d, path))) return resolve(d, path);
    if (dirname(d) === d) return resolve(cwd, path);
  }
}

/** Directories from `from` up to and including `stop`, or up to but excluding `before`. */
function upward(from: string, limit: { stop?: string; before?: string }): string[] {
  const out: string[] = [];
  for (let d = resolve(from); ; d = dirname(d)) {
    if (limit.before !== undefined && d === resolve(limit.before)) break;
    out.push(d);
    if (limit.stop !== undefined && d === resolve(limit.stop)) break;
    if (dirname(d) === d) break;
  }
  return out;
}

/**
 * AMQ's root precedence: `--root`, `AM_ROOT`, the project `.amqrc` (up to the Git top, or below
 * $HOME outside Git), `AMQ_GLOBAL_ROOT`, then inside Git a repo-local `.agent-mail`, outside Git
 * `~/.amqrc` then a detected `.agent-mail`. Inside Git with nothing eligible: exit 5.
 */
export function resolveRoot(input: RootInput = {}): ResolvedRoot {
  const cwd = resolve(input.cwd ?? process.cwd());
  const env = input.env ?? process.env;
  const home = input.home ?? env.HOME ?? homedir();
  const top = gitTop(cwd);
  const warnings: string[] = [];
  const explicit = input.root ?? env.AM_ROOT;

  let amqrc: Amqrc | undefined;
  const rcFiles = upward(cwd, top ? { stop: top } : { before: home })
    .map((d) => join(d, '.amqrc'))
    .filter((f) => existsSync(f));
  if (rcFiles[0]) {
    try {
      amqrc = loadAmqrc(rcFiles[0], home);
    } catch (error) {
      if (!explicit) throw error;
      warnings.push(`ignoring ${messageOf(error)}`);
    }
  }

  const done = (root: string, source: RootSource, rc = amqrc): ResolvedRoot => ({
    ...classify(resolve(root), env, rc),
    source,
    ...(rc ? { amqrc: rc } : {}),
    warnings,
  });
  if (input.root) return done(absoluteRoot(input.root, cwd), 'flag');
  if (env.AM_ROOT) return done(absoluteRoot(env.AM_ROOT, cwd), 'env');
  if (amqrc) return done(amqrc.root, 'amqrc');
  if (env.AMQ_GLOBAL_ROOT) return done(absoluteRoot(env.AMQ_GLOBAL_ROOT, cwd), 'global');
  if (top) {
    for (const d of upward(cwd, { stop: top }))
      if (isDir(join(d, DEFAULT_DIR))) return done(join(d, DEFAULT_DIR), 'detected');
    throw new ContextMismatchError(`no eligible root inside the Git worktree ${top}`, {
      hint: `run \`troupe bus init --root ${DEFAULT_DIR} --agents ...\` there, or pass --root / set AM_ROOT`,
    });
  }
  const homeRc = join(home, '.amqrc');
  if (existsSync(homeRc)) {
    const rc = loadAmqrc(homeRc, home);
    return done(rc.root, 'home_amqrc', rc);
  }
  for (const d of upward(cwd, {}))
    if (isDir(join(d, DEFAULT_DIR))) return done(join(d, DEFAULT_DIR), 'detected');
  throw new NotFoundError('no message bus root found', {
    hint: 'pass --root, set AM_ROOT, or run `troupe bus init --root .agent-mail --agents ...`',
  });
}

/**
 * The bus a project's commands find from its directory (AM_ROOT, `.amqrc`, a repo-local
 * `.agent-mail`), else `<project>/.agent-mail` (made on first use by whoever writes).
 */
export function projectBusRoot(projectDir: string): ResolvedRoot {
  try {
    return resolveRoot({ cwd: projectDir });
  } catch {
    const root = join(resolve(projectDir), DEFAULT_DIR);
    return { root, baseRoot: root, source: 'detected', warnings: [] };
  }
}

/** A root is a session when its parent is `.agent-mail`, AM_BASE_ROOT, or the `.amqrc` root. */
function classify(
  root: string,
  env: NodeJS.ProcessEnv,
  rc?: Amqrc,
): Pick<ResolvedRoot, 'root' | 'baseRoot' | 'session'> {
  const parent = dirname(root);
  const isSession =
    basename(parent) === DEFAULT_DIR ||
    (env.AM_BASE_ROOT !== undefined && env.AM_BASE_ROOT !== '' && resolve(env.AM_BASE_ROOT) === parent) ||
    (rc !== undefined && resolve(rc.root) === parent);
  return isSession ? { root, baseRoot: parent, session: basename(root) } : { root, baseRoot: root };
}

/**
 * A shell pinned to a session (AM_ROOT with AM_BASE_ROOT or AM_SESSION) may not consume or
 * mutate another root picked with `--root`; `list` only warns.
 */
export function pinMismatch(
  resolved: ResolvedRoot,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!env.AM_ROOT || (env.AM_BASE_ROOT === undefined && env.AM_SESSION === undefined)) return undefined;
  if (resolve(env.AM_ROOT) === resolved.root) {
    if (!identityChanged(resolved.root, env.AM_ROOT_ID)) return undefined;
    return `this shell was pinned to ${env.AM_ROOT}, which is not the same directory any more (AM_ROOT_ID differs): pin it again with \`bus env\``;
  }
  return `this shell is pinned to ${env.AM_ROOT}${env.AM_SESSION ? ` (session ${env.AM_SESSION})` : ''}, not ${resolved.root}`;
}
