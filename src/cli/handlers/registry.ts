import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { UsageError } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import { loadProjectConfig, type ProjectConfig } from '../../pipeline/config.js';
import { findProjectRoot } from '../../pipeline/discover.js';
import { matches, readCatalog, versionFolders } from '../../registry/catalog.js';
import { openRegistry } from '../../registry/checkout.js';
import { initRegistry } from '../../registry/init.js';
import {
  chooseRegistry,
  githubRepoUrl,
  locationText,
  type RegistryLocation,
} from '../../registry/location.js';
import { publishPipeline } from '../../registry/publish.js';
import { pullLocked, pullNamed } from '../../registry/pull.js';
import { assertPipelineName, parsePipelineRef, resolveVersion } from '../../registry/reference.js';
import { type CommandIo, writeJson } from '../command-io.js';

/** The pipeline registry's commands (docs/registry.md): search, pull, publish, pipeline versions. */

export interface RegistryFlags {
  registry?: string;
  /** aqm's form: a GitHub repository, owner/name. */
  repo?: string;
  json?: boolean;
}

/** `--registry`, or aqm's `--repo owner/name` (not both). */
function registryFlag(flags: RegistryFlags): string | undefined {
  if (flags.repo === undefined) return flags.registry;
  if (flags.registry !== undefined)
    throw new UsageError('--repo and --registry name the same thing: give one');
  return githubRepoUrl(flags.repo);
}

/** The reading commands also take aqm's `--offline`: the registry as last fetched here. */
export interface ReadFlags extends RegistryFlags {
  offline?: boolean;
}

export interface PublishFlags extends RegistryFlags {
  /** The name in the registry (aqm's form). */
  name?: string;
  version?: string;
  bump?: string;
  description?: string;
  tags?: string;
}

/** `troupe search [query]`: each pipeline with its versions (`troupe pipeline versions` lists them all). */
export async function searchRegistry(
  query: string | undefined,
  flags: ReadFlags,
  io: CommandIo,
): Promise<number> {
  const { location } = registryContext(registryFlag(flags), io.cwd);
  const registry = await openRegistry(location, { offline: flags.offline === true });
  const skipped = (s: { what: string; reason: string }) =>
    io.err(`troupe: skipped ${printable(s.what)}: ${printable(s.reason)}\n`);
  const pipelines = readCatalog(registry.dir, skipped).filter((e) => matches(e, query));
  if (flags.json) {
    writeJson(io, { registry: locationText(location), pipelines });
  } else if (pipelines.length === 0) {
    io.out(`nothing${query ? ` matches "${query}"` : ''} in ${locationText(location)}\n`);
  } else {
    const rows = pipelines.map((p) => ({ ...p, shown: shownVersions(p.versions) }));
    const nameWidth = Math.max(...rows.map((p) => p.name.length));
    const versionsWidth = Math.max(...rows.map((p) => p.shown.length));
    for (const p of rows) {
      // names, descriptions and tags are the registry's: printed without their escapes
      const tags = p.tags.length ? `  [${p.tags.map(printable).join(', ')}]` : '';
      const line = `${printable(p.name).padEnd(nameWidth)}  ${p.shown.padEnd(versionsWidth)}  ${printable(p.description)}${tags}`;
      io.out(`${line.trimEnd()}\n`);
    }
  }
  return 0;
}

/** `troupe pull [name]`: one pipeline from the registry, or (no name) what pipelines.lock says. */
export async function pullFromRegistry(
  name: string | undefined,
  flags: ReadFlags & { force?: boolean },
  io: CommandIo,
): Promise<number> {
  const context = registryContext(registryFlag(flags), io.cwd);
  const options = {
    root: context.root,
    config: context.config,
    force: flags.force === true,
    offline: flags.offline === true,
    ...confirmOnTerminal(),
  };
  let results: Awaited<ReturnType<typeof pullLocked>>;
  if (name === undefined) {
    if (flags.registry !== undefined || flags.repo !== undefined) {
      throw new UsageError(
        '--registry (or --repo) goes with a NAME: pipelines.lock says where each locked pipeline is from',
      );
    }
    results = await pullLocked(options);
  } else {
    const ref = parsePipelineRef(name);
    results = [await pullNamed({ ...options, location: context.location, ref })];
  }
  if (flags.json) {
    writeJson(io, results);
  } else if (results.length === 0) {
    io.out('pipelines.lock is empty: nothing to install\n');
  } else {
    for (const r of results) {
      io.out(
        r.status === 'installed'
          ? `installed ${r.name}@${r.version} from ${printable(r.registry)} into .troupe/pipelines/${r.name}/\n`
          : `${r.name}@${r.version} is installed as locked\n`,
      );
    }
  }
  return 0;
}

