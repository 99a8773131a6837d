import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LiveProject, liveProject, until } from './support/live.js';

// cmux and Ghostty cannot be installed here: stand-ins for `cmux` and `osascript` on PATH record
// every call (argv, one JSON line each) and answer as the documented interfaces do.

const STAND_IN = `#!/usr/bin/env node
const fs = require('node:fs');
const name = require('node:path').basename(process.argv[1]);
const args = process.argv.slice(2);
if (process.env.STAND_IN_DOWN === name) process.exit(1);
// a launch that dies on this agent: the app refused the call
if (process.env.STAND_IN_FAIL_ON && args.join(' ').includes(process.env.STAND_IN_FAIL_ON)) process.exit(3);
fs.appendFileSync(process.env.STAND_IN_LOG, JSON.stringify({ name, args }) + '\\n');
if (name === 'cmux' && args.includes('new-workspace')) console.log(JSON.stringify({ workspace_ref: 'workspace:7' }));
if (name === 'osascript' && args[1] && args[1].includes('get version')) console.log('1.3.1');
else if (name === 'osascript') console.log('TERM-' + fs.readFileSync(process.env.STAND_IN_LOG, 'utf8').split('\\n').length);
`;

interface Launched {
  launcher: string;
  agents: Array<{ handle: string; disposition: string; surface?: string; argv: string[] }>;
}

let project: LiveProject | undefined;
afterEach(() => project?.close());

async function setUp() {
  project = await liveProject();
  const setup = await project.run(['bus', 'setup', '--agents', 'claude,codex', '--yes']);
  expect(setup.code, setup.stderr).toBe(0);
  const bin = mkdtempSync(join(tmpdir(), 'troupe-stand-ins-'));
  for (const name of ['cmux', 'osascript']) {
    writeFileSync(join(bin, name), STAND_IN);
    chmodSync(join(bin, name), 0o755);
  }
  const log = join(bin, 'calls.log');
  const env = { PATH: [bin, project.env.PATH].join(delimiter), STAND_IN_LOG: log };
  const calls = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { name: string; args: string[] })
      : [];
  return { p: project, env, calls };
}

describe('launch --launcher cmux | ghostty', () => {
  it('cmux: pings, opens a workspace for the first agent and splits it for the next, typing the pasted line', async () => {
    const { p, env, calls } = await setUp();
    const r = await p.run(['launch', '--launcher', 'cmux', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Launched;
    expect(out.launcher).toBe('cmux');
    expect(out.agents.map((a) => `${a.handle}:${a.disposition}:${a.surface}`)).toEqual([
      'claude:started:workspace:7',
      'codex:started:workspace:7',
    ]);
    const [ping, first, second, ...rest] = calls();
    expect(rest).toEqual([]);
    expect(ping!.args).toEqual(['ping']);
    expect(first!.args.slice(0, 6)).toEqual([
      '--json',
      'new-workspace',
      '--name',
      expect.stringMatching(/^troupe .* collab$/),
      '--cwd',
      p.dir,
    ]);
    const line = first!.args[first!.args.indexOf('--command') + 1]!;
    expect(line).toMatch(/AM_ME=claude/);
    expect(line).toMatch(/wake --me claude --detach && claude /);
    expect(second!.args.slice(0, 5)).toEqual(['--json', 'new-split', 'right', '--workspace', 'workspace:7']);
    expect(second!.args.at(-1)).toMatch(/AM_ME=codex .* wake --me codex --detach && codex/);
  }, 60_000);

  it('ghostty: one osascript per agent, the second split beside the first terminal; auto picks it inside Ghostty', async () => {
    const { p, env, calls } = await setUp();
    const r = await p.run(['launch', '--json'], { ...env, TERM_PROGRAM: 'ghostty' });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Launched;
    expect(out.launcher).toBe('ghostty');
    const [detect, first, second] = calls();
    expect(detect!.args).toEqual(['-e', 'tell application "Ghostty" to get version']);
    expect(first!.args[1]).toMatch(/new window with configuration cfg/);
    // the terminal's id is exported before the line, so the wake started there can type notices to it
    expect(first!.args[1]).toMatch(
      /input text \("export TROUPE_GHOSTTY_TERMINAL='" & \(id of term\) & "' && " & theLine & return\) to term/,
    );
    expect(first!.args.slice(2)).toEqual([p.dir, expect.stringMatching(/AM_ME=claude/), '', 'right']);
    const firstTerminal = out.agents[0]!.surface!;
    expect(firstTerminal).toMatch(/^TERM-\d+$/);
    expect(second!.args.slice(2)).toEqual([
      p.dir,
      expect.stringMatching(/AM_ME=codex/),
      firstTerminal,
      'right',
    ]);
  }, 60_000);

  it('an apply that dies mid-way is finished by the next apply from its journal, launching no agent twice', async () => {
    const { p, env, calls } = await setUp();
    const prep = await p.run(['launch', '--prepare', '--launcher', 'cmux', '--json'], env);
    expect(prep.code, prep.stderr).toBe(0);
    const journal = (JSON.parse(prep.stdout) as { journal: string }).journal;
    const broken = await p.run(['launch', '--apply'], { ...env, STAND_IN_FAIL_ON: 'AM_ME=codex' });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^troupe: .*cmux/);
    expect(broken.stderr).not.toMatch(/\n\s+at /);
    // the app refused codex: nothing started, so codex is still to do
    expect(JSON.parse(readFileSync(journal, 'utf8')).agents).toEqual({
      claude: 'launched',
      codex: 'pending',
    });
    const opened = (agent: string) =>
      calls().filter((c) => c.args.some((a) => a.includes(`AM_ME=${agent}`))).length;
    expect(opened('claude')).toBe(1);

    // killed between "launching" and "launched": codex may be running, so the next apply stops (fail closed)
    const state = JSON.parse(readFileSync(journal, 'utf8'));
    writeFileSync(journal, JSON.stringify({ ...state, agents: { claude: 'launched', codex: 'launching' } }));
    const unsure = await p.run(['launch', '--apply'], env);
    expect(unsure.code).toBe(6);
    expect(unsure.stderr).toMatch(/^troupe: an earlier apply stopped while launching codex/);
    expect(opened('codex')).toBe(0);
    // the operator checked: codex is not running
    writeFileSync(journal, JSON.stringify(state));

    const finished = await p.run(['launch', '--apply', '--json'], env);
    expect(finished.code, finished.stderr).toBe(0);
    const out = JSON.parse(finished.stdout) as { applied: Array<{ handle: string }>; already: string[] };
    expect(out.already).toEqual(['claude']);
    expect(out.applied.map((a) => a.handle)).toEqual(['codex']);
    expect(opened('claude')).toBe(1);
    expect(opened('codex')).toBe(1);
    expect(JSON.parse(readFileSync(journal, 'utf8')).agents).toEqual({
      claude: 'launched',
      codex: 'launched',
    });
  }, 60_000);

  it('an emulator that does not answer is exit 2 when named, and skipped by auto', async () => {
    const { p, env, calls } = await setUp();
    const down = await p.run(['launch', '--launcher', 'cmux'], { ...env, STAND_IN_DOWN: 'cmux' });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/^troupe: cmux is not available here/);
    expect(calls()).toEqual([]);
    const auto = await p.run(['launch', '--json'], {
      ...env,
      STAND_IN_DOWN: 'cmux',
      CMUX_SURFACE_ID: 'x',
      TROUPE_TMUX_SOCKET: p.socket,
    });
    expect(auto.code, auto.stderr).not.toBe(2);
    expect((JSON.parse(auto.stdout) as Launched).launcher).not.toBe('cmux');
  }, 60_000);
});

