import { delimiter } from 'node:path';

/**
 * This process's environment as a user's shell has it, for tests that run npm or an installed
 * troupe as a user would: without what `npm test` or npx put in it (the npm_* variables, which
 * would override the user's npm config, and node_modules/.bin on PATH), with `extra` on top.
 * npm_config_nodedir stays: it is the machine's (the Node whose headers native modules build
 * against, set by .ci/other-node), not npm run's.
 */
export function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^npm_/i.test(key) && !/^npm_config_nodedir$/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = userPath(env.PATH ?? '');
  return { ...env, NO_COLOR: '1', ...extra };
}

/** PATH without the node_modules/.bin folders npm run puts first. */
export function userPath(path: string): string {
  return path
    .split(delimiter)
    .filter((dir) => dir && !/[\\/]node_modules[\\/]\.bin$/.test(dir))
    .join(delimiter);
}

/** npm without its audit, funding and update notices, for a test's own npm runs. */
export const quietNpm: Record<string, string> = {
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};
