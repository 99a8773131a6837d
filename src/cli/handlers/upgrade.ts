import semver from 'semver';
import { messageOf } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import { packageVersion } from '../../package-root.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { Exit } from '../exit-codes.js';

export interface UpgradeFlags {
  json?: boolean;
}

const PACKAGE = 'troupe';
const DEFAULT_REGISTRY = 'https://registry.npmjs.org/';

/**
 * AMQ's `upgrade`, for an npm package: asks the registry (npm's own `npm_config_registry`, else
 * npmjs.org) for the latest version and prints the npm command that installs it. It never
 * installs: replacing the troupe a project runs is the operator's act (exit 6 when there is one
 * to do, as AMQ's other printed commands). The registry's answer is checked to be a version
 * before it goes into a command line.
 */
export async function upgradeCommand(flags: UpgradeFlags, io: CommandIo): Promise<number> {
  const current = packageVersion();
  const registry = (process.env.npm_config_registry || DEFAULT_REGISTRY).replace(/\/?$/, '/');
  let latest: string;
  try {
    latest = await latestVersion(registry);
  } catch (error) {
    io.err(
      `troupe: upgrade: ${printable(registry)} is not reachable (${printable(messageOf(error))}); troupe is ${current}, upgrade later with \`npm install -g ${PACKAGE}@latest\`\n`,
    );
    return Exit.failed;
  }
  const newer = semver.gt(latest, current);
  const command = `npm install -g ${PACKAGE}@${latest}`;
  if (flags.json) writeJson(io, { current, latest, update_available: newer, ...(newer ? { command } : {}) });
  else if (newer) io.out(`troupe ${current} → ${latest}\nupgrade with: ${command}\n`);
  else io.out(`troupe ${current} is the latest (${latest} on ${registry})\n`);
  return newer ? Exit.actionRequired : Exit.ok;
}

async function latestVersion(registry: string): Promise<string> {
  const response = await fetch(new URL(`${PACKAGE}/latest`, registry), {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const body = (await response.json()) as { version?: unknown };
  const version = typeof body.version === 'string' ? semver.valid(body.version) : null;
  if (!version) throw new Error('no valid version in its answer');
  return version;
}
