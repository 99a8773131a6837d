import type { Command } from 'commander';
import type { ProjectConfig } from '../../pipeline/config.js';
import type { RegistryLocation } from '../../registry/location.js';
import { action } from '../action.js';

interface RegistryFlags {
  registry?: string;
  json?: boolean;
}

const REGISTRY_FLAG = [
  '--registry <git url|path>',
  'the registry (default: `registry:` in .troupe/config.yaml or ~/.config/troupe/config.yaml)',
] as const;

/** `troupe search`, `troupe pull`, `troupe publish`: the pipeline registry (docs/registry.md). */
export function registerRegistry(program: Command): void {
  program
    .command('search')
    .description('find pipelines in the registry by name, description or tag')
    .argument('[query]', 'words that must all occur (default: list everything)')
    .option(...REGISTRY_FLAG)
    .option('--json', 'print JSON: {registry, pipelines: [{name, description, tags, latest, versions}]}')
    .action(
      action(async (query: string | undefined, flags: RegistryFlags) => {
        const { openRegistry } = await import('../../registry/checkout.js');
        const { matches, readCatalog } = await import('../../registry/catalog.js');
        const { locationText } = await import('../../registry/location.js');
        const { location } = await registryContext(flags.registry);
        const { printable } = await import('../../core/printable.js');
        const registry = await openRegistry(location);
        const skipped = (s: { what: string; reason: string }) =>
          process.stderr.write(`troupe: skipped ${printable(s.what)}: ${printable(s.reason)}\n`);
        const pipelines = readCatalog(registry.dir, skipped).filter((e) => matches(e, query));
        if (flags.json) {
          const { printJson } = await import('../options.js');
          printJson({ registry: locationText(location), pipelines });
        } else if (pipelines.length === 0) {
          process.stdout.write(`nothing${query ? ` matches "${query}"` : ''} in ${locationText(location)}\n`);
        } else {
          const width = Math.max(...pipelines.map((p) => p.name.length));
          for (const p of pipelines) {
            // names, descriptions and tags are the registry's: printed without their escapes
            const tags = p.tags.length ? `  [${p.tags.map(printable).join(', ')}]` : '';
            const line = `${printable(p.name).padEnd(width)}  ${p.latest}  ${printable(p.description)}${tags}`;
            process.stdout.write(`${line.trimEnd()}\n`);
          }
        }
        return 0;
      }),
    );
  program
    .command('pull')
    .description(
      'install a pipeline from the registry into .troupe/pipelines/, or (no name) what pipelines.lock says',
    )
    .argument('[name]', 'NAME, NAME@1.2.3, NAME@^1.2 or NAME@~1.2.3 (default: the latest)')
    .option(...REGISTRY_FLAG)
    .option('--force', 'overwrite an installed pipeline that has local changes')
    .option('--json', 'print JSON: [{name, version, registry, hash, status}]')
    .action(
      action(async (name: string | undefined, flags: RegistryFlags & { force?: boolean }) => {
        const { pullLocked, pullNamed } = await import('../../registry/pull.js');
        const { parsePipelineRef } = await import('../../registry/reference.js');
        const { UsageError } = await import('../../core/errors.js');
        const context = await registryContext(flags.registry);
        const options = {
          root: context.root,
          config: context.config,
          force: flags.force === true,
          ...confirmOnTerminal(),
        };
        let results: Awaited<ReturnType<typeof pullLocked>>;
        if (name === undefined) {
          if (flags.registry !== undefined) {
            throw new UsageError(
              '--registry goes with a NAME: pipelines.lock says where each locked pipeline is from',
            );
          }
          results = await pullLocked(options);
        } else {
          const ref = parsePipelineRef(name);
          results = [await pullNamed({ ...options, location: context.location, ref })];
        }
        if (flags.json) {
          const { printJson } = await import('../options.js');
          printJson(results);
        } else if (results.length === 0) {
          process.stdout.write('pipelines.lock is empty: nothing to install\n');
        } else {
          const { printable } = await import('../../core/printable.js');
          for (const r of results) {
            process.stdout.write(
              r.status === 'installed'
                ? `installed ${r.name}@${r.version} from ${printable(r.registry)} into .troupe/pipelines/${r.name}/\n`
                : `${r.name}@${r.version} is installed as locked\n`,
            );
          }
        }
        return 0;
      }),
    );
  program
    .command('publish')
    .description('validate a pipeline and add it to the registry as a new version')
    .argument('[name]', 'pipeline of this project (default: the default pipeline)')
    .option('--version <version>', 'the version to publish (default: the latest, patch bumped; 1.0.0 first)')
    .option('--bump <part>', 'bump the latest version: patch, minor or major')
    .option('--description <text>', 'one line for search (default: the previous version’s)')
    .option('--tags <list>', 'comma-separated tags for search (default: the previous version’s)')
    .option(...REGISTRY_FLAG)
    .option('--json', 'print JSON: {name, version, registry, hash, commit, branch?, url?}')
    .action(
      action(
        async (
          name: string | undefined,
          flags: RegistryFlags & { version?: string; bump?: string; description?: string; tags?: string },
        ) => {
          const { UsageError } = await import('../../core/errors.js');
          const { publishPipeline } = await import('../../registry/publish.js');
          if (flags.version !== undefined && flags.bump !== undefined) {
            throw new UsageError('give --version or --bump, not both');
          }
          if (flags.bump !== undefined && !['patch', 'minor', 'major'].includes(flags.bump)) {
            throw new UsageError(`--bump ${flags.bump}: expected patch, minor or major`);
          }
          const context = await registryContext(flags.registry);
          const result = await publishPipeline({
            root: context.root,
            config: context.config,
            location: context.location,
            ...(name !== undefined ? { name } : {}),
            ...(flags.version !== undefined ? { version: flags.version } : {}),
            ...(flags.bump !== undefined ? { bump: flags.bump as 'patch' | 'minor' | 'major' } : {}),
            ...(flags.description !== undefined ? { description: flags.description } : {}),
            ...(flags.tags !== undefined ? { tags: splitTags(flags.tags) } : {}),
          });
          if (flags.json) {
            const { printJson } = await import('../options.js');
            printJson(result);
          } else if (result.url) {
            process.stdout.write(
              `${result.name}@${result.version}: pushed ${result.branch}, opened ${result.url}\n`,
            );
          } else {
            process.stdout.write(
              `published ${result.name}@${result.version} to ${result.registry} (commit ${result.commit.slice(0, 7)})\n`,
            );
          }
          return 0;
        },
      ),
    );
}