describe('wake notices in cmux and Ghostty', () => {
  const sendMail = async (p: LiveProject, subject: string) => {
    const r = await p.run([
      'bus',
      'send',
      '--me',
      'user',
      '--to',
      'claude',
      '--session',
      'collab',
      '--subject',
      subject,
      '--body',
      'x',
    ]);
    expect(r.code, r.stderr).toBe(0);
  };

  it('cmux: the wake started in a surface types each notice into it with cmux send and Enter, backslashes out', async () => {
    const { p, env, calls } = await setUp();
    const root = join(p.dir, '.agent-mail', 'collab');
    const started = await p.run(['wake', '--me', 'claude', '--root', root, '--detach'], {
      ...env,
      CMUX_SURFACE_ID: 'surface:9',
    });
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/^wake for claude started \(pid \d+\)/);
    await until('the wake to watch', () =>
      readFileSync(join(root, 'agents', 'claude', 'extensions', 'troupe', 'wake.log'), 'utf8').includes(
        'notices to cmux surface surface:9',
      ),
    );
    await sendMail(p, 'review \\n rm -rf please');
    const typed = await until('the notice', () => {
      const sends = calls().filter((c) => c.name === 'cmux' && c.args[0] === 'send');
      return sends.length > 0 ? sends : undefined;
    });
    expect(typed[0]!.args.slice(0, 3)).toEqual(['send', '--surface', 'surface:9']);
    expect(typed[0]!.args[3]).toMatch(
      /^troupe: mail for claude from user: "review \/n rm -rf please" — read with: .* bus drain --me claude --include-body$/,
    );
    expect(typed[0]!.args[3]).not.toContain('\\');
    await until('Enter', () =>
      calls().some((c) => c.name === 'cmux' && c.args.join(' ') === 'send-key --surface surface:9 Enter'),
    );
  }, 60_000);

  it('Ghostty: the wake types each notice into the terminal launch named, with input text; outside any, detach says so', async () => {
    const { p, env, calls } = await setUp();
    const root = join(p.dir, '.agent-mail', 'collab');
    const nowhere = await p.run(['wake', '--me', 'claude', '--root', root, '--detach'], env);
    expect(nowhere.code).toBe(0);
    expect(nowhere.stderr).toMatch(/not in tmux, cmux or a Ghostty terminal troupe opened, so no notices/);
    const started = await p.run(['wake', '--me', 'claude', '--root', root, '--detach'], {
      ...env,
      TROUPE_GHOSTTY_TERMINAL: 'TERM-4',
    });
    expect(started.code, started.stderr).toBe(0);
    await until('the wake to watch', () =>
      readFileSync(join(root, 'agents', 'claude', 'extensions', 'troupe', 'wake.log'), 'utf8').includes(
        'notices to Ghostty terminal TERM-4',
      ),
    );
    await sendMail(p, 'ship it');
    const typed = await until('the notice', () => calls().find((c) => c.name === 'osascript'));
    expect(typed.args[1]).toMatch(/input text \(theText & return\) to \(first terminal whose id is theId\)/);
    expect(typed.args.slice(2)).toEqual([
      'TERM-4',
      expect.stringMatching(/^troupe: mail for claude from user: "ship it" — read with: /),
    ]);
  }, 60_000);
});
