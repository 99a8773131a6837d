import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpRepo } from './git-repo.js';
import { repoRoot, troupe } from './troupe.js';

/**
 * A git project with the fake interactive CLIs first on PATH and a private tmux server
 * (`tmux -L <unique>`), for tests of `troupe bus setup`, `launch` and `wake`.
 */
export interface LiveProject {
  dir: string;
  env: Record<string, string>;
  socket: string;
  log: string;
  run(args: string[], extra?: Record<string, string>): ReturnType<typeof troupe>;
  tmux(args: string[]): string;
  /** The fake CLIs' events (start / input / ran), in order. */
  events(): Array<{
    cli: string;
    event: string;
    argv?: string[];
    line?: string;
    conversation?: string | null;
  }>;
  /** Kills the tmux server and any wake still holding a lock. */
  close(): void;
}

let serial = 0;

export async function liveProject(extraEnv: Record<string, string> = {}): Promise<LiveProject> {
  const dir = await tmpRepo();
  const home = join(dir, '..', 'home');
  mkdirSync(home, { recursive: true });
  const socket = `troupe-test-${process.pid}-${++serial}`;
  const log = join(dir, '..', 'fake-cli.log');
  const env: Record<string, string> = {
    PATH: [join(repoRoot, 'test', 'fixtures', 'fake-live-clis'), process.env.PATH ?? ''].join(delimiter),
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    FAKE_LIVE_LOG: log,
    TROUPE_TMUX_SOCKET: socket,
    // so `troupe doctor`'s probes answer from the environment
    ANTHROPIC_API_KEY: 'fake',
    CODEX_API_KEY: 'fake',
    GEMINI_API_KEY: 'fake',
    TMUX: '',
    TMUX_PANE: '',
    // vitest runs under npx: the agents should be told to run this troupe, not `npx troupe`
    npm_command: '',
    ...extraEnv,
  };
  const tmux = (args: string[]) =>
    execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    dir,
    env,
    socket,
    log,
    run: (args, extra = {}) => troupe(dir, args, { ...env, ...extra }),
    tmux,
    events: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [],
    close() {
      try {
        tmux(['kill-server']);
      } catch {
        // already gone
      }
      for (const pid of wakePids(join(dir, '.agent-mail'))) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // gone
        }
      }
    },
  };
}

/** Pids in the wake locks under a root (its sessions included). */
export function wakePids(root: string): number[] {
  const out: number[] = [];
  const walk = (d: string, depth: number) => {
    if (depth > 6 || !existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), depth + 1);
      else if (e.name === 'wake.lock') {
        try {
          out.push(JSON.parse(readFileSync(join(d, e.name), 'utf8')).pid);
        } catch {
          // torn
        }
      }
    }
  };
  walk(root, 0);
  return out;
}

/** Polls `check` until it returns something truthy, or fails after `ms` with `what`. */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  ms = 20_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
