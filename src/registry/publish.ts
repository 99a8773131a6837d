import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StateError, UsageError } from '../core/errors.js';
import type { ProjectConfig } from '../pipeline/config.js';
import { toPipelineError } from '../pipeline/diagnostics.js';
import { listPipelines, type PipelineLocation, resolvePipeline } from '../pipeline/discover.js';
import { identityEnv } from '../workspace/git.js';
import { ghPullRequest, requireGh, shellQuote } from '../workspace/pull-request.js';
import { type IndexEntry, readIndex, readMeta, versionFolders } from './catalog.js';
import { gitReason, unreachable } from './checkout.js';
import { hashFolder } from './content-hash.js';
import { RegistryError } from './errors.js';
import { locationText, type RegistryLocation } from './location.js';
import { pipelineFiles } from './pipeline-files.js';
import { assertPipelineName, type Bump, nextVersion, sortVersions } from './reference.js';
import { filterDriversOff, HARDENED_RECEIVE_PACK, registryGit, registryGitOk } from './registry-git.js';
import { checkPipeline } from './validate-folder.js';

export interface PublishOptions {
  root: string;
  config: ProjectConfig;
  location: RegistryLocation;
  /** The project's pipeline to publish. Default: the one named `as` if there is one, else the default pipeline. */
  name?: string;
  /** Its name in the registry (aqm's `publish --name`). Default: the pipeline's own name. */
  as?: string;
  version?: string;
  bump?: Bump;
  description?: string;
  tags?: string[];
}

export interface PublishResult {
  /** The name in the registry. */
  name: string;
  /** The project's pipeline that was published. */
  pipeline: string;
  version: string;
  registry: string;
  hash: string;
  /** The commit that adds it (on the registry's branch, or on the pull request's). */
  commit: string;
  /** For a URL: the branch pushed and the pull request opened. */
  branch?: string;
  url?: string;
}

/**
 * `troupe publish`: validates the pipeline (held to its folder), then adds it as
 * `pipelines/<name>/<version>/` with index.json updated, in one commit. A registry on this
 * machine gets the commit on its branch (a bare one through a clone and a push; a checkout
 * directly, touching only those paths); a URL gets a branch `publish/<name>-<version>` and a
 * pull request opened with `gh`. A version already there is refused.
 */
export async function publishPipeline(options: PublishOptions): Promise<PublishResult> {
  if (options.location.builtIn) {
    // aqm's community registry reads `v<version>` folders and versions.json, which troupe does not write
    throw new UsageError(
      `no registry to publish to: the default, ${locationText(options.location)}, is only read here; start your own with \`troupe registry init DIR\` and pass --registry DIR (or set \`registry:\` in .troupe/config.yaml)`,
    );
  }
  if (options.as !== undefined) assertPipelineName(options.as);
  const found = pipelineToPublish(options);
  const name = options.as ?? found.name;
  const { errors, agentCount: agentsCount } = checkPipeline(
    found.file,
    path.dirname(found.file),
    found.name,
    options.config,
  );
  if (errors.length > 0) throw toPipelineError(errors);
  const files = pipelineFiles(found.file);
  const work = await workTree(options.location);
  try {
    const existing = versionFolders(work.dir, name).map((v) => v.version);
    const version = nextVersion(existing, options);
    if (existing.includes(version)) {
      throw new StateError(`${name}@${version} is already in registry ${locationText(options.location)}`, {
        hint: `a published version never changes: publish another (--bump, or --version; the latest is ${sortVersions(existing).at(-1)})`,
      });
    }
    const rel = `pipelines/${name}/${version}`;
    const dir = path.join(work.dir, rel);
    const previous = readIndex(work.dir).find((e) => e.name === name);
    const description = options.description ?? previous?.description ?? '';
    const tags = options.tags ?? previous?.tags ?? [];
    const indexFile = path.join(work.dir, 'index.json');
    const indexBefore = existsSync(indexFile) ? readFileSync(indexFile) : null;
    const paths = [rel, 'index.json'];
    let commit: string;
    try {
      writeVersionFolder(dir, files, found.file, {
        name,
        version,
        description,
        tags,
        agentsCount,
      });
      const hash = hashFolder(dir).hash;
      writeIndex(work.dir, name, { version, hash, description, tags, agentsCount });
      const config = work.config;
      await registryGitOk(work.dir, ['add', '--', ...paths], { config });
      const env = await identityEnv(work.dir);
      const message = `Publish ${name} ${version}`;
      await registryGitOk(work.dir, ['commit', '--quiet', '--no-verify', '-m', message, '--', ...paths], {
        env,
        config,
      });
      commit = (await registryGitOk(work.dir, ['rev-parse', 'HEAD'])).trim();
    } catch (error) {
      // in a registry checkout, leave no half-published version behind
      await registryGit(work.dir, ['reset', '--quiet', '--', ...paths], { config: work.config });
      rmSync(dir, { recursive: true, force: true });
      if (indexBefore) writeFileSync(indexFile, indexBefore);
      else rmSync(indexFile, { force: true });
      throw error;
    }
    const hash = hashFolder(dir).hash;
    const result = {
      name,
      pipeline: found.name,
      version,
      registry: locationText(options.location),
      hash,
      commit,
    };
    return { ...result, ...(await work.deliver(name, version, description)) };
  } finally {
    work.dispose();
  }
}

