import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { DiagnosticSink, toPipelineError } from '../pipeline/diagnostics.js';
import { checkSchema } from '../pipeline/schema-issues.js';
import { YamlSource } from '../pipeline/yaml-source.js';

/**
 * Where a registry is: a folder on this machine (a git repository, bare or not), or a URL git
 * understands (`https://…`, `ssh://…`, `git@host:path`, `file://…`), reached with the user's own
 * git credentials. A path is committed to directly on publish; a URL gets a branch and a pull request.
 */
export type RegistryLocation =
  | { kind: 'path'; path: string; builtIn?: true }
  | { kind: 'url'; url: string; builtIn?: true };

/**
 * The registry a command uses when nothing names one: aqm's community registry, whose layout
 * troupe reads as it is (docs/registry.md, "aqm's registries"). `TROUPE_DEFAULT_REGISTRY`
 * replaces it for every project of a machine (a mirror; empty: none).
 */
export const DEFAULT_REGISTRY = 'https://github.com/aqm-framework/registry.git';

/** GitHub's rules for an owner, and a repository name git can take (no `..`, no leading dot). */
const GITHUB_REPO = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9_-][A-Za-z0-9._-]{0,99})$/;

/**
 * aqm's `--repo owner/name`: a registry on GitHub, as the git URL troupe clones (with the user's
 * git credentials). `TROUPE_GITHUB_URL` replaces `https://github.com` (GitHub Enterprise, a mirror).
 */
export function githubRepoUrl(repo: string): string {
  const m = GITHUB_REPO.exec(repo.trim());
  if (!m || m[2]!.endsWith('.git') || m[2]!.includes('..'))
    throw new UsageError(`--repo must be owner/name (a GitHub repository), not '${repo}'`);
  const base = (process.env.TROUPE_GITHUB_URL || 'https://github.com').replace(/\/+$/, '');
  return `${base}/${m[1]}/${m[2]}.git`;
}

/** `scheme://…` or scp-like `user@host:path`. */
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\/|^[\w.-]+@[\w.-]+:/i;

/** A location from what the user wrote; a relative path is relative to `base`. */
export function parseLocation(text: string, base: string): RegistryLocation {
  const trimmed = text.trim();
  if (!trimmed) throw new UsageError('the registry is empty', { hint: 'give a git URL or a path' });
  if (URL_LIKE.test(trimmed)) return { kind: 'url', url: trimmed };
  const expanded =
    trimmed === '~' || trimmed.startsWith('~/') ? path.join(os.homedir(), trimmed.slice(1)) : trimmed;
  return { kind: 'path', path: path.resolve(base, expanded) };
}

/** How a location is shown and recorded in pipelines.lock: the URL, or the absolute path. */
export function locationText(location: RegistryLocation): string {
  return location.kind === 'url' ? location.url : location.path;
}

/**
 * Which registry a command uses: `--registry`, else `registry:` in the project's config, else in
 * the user's (`$XDG_CONFIG_HOME/troupe/config.yaml`, by default `~/.config/troupe/config.yaml`),
 * else the default (`TROUPE_DEFAULT_REGISTRY`, else DEFAULT_REGISTRY), marked `builtIn`.
 */
export function chooseRegistry(choice: {
  flag?: string | undefined;
  cwd: string;
  projectRoot: string;
  projectRegistry: string | null;
}): RegistryLocation {
  if (choice.flag !== undefined) return parseLocation(choice.flag, choice.cwd);
  if (choice.projectRegistry) return parseLocation(choice.projectRegistry, choice.projectRoot);
  const user = userRegistry();
  if (user) return parseLocation(user, os.homedir());
  const fallback = process.env.TROUPE_DEFAULT_REGISTRY ?? DEFAULT_REGISTRY;
  if (fallback.trim()) return { ...parseLocation(fallback, os.homedir()), builtIn: true };
  throw new UsageError('no registry configured', {
    hint: `pass --registry <git url|path>, or set \`registry:\` in .troupe/config.yaml or ${userConfigFile()}`,
  });
}

export function userConfigFile(): string {
  const base = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'troupe', 'config.yaml');
}

const UserConfigSchema = z.strictObject({ registry: z.string().min(1).nullish() });

function userRegistry(): string | null {
  const file = userConfigFile();
  if (!existsSync(file)) return null;
  const sink = new DiagnosticSink();
  const source = YamlSource.parse(file, readFileSync(file, 'utf8'), sink);
  const raw = source && checkSchema(UserConfigSchema, source.value() ?? {}, source, [], sink);
  if (!raw) throw toPipelineError(sink.errors());
  return raw.registry ?? null;
}
