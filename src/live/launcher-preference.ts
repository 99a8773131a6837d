import { join } from 'node:path';
import { UsageError } from '../core/errors.js';
import { readJsonFile } from './launch-config.js';

/**
 * The launchers troupe drives, AMQ's four in AMQ's order: cmux and Ghostty (emulators.ts), tmux
 * panes, and commands printed for the operator to paste.
 */
export const LAUNCHERS = ['cmux', 'ghostty', 'tmux', 'commands'] as const;
export type LauncherName = (typeof LAUNCHERS)[number];

/** The launchers AMQ's `.amq/launch.local.json` may name (the same four); others are refused, as AMQ does. */
export const AMQ_LAUNCHERS = LAUNCHERS;

/** The fallback every preference ends with: printing the commands needs nothing installed. */
const FALLBACK: LauncherName = 'commands';

/** AMQ's local, uncommitted launch preferences (schema 1): only the launcher order. */
export interface LocalLaunchConfig {
  schema: 1;
  launcher_preference: string[];
}

export const LAUNCH_LOCAL_FILE = join('.amq', 'launch.local.json');

/** Fields that belong to the committed `.amq/launch.json` (or nowhere): AMQ refuses them here. */
const AUTHORITY_FIELDS = [
  'agents',
  'default_session',
  'layout',
  'resume_policy',
  'command',
  'argv',
  'env',
  'cwd',
  'bypass_args',
  'trust',
  'root',
];

export function isTroupeLauncher(name: string): name is LauncherName {
  return (LAUNCHERS as readonly string[]).includes(name);
}

/**
 * `--launcher-preference a,b`: the names in order, duplicates dropped, `commands` appended when
 * missing (as AMQ does); a name AMQ does not know is a usage error.
 */
export function parseLauncherPreference(raw: string): string[] {
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const unknown = names.filter((n) => !(AMQ_LAUNCHERS as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new UsageError(`--launcher-preference: unsupported launcher '${unknown[0]}'`, {
      hint: `use ${AMQ_LAUNCHERS.join(', ')} (troupe launches with ${LAUNCHERS.join(' and ')})`,
    });
  return [...new Set([...names, FALLBACK])];
}

/** The first launcher of the preference troupe drives and finds available; `commands` always is. */
export function pickLauncher(
  preference: readonly string[],
  available: (launcher: LauncherName) => boolean,
): LauncherName {
  return preference.filter(isTroupeLauncher).find((l) => l === FALLBACK || available(l)) ?? FALLBACK;
}

/** The project's local launch preferences, or undefined when it has none; a broken file is a usage error. */
export function readLocalLaunchConfig(projectDir: string): LocalLaunchConfig | undefined {
  const file = join(projectDir, LAUNCH_LOCAL_FILE);
  const raw = readJsonFile(file);
  if (raw === undefined) return undefined;
  const bad = (what: string) => new UsageError(`${file}: ${what}`);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('expected a JSON object');
  const c = raw as Record<string, unknown>;
  const misplaced = AUTHORITY_FIELDS.find((f) => f in c);
  if (misplaced)
    throw bad(`"${misplaced}" belongs in ${join('.amq', 'launch.json')}, not in local preferences`);
  if (c.schema !== 1) throw bad('"schema" must be 1');
  const list = c.launcher_preference;
  if (!Array.isArray(list) || list.length === 0 || !list.every((n) => typeof n === 'string'))
    throw bad('"launcher_preference" must be a non-empty array of launcher names');
  const names = list as string[];
  const unknown = names.find((n) => !(AMQ_LAUNCHERS as readonly string[]).includes(n));
  if (unknown) throw bad(`unsupported launcher preference "${unknown}"`);
  if (new Set(names).size !== names.length) throw bad('a launcher appears twice in "launcher_preference"');
  if (!names.includes(FALLBACK)) throw bad(`"launcher_preference" must include "${FALLBACK}"`);
  return { schema: 1, launcher_preference: names };
}
