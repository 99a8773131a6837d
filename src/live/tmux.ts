import { execFileSync } from 'node:child_process';

/**
 * The tmux server troupe talks to: the one of `$TMUX` (inside tmux), else the default one, or a
 * named socket (`tmux -L <name>`) from TROUPE_TMUX_SOCKET — for a private server per test run,
 * or to keep troupe's sessions apart from the user's.
 */
export class Tmux {
  constructor(
    readonly socket: string | undefined = process.env.TROUPE_TMUX_SOCKET || undefined,
    private readonly bin = 'tmux',
  ) {}

  run(args: string[]): string {
    const full = this.socket ? ['-L', this.socket, ...args] : args;
    return execFileSync(this.bin, full, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trimEnd();
  }

  /** Whether tmux is installed at all. */
  available(): boolean {
    try {
      execFileSync(this.bin, ['-V'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  hasSession(name: string): boolean {
    try {
      this.run(['has-session', '-t', `=${name}`]);
      return true;
    } catch {
      return false;
    }
  }

  /** The server's pid, which tells a live pane id from the same id on a server started since. */
  serverPid(): string | undefined {
    try {
      return this.run(['display-message', '-p', '#{pid}']);
    } catch {
      return undefined;
    }
  }

  /** Whether a pane is there, on this very server. */
  paneAlive(pane: string, serverPid?: string): boolean {
    try {
      const [id, pid] = this.run(['display-message', '-p', '-t', pane, '#{pane_id} #{pid}']).split(' ');
      return id === pane && (serverPid === undefined || pid === serverPid);
    } catch {
      return false;
    }
  }

  /** A new detached session whose first pane runs `argv`; returns that pane's id. */
  newSession(name: string, window: string, cwd: string, env: Record<string, string>, argv: string[]): string {
    return this.run([
      'new-session',
      '-d',
      '-P',
      '-F',
      '#{pane_id}',
      '-s',
      name,
      '-n',
      window,
      '-x',
      '240',
      '-y',
      '60',
      '-c',
      cwd,
      ...envArgs(env),
      '--',
      ...argv,
    ]);
  }

  newWindow(
    target: string | undefined,
    window: string,
    cwd: string,
    env: Record<string, string>,
    argv: string[],
  ): string {
    return this.run([
      'new-window',
      '-d',
      '-P',
      '-F',
      '#{pane_id}',
      ...(target ? ['-t', `${target}:`] : []),
      '-n',
      window,
      '-c',
      cwd,
      ...envArgs(env),
      '--',
      ...argv,
    ]);
  }

  /** A pane beside (`columns`) or below (`rows`) another one. */
  splitPane(
    target: string,
    direction: 'columns' | 'rows',
    cwd: string,
    env: Record<string, string>,
    argv: string[],
  ): string {
    return this.run([
      'split-window',
      '-d',
      direction === 'columns' ? '-h' : '-v',
      '-P',
      '-F',
      '#{pane_id}',
      '-t',
      target,
      '-c',
      cwd,
      ...envArgs(env),
      '--',
      ...argv,
    ]);
  }

  evenLayout(pane: string, direction: 'columns' | 'rows'): void {
    this.run(['select-layout', '-t', pane, direction === 'columns' ? 'even-horizontal' : 'even-vertical']);
  }

  /**
   * Types `text` into a pane and presses Enter: keys go through the tmux server, not the
   * terminal's input queue, so this works where the kernel disables TIOCSTI.
   */
  type(pane: string, text: string): void {
    this.run(['send-keys', '-t', pane, '-l', text]);
    this.run(['send-keys', '-t', pane, 'Enter']);
  }

  capture(pane: string): string {
    return this.run(['capture-pane', '-p', '-J', '-S', '-', '-t', pane]);
  }
}

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
}
