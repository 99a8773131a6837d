import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RegistryError } from './errors.js';
import { locationText, type RegistryLocation } from './location.js';
import { registryGit, registryGitOk, registryGitOkRetryingLock } from './registry-git.js';

export interface RegistryCheckout {
  location: RegistryLocation;
  /** A checkout of the registry's default branch, as it is now. */
  dir: string;
  /** null for a registry without commits yet. */
  commit: string | null;
}

/**
 * The registry's files, from a cached clone (`$XDG_CACHE_HOME/troupe/registries/<hash>`, by
 * default under `~/.cache`) fetched on every use: what the registry's HEAD branch holds now,
 * committed (a local checkout's uncommitted files are not part of it). Git runs with the
 * user's own credentials and config; it is never asked to prompt. `offline`: the copy fetched
 * last, without the network.
 */
export async function openRegistry(
  location: RegistryLocation,
  options: { offline?: boolean } = {},
): Promise<RegistryCheckout> {
  if (options.offline) return cachedRegistry(location);
  const source = locationText(location);
  if (location.kind === 'path' && !existsSync(location.path)) {
    if (location.builtIn) throw unreachable(location, 'read', 'it does not exist');
    throw new RegistryError(`registry ${source} does not exist`, {
      hint: 'give a git repository or a git URL',
    });
  }
  const dir = cacheDir(source);
  if (!existsSync(dir)) await createCache(dir, source);
  const fetched = await registryGit(dir, ['fetch', '--quiet', '--no-tags', 'origin', 'HEAD']);
  if (fetched.code !== 0) {
    const listed = await registryGit(dir, ['ls-remote', 'origin']);
    if (listed.code === 0 && listed.stdout.trim() === '') return { location, dir, commit: null };
    throw unreachable(location, 'fetch', fetched.stderr);
  }
  // two troupe processes may share the cache: the checkout's index lock is waited for
  await registryGitOkRetryingLock(dir, ['checkout', '--quiet', '--force', '--detach', 'FETCH_HEAD']);
  await registryGitOk(dir, ['clean', '-ffdxq']);
  const commit = (await registryGitOk(dir, ['rev-parse', 'HEAD'])).trim();
  return { location, dir, commit };
}

/**
 * `--offline` (aqm's flag): the registry as it was last fetched on this machine, without the
 * network; its files put back as fetched, in case anything touched them since.
 */
async function cachedRegistry(location: RegistryLocation): Promise<RegistryCheckout> {
  const dir = cacheDir(locationText(location));
  const head = existsSync(dir) ? await registryGit(dir, ['rev-parse', '--verify', '--quiet', 'HEAD']) : null;
  if (head?.code !== 0) {
    throw new RegistryError(
      `no copy of registry ${locationText(location)} on this machine yet: run the command once without --offline`,
    );
  }
  await registryGitOkRetryingLock(dir, ['checkout', '--quiet', '--force', '--detach', 'HEAD']);
  await registryGitOk(dir, ['clean', '-ffdxq']);
  return { location, dir, commit: head.stdout.trim() };
}

function cacheDir(source: string): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const key = createHash('sha256').update(source).digest('hex').slice(0, 16);
  return path.join(base, 'troupe', 'registries', key);
}

/** An empty repository with the registry as `origin`, put in place whole (another process may race). */
async function createCache(dir: string, source: string): Promise<void> {
  mkdirSync(path.dirname(dir), { recursive: true });
  const temp = `${dir}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    await registryGitOk(path.dirname(dir), ['init', '--quiet', temp]);
    await registryGitOk(temp, ['remote', 'add', 'origin', source]);
    renameSync(temp, dir);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
}

/**
 * Git could not reach a registry. The default one (nothing configured, perhaps offline) gets
 * one line that says how to choose another; a registry the user named gets the usual hint.
 */
export function unreachable(location: RegistryLocation, verb: string, stderr: string): RegistryError {
  const source = locationText(location);
  if (location.builtIn) {
    return new RegistryError(
      `cannot reach the default registry ${source} (${gitReason(stderr) || 'offline?'}): pass --registry <git url|path>, or set \`registry:\` in .troupe/config.yaml`,
    );
  }
  return new RegistryError(`cannot ${verb} registry ${source}: ${gitReason(stderr)}`, {
    hint: 'check the URL and that `git ls-remote <url>` works with your credentials',
  });
}

export function gitReason(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .at(-1)
      ?.replace(/^fatal: /, '') ?? ''
  );
}
