import { readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { messageOf } from '../core/errors.js';
import { RegistryError } from './errors.js';
import { assertPipelineName, sortVersions, versionOfFolder } from './reference.js';
import { assertFolder, entryKind, INDEX_LIMIT, listFiles, readRegistryFile } from './registry-files.js';

/**
 * Reading a registry's files. troupe's layout is `pipelines/<name>/<version>/{agents.yaml,
 * README.md, meta.json, …}` and an `index.json`; aqm's is read too: `pipelines/<name>/v<version>/`
 * with `versions.json`, and its legacy unversioned `pipelines/<name>/agents.yaml` (as 0.1.0,
 * the version aqm's own migration gives it). The folders are what can be pulled; the index adds
 * descriptions, tags and the hash each version was published with. A registry is someone
 * else's: names are checked, nothing is followed, files are capped in size (registry-files.ts).
 */

export interface VersionFolder {
  version: string;
  /** The folder, relative to the registry root, with `/`. */
  rel: string;
  /** aqm's legacy flat folder: its files are those directly in it, versions.json aside. */
  flat: boolean;
}

/** A pipeline or version that `troupe search` left out, and why. */
export interface Skipped {
  what: string;
  reason: string;
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
  const text = readRegistryFile(path.join(root, 'index.json'), INDEX_LIMIT);
  if (text === undefined) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // JSON.parse quotes the text it stopped at, which is not ours to print
    throw new RegistryError(`the registry's index.json is not valid JSON`);
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

/** The names under `pipelines/` (folders, and links where a folder should be, which are refused on reading). */
export function pipelineNames(root: string): string[] {
  const dir = path.join(root, 'pipelines');
  if (entryKind(dir) === 'absent') return [];
  assertFolder(dir);
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

/**
 * The versions of a pipeline that can be pulled, ascending; a version in two layouts counts once.
 * A pipeline or version folder, or an agents.yaml, that is a symbolic link is refused.
 */
export function versionFolders(root: string, name: string): VersionFolder[] {
  assertPipelineName(name);
  const dir = path.join(root, 'pipelines', name);
  if (entryKind(dir) === 'absent') return [];
  assertFolder(dir);
  const byVersion = new Map<string, VersionFolder>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const version = versionOfFolder(entry.name);
    if (!version || byVersion.has(version)) continue;
    const folder = path.join(dir, entry.name);
    assertFolder(folder);
    if (!holdsPipeline(folder)) continue;
    byVersion.set(version, { version, rel: `pipelines/${name}/${entry.name}`, flat: false });
  }
  if (byVersion.size === 0 && holdsPipeline(dir)) {
    byVersion.set(LEGACY_VERSION, { version: LEGACY_VERSION, rel: `pipelines/${name}`, flat: true });
  }
  const order = sortVersions(byVersion.keys());
  return order.map((v) => byVersion.get(v)!);
}

/** A version's files, relative to its folder; refused as listFiles refuses them. */
export function versionFiles(root: string, folder: VersionFolder): string[] {
  const dir = path.join(root, folder.rel);
  return folder.flat ? listFiles(dir, { flat: true, skip: ['versions.json'] }) : listFiles(dir);
}

/**
 * Every pipeline with its versions, and the description and tags of index.json or its latest
 * meta.json. A pipeline or version that cannot be read (a symbolic link, a file too large) is left
 * out and given to `skipped`, so one bad pipeline does not hide the rest of the registry.
 */
export function readCatalog(root: string, skipped: (s: Skipped) => void = () => {}): CatalogEntry[] {
  const index = new Map(readIndex(root).map((e) => [e.name, e]));
  return pipelineNames(root).flatMap((name) => {
    let folders: VersionFolder[];
    try {
      folders = versionFolders(root, name);
    } catch (error) {
      skipped({ what: name, reason: messageOf(error) });
      return [];
    }
    const readable = folders.filter((folder) => {
      try {
        versionFiles(root, folder);
        return true;
      } catch (error) {
        skipped({ what: `${name}@${folder.version}`, reason: messageOf(error) });
        return false;
      }
    });
    const latest = readable.at(-1);
    if (!latest) return [];
    const listed = index.get(name);
    const meta = readMeta(path.join(root, latest.rel));
    return [
      {
        name,
        description: listed?.description ?? meta.description ?? '',
        tags: listed?.tags ?? meta.tags ?? [],
        versions: readable.map((f) => f.version),
        latest: latest.version,
      },
    ];
  });
}

/** A version's meta.json; one that is missing or unreadable says nothing (search shows no description). */
export function readMeta(folder: string): z.infer<typeof MetaSchema> {
  try {
    return MetaSchema.parse(JSON.parse(readRegistryFile(path.join(folder, 'meta.json')) ?? '{}'));
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

function holdsPipeline(folder: string): boolean {
  const kind = entryKind(path.join(folder, 'agents.yaml'));
  if (kind === 'symlink') throw new RegistryError(`${folder}/agents.yaml is a symbolic link`);
  return kind === 'file';
}
