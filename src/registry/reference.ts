import semver from 'semver';
import { NotFoundError, UsageError } from '../core/errors.js';

/** Letters, digits, `.`, `_` and `-`, not starting with a dot: a pipeline's name and folder. */
export const PIPELINE_NAME = /^(?!\.)[\w.-]+$/;

export interface PipelineRef {
  name: string;
  /** A version or semver range (`1.2.0`, `^1.2`, `~1.2.3`); null for the latest. */
  range: string | null;
}

export type Bump = 'patch' | 'minor' | 'major';

/** `NAME`, `NAME@1.2.3`, `NAME@^1.2`, `NAME@~1.2.3`. */
export function parsePipelineRef(text: string): PipelineRef {
  const at = text.indexOf('@');
  const name = at < 0 ? text : text.slice(0, at);
  const range = at < 0 ? null : text.slice(at + 1).trim();
  assertPipelineName(name);
  if (range !== null && semver.validRange(range) === null) {
    throw new UsageError(`"${range}" in ${text} is not a version or semver range`, {
      hint: 'write NAME@1.2.3, NAME@^1.2 or NAME@~1.2.3',
    });
  }
  return { name, range: range === '' ? null : range };
}

export function assertPipelineName(name: string): void {
  if (!PIPELINE_NAME.test(name)) {
    throw new UsageError(`invalid pipeline name "${name}"`, {
      hint: 'a name is letters, digits, ., _ and -',
    });
  }
}

/** The folder name of a version (`1.2.0`, or aqm's `v1.2.0`) as a version, or null. */
export function versionOfFolder(folder: string): string | null {
  const bare = folder.startsWith('v') ? folder.slice(1) : folder;
  return semver.valid(bare) === bare ? bare : null;
}

/** Ascending by semver precedence: 1.9.0 before 1.10.0, 1.0.0-rc.1 before 1.0.0. */
export function sortVersions(versions: Iterable<string>): string[] {
  return [...new Set(versions)].sort(semver.compare);
}

/**
 * The highest version satisfying `range`; with no range, the highest release (a prerelease only
 * when there is nothing else). Prereleases satisfy a range only as semver says (`^1.0.0-rc.1`).
 */
export function resolveVersion(name: string, versions: readonly string[], range: string | null): string {
  const chosen =
    range === null
      ? (semver.maxSatisfying(versions, '*') ?? sortVersions(versions).at(-1) ?? null)
      : semver.maxSatisfying(versions, range);
  if (chosen) return chosen;
  const known = sortVersions(versions);
  throw new NotFoundError(
    known.length === 0
      ? `the registry has no pipeline named "${name}"`
      : `no version of ${name} satisfies ${range}`,
    known.length === 0
      ? { hint: 'troupe search lists what it has' }
      : { hint: `available: ${known.join(', ')}` },
  );
}

/** The version a publish gets: `explicit`, else the latest bumped (patch by default), else 1.0.0. */
export function nextVersion(existing: readonly string[], choice: { version?: string; bump?: Bump }): string {
  if (choice.version !== undefined) {
    const clean = semver.valid(choice.version);
    if (clean !== choice.version) {
      throw new UsageError(`--version ${choice.version} is not a semver version`, { hint: 'e.g. 1.2.0' });
    }
    return clean;
  }
  const latest = sortVersions(existing).at(-1);
  if (!latest) return '1.0.0';
  return semver.inc(latest, choice.bump ?? 'patch')!;
}