/**
 * aqm publishes its default pipeline under `--name`; troupe publishes the pipeline of that name
 * when the project has one (publishing another under its name would surprise), else the default.
 */
function pipelineToPublish(options: PublishOptions): PipelineLocation {
  const { root, config } = options;
  if (options.name !== undefined) return resolvePipeline(root, { pipeline: options.name }, config);
  const same = options.as !== undefined && listPipelines(root, config).some((p) => p.name === options.as);
  return resolvePipeline(root, same ? { pipeline: options.as } : {}, config);
}

interface WorkTree {
  dir: string;
  /** Extra git settings for commands there (a checkout's filter drivers switched off). */
  config: string[];
  /** Makes the commit reach the registry. */
  deliver(name: string, version: string, description: string): Promise<{ branch?: string; url?: string }>;
  dispose(): void;
}

async function workTree(location: RegistryLocation): Promise<WorkTree> {
  const source = locationText(location);
  if (location.kind === 'path' && (await isCheckout(location.path))) return checkoutWorkTree(location.path);
  const temp = mkdtempSync(path.join(os.tmpdir(), 'troupe-publish-'));
  const dir = path.join(temp, 'registry');
  const cloned = await registryGit(temp, ['clone', '--quiet', '--', source, dir]);
  const dispose = () => rmSync(temp, { recursive: true, force: true });
  if (cloned.code !== 0) {
    dispose();
    throw unreachable(location, 'clone', cloned.stderr);
  }
  const base = (await registryGitOk(dir, ['symbolic-ref', '--short', 'HEAD'])).trim();
  if (location.kind === 'path') {
    return {
      dir,
      config: [],
      dispose,
      deliver: async () => {
        await pushOrExplain(dir, source, [
          'push',
          '--quiet',
          HARDENED_RECEIVE_PACK,
          'origin',
          `HEAD:refs/heads/${base}`,
        ]);
        return {};
      },
    };
  }
  return {
    dir,
    config: [],
    dispose,
    deliver: async (name, version, description) => {
      const branch = `publish/${name}-${version}`;
      const title = `Publish ${name} ${version}`;
      const create = ['--head', branch, '--base', base, '--title', title];
      const gh = requireGh(
        `push and open it yourself from a clone of the registry:\n    git push origin ${branch}\n    ${['gh', 'pr', 'create', ...create].map(shellQuote).join(' ')} --fill`,
      );
      await registryGitOk(dir, ['branch', '--quiet', branch]);
      await pushOrExplain(dir, source, [
        'push',
        '--quiet',
        'origin',
        `refs/heads/${branch}:refs/heads/${branch}`,
      ]);
      const body = [`Adds \`pipelines/${name}/${version}/\` and its index.json entry.`, '', description]
        .join('\n')
        .trim();
      const { url } = await ghPullRequest(gh, dir, [...create, '--body', body]);
      return { branch, url };
    },
  };
}

/**
 * Whether a registry path is the top of a checkout (committed to in place), else the top of a
 * bare repository (cloned and pushed to); a folder inside some repository is neither.
 */
