import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PipelineError } from '../core/errors.js';
import type { ProjectConfig } from '../pipeline/config.js';
import { type ContentHash, changedFiles, hashFiles, hashFolder } from './content-hash.js';
import { type Lock, writeLock } from './lock.js';
import { assertPipelineName } from './reference.js';
import { checkPipeline } from './validate-folder.js';

/** A version folder of a registry checkout, to install as `.troupe/pipelines/<name>/`. */
export interface Installable {
  name: string;
  version: string;
  /** As recorded in the lock (locationText). */
  registry: string;
  /** The folder in the checkout, and its path inside the registry (for messages). */
  dir: string;
  rel: string;
  files: string[];
}

export interface StagedInstall extends Installable {
  staging: string;
  target: string;
  hash: ContentHash;
}

export function pipelinesDir(root: string): string {
  return path.join(root, '.troupe', 'pipelines');
}

/** The name is checked here too, whatever it came from: it becomes a path. */
export function installedDir(root: string, name: string): string {
  assertPipelineName(name);
  return path.join(pipelinesDir(root), name);
}

/** What is installed under a name, against what the lock recorded for it. */
export type InstalledState =
  | { kind: 'absent' }
  | { kind: 'clean' }
  /** Differs from the lock, or was never recorded in it (`changed` is then every file). */
  | { kind: 'changed'; files: string[]; locked: boolean };

export function installedState(root: string, name: string, locked: Lock[string] | undefined): InstalledState {
  const dir = installedDir(root, name);
  if (!existsSync(dir)) return { kind: 'absent' };
  const actual = hashFolder(dir);
  if (!locked) return { kind: 'changed', files: Object.keys(actual.files), locked: false };
  const files = changedFiles(locked.files, actual.files);
  return files.length === 0 ? { kind: 'clean' } : { kind: 'changed', files, locked: true };
}

/**
 * Copies the folder beside its target (`.troupe/pipelines/.staging-…`, the same file system, so
 * the install is one rename) and validates the copy there, imports included. An invalid
 * pipeline is removed again and thrown as its first error, nothing installed.
 */
export function stageInstall(root: string, config: ProjectConfig, item: Installable): StagedInstall {
  const target = installedDir(root, item.name);
  const base = pipelinesDir(root);
  mkdirSync(base, { recursive: true });
  const staging = path.join(base, `.staging-${item.name}-${randomBytes(4).toString('hex')}`);
  try {
    for (const rel of item.files) {
      const to = path.join(staging, rel);
      mkdirSync(path.dirname(to), { recursive: true });
      copyFileSync(path.join(item.dir, rel), to);
    }
    const { errors } = checkPipeline(path.join(staging, 'agents.yaml'), staging, item.name, config);
    const first = errors[0];
    if (first) {
      const where = `${item.rel}/${path.relative(staging, first.file).split(path.sep).join('/')}`;
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      throw new PipelineError(
        where,
        first.line,
        first.col,
        `${first.message}${more}`,
        `${item.name}@${item.version} of ${item.registry} is not a valid pipeline, so nothing was installed`,
      );
    }
    return { ...item, staging, target, hash: hashFiles(staging, item.files) };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

export function discardStaged(staged: readonly StagedInstall[]): void {
  for (const s of staged) rmSync(s.staging, { recursive: true, force: true });
}

/**
 * Puts each staged folder in place of its target (the old one renamed aside first and removed
 * after, or put back if the swap fails), then writes the lock: a failure leaves each pipeline
 * either as it was or as pulled, never half of each.
 */
export function commitInstalls(root: string, staged: readonly StagedInstall[], lock: Lock): void {
  try {
    for (const s of staged) {
      const aside = existsSync(s.target)
        ? path.join(pipelinesDir(root), `.old-${s.name}-${randomBytes(4).toString('hex')}`)
        : null;
      if (aside) renameSync(s.target, aside);
      try {
        renameSync(s.staging, s.target);
      } catch (error) {
        if (aside) renameSync(aside, s.target);
        throw error;
      }
      if (aside) rmSync(aside, { recursive: true, force: true });
    }
  } finally {
    discardStaged(staged);
  }
  for (const s of staged) {
    lock[s.name] = { version: s.version, registry: s.registry, hash: s.hash.hash, files: s.hash.files };
  }
  writeLock(root, lock);
}
