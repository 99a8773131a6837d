import { execFile } from 'node:child_process';
import { TrackerError } from '../core/tracker.js';

/**
 * The GitHub token, as `gh` itself looks for one: `GH_TOKEN`, then `GITHUB_TOKEN`, then what
 * `gh auth token` prints for the API's host (a subprocess under a timeout; no `gh` is no token).
 */

export interface GitHubToken {
  token: string;
  /** Where it came from, for messages: `GH_TOKEN`, `GITHUB_TOKEN` or `gh auth token`. */
  source: string;
}

export interface TokenLookup {
  env: NodeJS.ProcessEnv;
  /** The API's base URL: its host is the one `gh auth token --hostname` is asked for. */
  apiUrl: string;
  /** The `gh` program (tests point it at a fake). */
  gh?: string;
  timeoutMs?: number;
}

export async function resolveGitHubToken(lookup: TokenLookup): Promise<GitHubToken> {
  for (const name of ['GH_TOKEN', 'GITHUB_TOKEN']) {
    const value = lookup.env[name]?.trim();
    if (value) return { token: value, source: name };
  }
  const fromGh = await ghAuthToken(lookup);
  if (fromGh) return { token: fromGh, source: 'gh auth token' };
  throw new TrackerError(
    'auth',
    'github: no token: GH_TOKEN and GITHUB_TOKEN are unset and `gh auth token` gave none; set GH_TOKEN to a token with Issues read/write, or run `gh auth login`',
  );
}

/** `github.com` for the public API, else the API URL's host (GitHub Enterprise Server). */
export function ghHostname(apiUrl: string): string {
  const host = new URL(apiUrl).host;
  return host === 'api.github.com' ? 'github.com' : host;
}

function ghAuthToken(lookup: TokenLookup): Promise<string | null> {
  return new Promise((done) => {
    execFile(
      lookup.gh ?? 'gh',
      ['auth', 'token', '--hostname', ghHostname(lookup.apiUrl)],
      { env: lookup.env, timeout: lookup.timeoutMs ?? 5000, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 },
      (error, stdout) => {
        const token = String(stdout).trim();
        done(error || !/^\S+$/.test(token) ? null : token);
      },
    );
  });
}