/** `troupe publish [name] [--name X]`: validate a pipeline and add it to the registry as a new version. */
export async function publishToRegistry(
  name: string | undefined,
  flags: PublishFlags,
  io: CommandIo,
): Promise<number> {
  if (flags.version !== undefined && flags.bump !== undefined) {
    throw new UsageError('give --version or --bump, not both');
  }
  if (flags.bump !== undefined && !['patch', 'minor', 'major'].includes(flags.bump)) {
    throw new UsageError(`--bump ${flags.bump}: expected patch, minor or major`);
  }
  const context = registryContext(registryFlag(flags), io.cwd);
  const result = await publishPipeline({
    root: context.root,
    config: context.config,
    location: context.location,
    ...(name !== undefined ? { name } : {}),
    ...(flags.name !== undefined ? { as: flags.name } : {}),
    ...(flags.version !== undefined ? { version: flags.version } : {}),
    ...(flags.bump !== undefined ? { bump: flags.bump as 'patch' | 'minor' | 'major' } : {}),
    ...(flags.description !== undefined ? { description: flags.description } : {}),
    ...(flags.tags !== undefined ? { tags: splitTags(flags.tags) } : {}),
  });
  if (flags.json) {
    writeJson(io, result);
  } else if (result.url) {
    io.out(`${result.name}@${result.version}: pushed ${result.branch}, opened ${result.url}\n`);
  } else {
    const from = result.pipeline === result.name ? '' : ` (pipeline ${result.pipeline})`;
    io.out(
      `published ${result.name}@${result.version}${from} to ${result.registry} (commit ${result.commit.slice(0, 7)})\n`,
    );
  }
  return 0;
}

/** `troupe pipeline versions <name>`: a registry pipeline's versions, oldest first. */
export async function pipelineVersions(name: string, flags: ReadFlags, io: CommandIo): Promise<number> {
  assertPipelineName(name);
  const { location } = registryContext(registryFlag(flags), io.cwd);
  const registry = await openRegistry(location, { offline: flags.offline === true });
  const versions = versionFolders(registry.dir, name).map((v) => v.version);
  const latest = resolveVersion(name, versions, null);
  if (flags.json) {
    writeJson(io, { name, registry: locationText(location), versions, latest });
  } else {
    for (const v of versions) io.out(`${v}${v === latest ? '  (latest)' : ''}\n`);
  }
  return 0;
}

/** `troupe registry init [dir]`: a new team registry (a git repository with troupe's layout). */
export async function initRegistryFolder(
  dir: string | undefined,
  flags: { json?: boolean },
  io: CommandIo,
): Promise<number> {
  const target = path.resolve(io.cwd, dir ?? '.');
  const made = await initRegistry(target);
  if (flags.json) {
    writeJson(io, made);
  } else {
    io.out(
      [
        `started a pipeline registry in ${target} (commit ${made.commit.slice(0, 7)})`,
        `  publish to it:   troupe publish NAME --registry ${target}`,
        '  share it:        push it to a git server, then set `registry: <its git url>` in .troupe/config.yaml',
        '',
      ].join('\n'),
    );
  }
  return 0;
}

function registryContext(
  flag: string | undefined,
  cwd: string,
): { root: string; config: ProjectConfig; location: RegistryLocation } {
  const root = findProjectRoot(cwd);
  const config = loadProjectConfig(root);
  let location: RegistryLocation | undefined;
  return {
    root,
    config,
    // chosen on first use: `troupe pull` from the lock needs no registry of its own
    get location() {
      location ??= chooseRegistry({ flag, cwd, projectRoot: root, projectRegistry: config.registry });
      return location;
    },
  };
}

/** On a terminal, ask before overwriting local changes; elsewhere refuse (the caller says to use --force). */
function confirmOnTerminal(): { confirm?: (question: string) => Promise<boolean> } {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return {};
  return {
    confirm: async (question) => {
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      try {
        return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
      } finally {
        rl.close();
      }
    },
  };
}

/** The versions search shows, as aqm's search does: the newest few, ascending, so the latest is last. */
const SHOWN_VERSIONS = 5;

function shownVersions(versions: readonly string[]): string {
  const older = versions.length - SHOWN_VERSIONS;
  const listed = versions.slice(-SHOWN_VERSIONS).join(', ');
  return older > 0 ? `${listed} (+${older} older)` : listed;
}

function splitTags(list: string): string[] {
  return list
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}