/** `troupe pipeline versions NAME`: registered by pipeline.ts under its `pipeline` command. */
export function registerPipelineVersions(pipeline: Command): void {
  pipeline
    .command('versions')
    .description("a registry pipeline's versions, oldest first (by semver)")
    .argument('<name>', 'pipeline name in the registry')
    .option(...REGISTRY_FLAG)
    .option('--json', 'print JSON: {name, registry, versions, latest}')
    .action(
      action(async (name: string, flags: RegistryFlags) => {
        const { openRegistry } = await import('../../registry/checkout.js');
        const { versionFolders } = await import('../../registry/catalog.js');
        const { locationText } = await import('../../registry/location.js');
        const { assertPipelineName, resolveVersion } = await import('../../registry/reference.js');
        assertPipelineName(name);
        const { location } = await registryContext(flags.registry);
        const versions = versionFolders((await openRegistry(location)).dir, name).map((v) => v.version);
        const latest = resolveVersion(name, versions, null);
        if (flags.json) {
          const { printJson } = await import('../options.js');
          printJson({ name, registry: locationText(location), versions, latest });
        } else {
          for (const v of versions) process.stdout.write(`${v}${v === latest ? '  (latest)' : ''}\n`);
        }
        return 0;
      }),
    );
}

async function registryContext(
  flag: string | undefined,
): Promise<{ root: string; config: ProjectConfig; location: RegistryLocation }> {
  const { findProjectRoot } = await import('../../pipeline/discover.js');
  const { loadProjectConfig } = await import('../../pipeline/config.js');
  const { chooseRegistry } = await import('../../registry/location.js');
  const root = findProjectRoot(process.cwd());
  const config = loadProjectConfig(root);
  let location: RegistryLocation | undefined;
  return {
    root,
    config,
    // chosen on first use: `troupe pull` from the lock needs no registry of its own
    get location() {
      location ??= chooseRegistry({
        flag,
        cwd: process.cwd(),
        projectRoot: root,
        projectRegistry: config.registry,
      });
      return location;
    },
  };
}

/** On a terminal, ask before overwriting local changes; elsewhere refuse (the caller says to use --force). */
function confirmOnTerminal(): { confirm?: (question: string) => Promise<boolean> } {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return {};
  return {
    confirm: async (question) => {
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      try {
        return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
      } finally {
        rl.close();
      }
    },
  };
}

function splitTags(list: string): string[] {
  return list
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}
