import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { PublishFlags, ReadFlags } from '../handlers/registry.js';

const OFFLINE_FLAG = [
  '--offline',
  "the registry as last fetched on this machine, without the network (aqm's --offline)",
] as const;

const REPO_FLAG = ['--repo <owner/name>', "aqm's form: the registry is this GitHub repository"] as const;

const REGISTRY_FLAG = [
  '--registry <git url|path>',
  "the registry (default: `registry:` in .troupe/config.yaml or ~/.config/troupe/config.yaml, else aqm's community registry)",
] as const;

/** `troupe search`, `troupe pull`, `troupe publish`, `troupe registry init`: the pipeline registry (docs/registry.md). */
export function registerRegistry(program: Command): void {
  program
    .command('search')
    .description('find pipelines in the registry by name, description or tag')
    .argument('[query]', 'words that must all occur (default: list everything)')
    .option(...REGISTRY_FLAG)
    .option(...REPO_FLAG)
    .option(...OFFLINE_FLAG)
    .option('--json', 'print JSON: {registry, pipelines: [{name, description, tags, latest, versions}]}')
    .action(
      action(async (query: string | undefined, flags: ReadFlags) => {
        const { searchRegistry } = await import('../handlers/registry.js');
        return searchRegistry(query, flags, processIo());
      }),
    );
  program
    .command('pull')
    .description(
      'install a pipeline from the registry into .troupe/pipelines/, or (no name) what pipelines.lock says',
    )
    .argument('[name]', 'NAME, NAME@1.2.3, NAME@^1.2 or NAME@~1.2.3 (default: the latest)')
    .option(...REGISTRY_FLAG)
    .option(...REPO_FLAG)
    .option(...OFFLINE_FLAG)
    .option('--force', 'overwrite an installed pipeline that has local changes')
    .option('--json', 'print JSON: [{name, version, registry, hash, status}]')
    .action(
      action(async (name: string | undefined, flags: ReadFlags & { force?: boolean }) => {
        const { pullFromRegistry } = await import('../handlers/registry.js');
        return pullFromRegistry(name, flags, processIo());
      }),
    );
  program
    .command('publish')
    .description('validate a pipeline and add it to the registry as a new version')
    .argument('[name]', 'pipeline of this project (default: the one --name names, else the default pipeline)')
    .option('--name <name>', "its name in the registry, aqm's form (default: the pipeline's name)")
    .option('--version <version>', 'the version to publish (default: the latest, patch bumped; 1.0.0 first)')
    .option('--bump <part>', 'bump the latest version: patch, minor or major')
    .option('--description <text>', 'one line for search (default: the previous version’s)')
    .option('--tags <list>', 'comma-separated tags for search (default: the previous version’s)')
    .option(...REGISTRY_FLAG)
    .option(...REPO_FLAG)
    .option('--json', 'print JSON: {name, pipeline, version, registry, hash, commit, branch?, url?}')
    .action(
      action(async (name: string | undefined, flags: PublishFlags) => {
        const { publishToRegistry } = await import('../handlers/registry.js');
        return publishToRegistry(name, flags, processIo());
      }),
    );
  program
    .command('registry')
    .description('a pipeline registry of your own')
    .command('init')
    .description("start a team registry: a git repository with troupe's layout, an index and a README")
    .argument('[dir]', 'an empty or new folder (default: the current one)')
    .option('--json', 'print JSON: {dir, commit}')
    .action(
      action(async (dir: string | undefined, flags: { json?: boolean }) => {
        const { initRegistryFolder } = await import('../handlers/registry.js');
        return initRegistryFolder(dir, flags, processIo());
      }),
    );
}

/** `troupe pipeline versions NAME`: registered by pipeline.ts under its `pipeline` command. */
export function registerPipelineVersions(pipeline: Command): void {
  pipeline
    .command('versions')
    .description("a registry pipeline's versions, oldest first (by semver)")
    .argument('<name>', 'pipeline name in the registry')
    .option(...REGISTRY_FLAG)
    .option(...REPO_FLAG)
    .option(...OFFLINE_FLAG)
    .option('--json', 'print JSON: {name, registry, versions, latest}')
    .action(
      action(async (name: string, flags: ReadFlags) => {
        const { pipelineVersions } = await import('../handlers/registry.js');
        return pipelineVersions(name, flags, processIo());
      }),
    );
}