async function isCheckout(dir: string): Promise<boolean> {
  const [bare, top, gitDir] = await Promise.all([
    registryGit(dir, ['rev-parse', '--is-bare-repository']),
    registryGit(dir, ['rev-parse', '--show-toplevel']),
    registryGit(dir, ['rev-parse', '--absolute-git-dir']),
  ]);
  const real = realpathSync(dir);
  if (bare.stdout.trim() === 'false' && top.code === 0 && realpathSync(top.stdout.trim()) === real)
    return true;
  if (bare.stdout.trim() === 'true' && gitDir.code === 0 && realpathSync(gitDir.stdout.trim()) === real)
    return false;
  throw new RegistryError(`registry ${dir} is not a git repository (or not the top of one)`, {
    hint: 'give the folder of a git repository (git init, or git init --bare), or a git URL',
  });
}

/** A registry that is a checkout on this machine: the commit goes on its branch, with only the publish's paths. */
async function checkoutWorkTree(dir: string): Promise<WorkTree> {
  const config = await filterDriversOff(dir);
  const dirty = await registryGitOk(dir, ['status', '--porcelain', '--', 'index.json'], { config });
  if (dirty.trim()) {
    throw new RegistryError(`registry ${dir} has uncommitted changes to index.json`, {
      hint: 'commit or discard them first: troupe publish commits index.json there',
    });
  }
  return { dir, config, dispose: () => {}, deliver: async () => ({}) };
}

async function pushOrExplain(dir: string, source: string, args: string[]): Promise<void> {
  const pushed = await registryGit(dir, args);
  if (pushed.code !== 0) {
    throw new RegistryError(`cannot push to registry ${source}: ${gitReason(pushed.stderr)}`, {
      hint: 'someone may have published at the same time: run the command again',
    });
  }
}

interface VersionMeta {
  name: string;
  version: string;
  description: string;
  tags: string[];
  agentsCount: number;
}

function writeVersionFolder(dir: string, files: Map<string, string>, main: string, meta: VersionMeta): void {
  for (const [rel, from] of files) {
    const to = path.join(dir, rel);
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(from, to);
  }
  const readme = path.join(path.dirname(main), 'README.md');
  const ownFolder = path.basename(main) === 'agents.yaml' && existsSync(readme);
  writeFileSync(
    path.join(dir, 'README.md'),
    ownFolder ? readFileSync(readme) : `# ${meta.name}\n\n${meta.description || 'A troupe pipeline.'}\n`,
  );
  const { agentsCount, ...rest } = meta;
  writeFileSync(
    path.join(dir, 'meta.json'),
    `${JSON.stringify({ ...rest, agents_count: agentsCount }, null, 2)}\n`,
  );
}

/**
 * index.json with this version added: a list sorted by name, in aqm's shape (name, description,
 * author, version, latest, versions, tags, agents_count) plus `hashes`, each version's content
 * hash. Other pipelines' entries are kept as they are.
 */
function writeIndex(
  root: string,
  name: string,
  added: { version: string; hash: string; description: string; tags: string[]; agentsCount: number },
): void {
  const entries = readIndex(root).filter((e) => e.name !== name);
  const previous = readIndex(root).find((e) => e.name === name);
  const folders = versionFolders(root, name);
  const versions = folders.map((v) => v.version);
  const latest = versions.at(-1) ?? added.version;
  const latestFolder = folders.at(-1);
  const latestMeta =
    latest === added.version || !latestFolder ? null : readMeta(path.join(root, latestFolder.rel));
  const entry: IndexEntry = {
    name,
    description: latestMeta?.description ?? added.description,
    tags: latestMeta?.tags ?? added.tags,
    ...(previous?.author ? { author: previous.author } : {}),
    version: latest,
    latest,
    versions,
    agents_count:
      latest === added.version ? added.agentsCount : (previous?.agents_count ?? added.agentsCount),
    hashes: { ...previous?.hashes, [added.version]: added.hash },
  };
  const all = [...entries, entry].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  writeFileSync(path.join(root, 'index.json'), `${JSON.stringify(all, null, 2)}\n`);
}
