import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { messageOf } from '../core/errors.js';
import { listFiles } from './content-hash.js';
import { RegistryError } from './errors.js';
import { sortVersions, versionOfFolder } from './reference.js';

/**
 * Reading a registry's files. troupe's layout is `pipelines/<name>/<version>/{agents.yaml,
 * README.md, meta.json, …}` and an `index.json`; aqm's is read too: `pipelines/<name>/v<version>/`
 * with `versions.json`, and its legacy unversioned `pipelines/<name>/agents.yaml` (as 0.1.0,
 * the version aqm's own migration gives it). The folders are what can be pulled; the index adds
 * descriptions, tags and the hash each version was published with.
 */

export interface VersionFolder {
  version: string;
  /** The folder, relative to the registry root, with `/`. */
  rel: string;
  /** Its files, relative to the folder. */
  files: string[];
}

export interface CatalogEntry {
  name: string;
  description: string;
  tags: string[];
  /** Ascending by semver. */
  versions: string[];
  latest: string | null;
}

/** One pipeline of index.json: troupe writes every field; aqm's index has all but `hashes`. */
const IndexEntrySchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  author: z.string().nullish(),
  tags: z.array(z.string()).nullish(),
  version: z.string().nullish(),
  latest: z.string().nullish(),
  versions: z.array(z.string()).nullish(),
  agents_count: z.number().nullish(),
  hashes: z.record(z.string(), z.string()).nullish(),
});
export type IndexEntry = z.infer<typeof IndexEntrySchema>;

const MetaSchema = z.looseObject({
  description: z.string().nullish(),
  tags: z.array(z.string()).nullish(),
});

const LEGACY_VERSION = '0.1.0';

export function readIndex(root: string): IndexEntry[] {
  const file = path.join(root, 'index.json');
  if (!existsSync(file)) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new RegistryError(`the registry's index.json is not JSON: ${messageOf(error)}`);
  }
  const parsed = z.array(IndexEntrySchema).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RegistryError(
      `the registry's index.json: ${issue.path.join('.') || 'top level'}: ${issue.message}`,
      {
        hint: 'it is a list of {name, description, tags, versions, hashes, …}',
      },
    );
  }
  return parsed.data;
}

export function pipelineNames(root: string): string[] {
  const dir = path.join(root, 'pipelines');
  if (!isDirectory(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

/** The versions of a pipeline that can be pulled, ascending; a version in two layouts counts once. */
export function versionFolders(root: string, name: string): VersionFolder[] {
  const dir = path.join(root, 'pipelines', name);
  if (!isDirectory(dir)) return [];
  const byVersion = new Map<string, VersionFolder>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const version = entry.isDirectory() ? versionOfFolder(entry.name) : null;
    const folder = path.join(dir, entry.name);
    if (!version || byVersion.has(version) || !isFile(path.join(folder, 'agents.yaml'))) continue;
    byVersion.set(version, { version, rel: `pipelines/${name}/${entry.name}`, files: listFiles(folder) });
  }
  if (byVersion.size === 0 && isFile(path.join(dir, 'agents.yaml'))) {
    const files = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name !== 'versions.json')
      .map((e) => e.name)
      .sort();
    byVersion.set(LEGACY_VERSION, { version: LEGACY_VERSION, rel: `pipelines/${name}`, files });
  }
  const order = sortVersions(byVersion.keys());
  return order.map((v) => byVersion.get(v)!);
}

/** Every pipeline with its versions, and the description and tags of index.json or its latest meta.json. */
export function readCatalog(root: string): CatalogEntry[] {
  const index = new Map(readIndex(root).map((e) => [e.name, e]));
  return pipelineNames(root).flatMap((name) => {
    const folders = versionFolders(root, name);
    const latest = folders.at(-1);
    if (!latest) return [];
    const listed = index.get(name);
    const meta = readMeta(path.join(root, latest.rel));
    return [
      {
        name,
        description: listed?.description ?? meta.description ?? '',
        tags: listed?.tags ?? meta.tags ?? [],
        versions: folders.map((f) => f.version),
        latest: latest.version,
      },
    ];
  });
}

/** A version's meta.json; one that is missing or unreadable says nothing (search shows no description). */
export function readMeta(folder: string): z.infer<typeof MetaSchema> {
  try {
    return MetaSchema.parse(JSON.parse(readFileSync(path.join(folder, 'meta.json'), 'utf8')));
  } catch {
    return {};
  }
}

/** Case-insensitive; every word of the query must occur in the name, the description or a tag. */
export function matches(entry: CatalogEntry, query: string | undefined): boolean {
  const haystack = [entry.name, entry.description, ...entry.tags].join('\n').toLowerCase();
  return (query ?? '')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => haystack.includes(word));
}

function isDirectory(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function isFile(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
}
