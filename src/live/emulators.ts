import { execFileSync } from 'node:child_process';

/**
 * The terminal emulators AMQ launches into besides tmux, driven through their documented control
 * interfaces. Each agent gets a terminal of its own, and into it troupe types the very line the
 * `commands` launcher prints (cd, the bus env, the wake, the CLI), so the three launchers start
 * an agent identically. Nothing here can be run on this CI (macOS apps): tests put stand-ins for
 * `cmux` and `osascript` on PATH that record their calls.
 *
 * cmux (https://cmux.dev/docs/api; manaflow-ai/cmux skills/cmux-workspace/references/commands.md):
 *   detect   `cmux ping`
 *   first    `cmux --json new-workspace --name <title> --cwd <dir> --command <line>`
 *            (--command starts the terminal's shell and types the line plus Enter into it);
 *            the new workspace's ref is read from the JSON (`workspace_ref`, `workspace`, `ref`, `id`)
 *   others   `cmux --json new-split right|down --workspace <ref> --command <line>`
 * Ghostty >= 1.3 (AppleScript, https://ghostty.org/docs/features/applescript, Ghostty.sdef):
 *   detect   `osascript -e 'tell application "Ghostty" to get version'`
 *   each     `osascript -e <GHOSTTY_SCRIPT> <dir> <line> <terminal id to split, or "">`, which runs
 *            `new surface configuration` (initial working directory), `new window with
 *            configuration` for the first agent, `split <terminal> direction right|down` for the
 *            others, then `input text` of the line and a return, and prints the terminal's id.
 *            The line is prefixed with `export TROUPE_GHOSTTY_TERMINAL=<id>`: Ghostty exports no
 *            terminal id of its own, and the wake started in it needs one to type notices to.
 *
 * Wake notices (notice-sink.ts) reach an agent the same way:
 *   cmux     `cmux send --surface <CMUX_SURFACE_ID> <text>`, then `cmux send-key --surface <id> Enter`
 *            (cmux sets CMUX_SURFACE_ID in every terminal it opens)
 *   ghostty  `osascript -e <GHOSTTY_INPUT> <terminal id> <text>`: `input text` and a return
 */
export type EmulatorName = 'cmux' | 'ghostty';

export interface OpenTerminal {
  title: string;
  cwd: string;
  /** The shell line to type into the new terminal. */
  line: string;
  /** The first agent's terminal (cmux: workspace ref; ghostty: terminal id), to split beside. */
  beside?: string;
  direction: 'columns' | 'rows';
}

export interface Emulator {
  readonly name: EmulatorName;
  available(): boolean;
  /** Opens a terminal running the line; returns its id (what `beside` takes for the next one). */
  open(input: OpenTerminal): string;
}

const GHOSTTY_SCRIPT = `on run argv
  set theDir to item 1 of argv
  set theLine to item 2 of argv
  set besideId to item 3 of argv
  set theDirection to item 4 of argv
  tell application "Ghostty"
    set cfg to new surface configuration
    set initial working directory of cfg to theDir
    if besideId is "" then
      set win to new window with configuration cfg
      set term to focused terminal of selected tab of win
    else if theDirection is "down" then
      set term to split (first terminal whose id is besideId) direction down
    else
      set term to split (first terminal whose id is besideId) direction right
    end if
    input text ("export TROUPE_GHOSTTY_TERMINAL='" & (id of term) & "' && " & theLine & return) to term
    return id of term
  end tell
end run`;

const GHOSTTY_INPUT = `on run argv
  set theId to item 1 of argv
  set theText to item 2 of argv
  tell application "Ghostty"
    input text (theText & return) to (first terminal whose id is theId)
  end tell
end run`;

/**
 * Types one notice line into the agent's cmux surface. cmux's `send` reads backslash escapes
 * (`\n` is Enter), so the text goes without any: a mail subject could otherwise submit a line
 * of its own to the agent.
 */
export function cmuxType(surface: string, text: string, env: NodeJS.ProcessEnv = process.env): void {
  run('cmux', ['send', '--surface', surface, text.replaceAll('\\', '/')], env);
  run('cmux', ['send-key', '--surface', surface, 'Enter'], env);
}

/** Types one notice line, and a return, into the agent's Ghostty terminal (`input text` is literal). */
export function ghosttyType(terminal: string, text: string, env: NodeJS.ProcessEnv = process.env): void {
  run('osascript', ['-e', GHOSTTY_INPUT, terminal, text], env);
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(bin, args, { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function succeeds(bin: string, args: string[], env: NodeJS.ProcessEnv): boolean {
  try {
    run(bin, args, env);
    return true;
  } catch {
    return false;
  }
}

/** The workspace ref of `cmux --json new-workspace`'s answer. */
function workspaceRef(output: string): string {
  try {
    const json = JSON.parse(output) as Record<string, unknown>;
    const data = (json.result ?? json.data ?? json) as Record<string, unknown>;
    for (const key of ['workspace_ref', 'workspace', 'ref', 'workspace_id', 'id']) {
      const v = data[key];
      if (typeof v === 'string' && v !== '') return v;
    }
  } catch {
    // not JSON: look for a ref in the text
  }
  const ref = /workspace:\d+/.exec(output)?.[0];
  if (ref) return ref;
  throw new Error(`cmux new-workspace answered no workspace: ${output.slice(0, 200)}`);
}

export function cmux(env: NodeJS.ProcessEnv = process.env): Emulator {
  return {
    name: 'cmux',
    available: () => succeeds('cmux', ['ping'], env),
    open({ title, cwd, line, beside, direction }) {
      if (beside === undefined)
        return workspaceRef(
          run('cmux', ['--json', 'new-workspace', '--name', title, '--cwd', cwd, '--command', line], env),
        );
      const side = direction === 'rows' ? 'down' : 'right';
      run('cmux', ['--json', 'new-split', side, '--workspace', beside, '--command', line], env);
      return beside;
    },
  };
}

export function ghostty(env: NodeJS.ProcessEnv = process.env): Emulator {
  return {
    name: 'ghostty',
    available: () => succeeds('osascript', ['-e', 'tell application "Ghostty" to get version'], env),
    open({ cwd, line, beside, direction }) {
      const side = direction === 'rows' ? 'down' : 'right';
      return run('osascript', ['-e', GHOSTTY_SCRIPT, cwd, line, beside ?? '', side], env);
    },
  };
}

export function emulator(name: EmulatorName, env: NodeJS.ProcessEnv = process.env): Emulator {
  return name === 'cmux' ? cmux(env) : ghostty(env);
}
