import { existsSync } from 'node:fs';
import path from 'node:path';
import { NotFoundError, StateError } from '../core/errors.js';
import type { ProjectConfig } from '../pipeline/config.js';
import { readIndex, versionFiles, versionFolders } from './catalog.js';
import { openRegistry, type RegistryCheckout } from './checkout.js';
import { changedFiles, hashFiles } from './content-hash.js';
import { IntegrityError } from './errors.js';
import {
  commitInstalls,
  discardStaged,
  type Installable,
  installedState,
  pipelinesDir,
  type StagedInstall,
  stageInstall,
} from './install.js';
import { locationText, parseLocation, type RegistryLocation } from './location.js';
import { type LockEntry, lockFile, readLock } from './lock.js';
import { type PipelineRef, resolveVersion } from './reference.js';

export interface PullOptions {
  root: string;
  config: ProjectConfig;
  /** Overwrite installed pipelines with local changes. */
  force: boolean;
  /** Read the registries as last fetched on this machine, without the network (`--offline`). */
  offline?: boolean;
  /** Asked before overwriting local changes when there is no --force (a terminal); none: refuse. */
  confirm?: (question: string) => Promise<boolean>;
}

export interface PullResult {
  name: string;
  version: string;
  registry: string;
  hash: string;
  /** installed: written now; unchanged: already there as the lock says. */
  status: 'installed' | 'unchanged';
}

/** `troupe pull NAME[@range]`: the highest version satisfying the range, validated, then installed and locked. */
export async function pullNamed(
  options: PullOptions & { location: RegistryLocation; ref: PipelineRef },
): Promise<PullResult> {
  const { root, ref } = options;
  const registry = await openRegistry(options.location, { offline: options.offline === true });
  const versions = versionFolders(registry.dir, ref.name);
  const version = resolveVersion(
    ref.name,
    versions.map((v) => v.version),
    ref.range,
  );
  const item = installable(registry, ref.name, version);
  const upstream = hashFiles(item.dir, item.files);
  const listed = readIndex(registry.dir).find((e) => e.name === ref.name)?.hashes?.[version];
  if (listed && listed !== upstream.hash) {
    throw new IntegrityError(
      `${item.rel} in ${item.registry} does not match the hash index.json records for ${ref.name}@${version}`,
      { hint: 'its files changed after it was published; nothing was installed' },
    );
  }
  const lock = readLock(root) ?? {};
  const locked = lock[ref.name];
  for (const ext of ['yaml', 'yml']) {
    const file = path.join(pipelinesDir(root), `${ref.name}.${ext}`);
    if (existsSync(file)) {
      throw new StateError(`a pipeline named ${ref.name} already exists: ${path.relative(root, file)}`, {
        hint: 'rename or remove it first; troupe pull installs into .troupe/pipelines/<name>/',
      });
    }
  }
  const state = installedState(root, ref.name, locked);
  const same = locked?.version === version && locked.registry === item.registry;
  if (locked && same && locked.hash !== upstream.hash) throw changedUpstream(item, locked, upstream.files);
  if (state.kind === 'clean' && same && locked?.hash === upstream.hash) {
    return { name: ref.name, version, registry: item.registry, hash: upstream.hash, status: 'unchanged' };
  }
  if (state.kind === 'changed' && !options.force) {
    const what = state.locked
      ? `has local changes (${state.files.join(', ')})`
      : 'was not installed by troupe pull (it is not in pipelines.lock)';
    const question = `.troupe/pipelines/${ref.name}/ ${what}; overwrite it with ${ref.name}@${version}?`;
    if (!(options.confirm && (await options.confirm(question)))) {
      throw new IntegrityError(`.troupe/pipelines/${ref.name}/ ${what}; nothing was written`, {
        hint: `troupe pull ${ref.name}@${version} --force overwrites it`,
      });
    }
  }
  const staged = stageInstall(root, options.config, item);
  commitInstalls(root, [staged], lock);
  return { name: ref.name, version, registry: item.registry, hash: staged.hash.hash, status: 'installed' };
}

/**
 * `troupe pull` with no name: every pipeline of the lock, exactly as locked. One that is
 * installed and unchanged stays (no registry is asked); one that is missing is fetched and must
 * match its locked hash file for file; one changed locally is refused, or with --force restored.
 * Everything is checked and staged before anything is written.
 */
export async function pullLocked(options: PullOptions): Promise<PullResult[]> {
  const { root } = options;
  const lock = readLock(root);
  if (!lock) {
    throw new NotFoundError(`no ${path.relative(root, lockFile(root))} here`, {
      hint: 'troupe pull NAME installs a pipeline and writes the lock',
    });
  }
  const registries = new Map<string, Promise<RegistryCheckout>>();
  const open = (text: string) => {
    if (!registries.has(text))
      registries.set(text, openRegistry(parseLocation(text, root), { offline: options.offline === true }));
    return registries.get(text)!;
  };
  const results: PullResult[] = [];
  const staged: StagedInstall[] = [];
  try {
    for (const name of Object.keys(lock).sort()) {
      const entry = lock[name]!;
      const result = { name, version: entry.version, registry: entry.registry, hash: entry.hash };
      const state = installedState(root, name, entry);
      if (state.kind === 'clean') {
        results.push({ ...result, status: 'unchanged' });
        continue;
      }
      if (state.kind === 'changed' && !options.force) {
        throw new IntegrityError(
          `.troupe/pipelines/${name}/${state.files[0]} does not match pipelines.lock (${name}@${entry.version}); nothing was written`,
          { hint: 'it was edited after it was installed; `troupe pull --force` restores the locked files' },
        );
      }
      const item = installable(await open(entry.registry), name, entry.version);
      const upstream = hashFiles(item.dir, item.files);
      if (upstream.hash !== entry.hash) throw changedUpstream(item, entry, upstream.files);
      staged.push(stageInstall(root, options.config, item));
      results.push({ ...result, status: 'installed' });
    }
  } catch (error) {
    discardStaged(staged);
    throw error;
  }
  if (staged.length > 0) commitInstalls(root, staged, lock);
  return results;
}

function installable(registry: RegistryCheckout, name: string, version: string): Installable {
  const text = locationText(registry.location);
  const folder = versionFolders(registry.dir, name).find((v) => v.version === version);
  if (!folder) throw new NotFoundError(`registry ${text} has no ${name}@${version}`);
  return {
    name,
    version,
    registry: text,
    dir: path.join(registry.dir, folder.rel),
    rel: folder.rel,
    files: versionFiles(registry.dir, folder),
  };
}

function changedUpstream(
  item: Installable,
  locked: LockEntry,
  actual: Record<string, string>,
): IntegrityError {
  const files = changedFiles(locked.files, actual);
  return new IntegrityError(
    `${item.rel}/${files[0]} in ${item.registry} changed after ${item.name}@${item.version} was locked; nothing was written`,
    {
      hint: `a published version must not change: ask the registry's owner, or remove ${item.name} from pipelines.lock to accept it`,
    },
  );
}
