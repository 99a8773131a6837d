import { existsSync, lstatSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { execa } from 'execa';
import { TroupeError } from '../core/errors.js';

/**
 * What a scripted reply does to the agent's working directory before it is returned, so pipelines
 * that change code can be tested offline: `write:` files (null deletes), then `run:` one command
 * (an argv array, no shell). Every path stays inside `cwd`: absolute paths, `..`, symlinks that
 * lead out and `.git` are refused before anything is written.
 */
export interface ScriptedEffects {
  write?: Record<string, string | null>;
  run?: string[];
}

export interface ScriptedEffectsResult {
  written: string[];
  deleted: string[];
  ran: { argv: string[]; exitCode: number; stdout: string; stderr: string } | null;
}

/** A `write:` path that would leave the working directory, or a `run:` that cannot be used. */
export class ScriptedEffectError extends TroupeError {
  readonly code = 'scripted_effect_invalid';
}

export interface ApplyOptions {
  signal?: AbortSignal;
  /** For `run:`; default 60 s. */
  timeoutMs?: number;
}

export async function applyScriptedEffects(
  cwd: string,
  effects: ScriptedEffects,
  options: ApplyOptions = {},
): Promise<ScriptedEffectsResult> {
  const root = realpathSync(cwd);
  const entries = Object.entries(effects.write ?? {});
  // check every path first: a bad one means nothing is written
  const targets = entries.map(([path, content]) => ({ path, content, target: insideRoot(root, path) }));
  const result: ScriptedEffectsResult = { written: [], deleted: [], ran: null };
  for (const { path, content, target } of targets) {
    if (content !== null && isSymlink(target)) {
      // writing would follow it, wherever it points
      throw new ScriptedEffectError(
        `write: ${JSON.stringify(path)} is a symlink; troupe will not write through it`,
      );
    }
    if (content === null) {
      rmSync(target, { recursive: true, force: true });
      result.deleted.push(path);
    } else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
      result.written.push(path);
    }
  }
  if (effects.run) {
    const [file, ...args] = effects.run;
    if (!file) throw new ScriptedEffectError('run: needs a command (an argv list such as [npm, test])');
    const ran = await execa(file, args, {
      cwd: root,
      reject: false,
      stdin: 'ignore',
      stripFinalNewline: false,
      timeout: options.timeoutMs ?? 60_000,
      ...(options.signal ? { cancelSignal: options.signal } : {}),
    });
    result.ran = {
      argv: effects.run,
      exitCode: ran.exitCode ?? -1,
      stdout: String(ran.stdout ?? ''),
      stderr: String(ran.stderr ?? ran.message ?? ''),
    };
  }
  return result;
}

function insideRoot(root: string, path: string): string {
  const refuse = (why: string) =>
    new ScriptedEffectError(`write: ${JSON.stringify(path)} ${why}; paths must stay inside ${root}`);
  if (path === '' || isAbsolute(path) || path.includes('\0')) throw refuse('is not a relative path');
  const target = resolve(root, path);
  const rel = relative(root, target);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw refuse('leaves the directory');
  if (rel.split(sep)[0] === '.git') throw refuse('is inside .git');
  // the deepest part that exists decides where the write really lands (symlinks included)
  let existing = target;
  while (!existsSync(existing)) existing = dirname(existing);
  const real = realpathSync(existing);
  const realRel = relative(root, real);
  if (realRel === '..' || realRel.startsWith(`..${sep}`) || isAbsolute(realRel))
    throw refuse('leads out through a symlink');
  return target;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
