import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { parseDuration } from '../../bus/duration.js';
import { parseHandle } from '../../bus/handle.js';
import { resolveRoot } from '../../bus/root.js';
import { NotFoundError, UsageError } from '../../core/errors.js';
import { printableLines } from '../../core/printable.js';
import { type Launcher, type LaunchResult, launch, projectSession, shellQuote } from '../../live/launch.js';
import { applyLaunch, type PreparedLaunch, planLaunch, prepareLaunch } from '../../live/launch-plan.js';
import { isLaunchTrusted, trustLaunch } from '../../live/launch-trust.js';
import { isTroupeLauncher, LAUNCHERS } from '../../live/launcher-preference.js';
import { emulatorSink } from '../../live/notice-sink.js';
import { createSession, listSessions } from '../../live/session-record.js';
import { spawnWake } from '../../live/spawn-wake.js';
import { Tmux } from '../../live/tmux.js';
import { runWake } from '../../live/wake.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { Exit } from '../exit-codes.js';
import { troupeCommandAnywhere } from '../self-command.js';

/** The flags of `launch`, `session` and `wake` (commander camel-cases them). */
export interface LiveFlags {
  json?: boolean;
  session?: string;
  launcher?: string;
  me?: string;
  root?: string;
  pane?: string;
  retry?: string;
  poll?: boolean;
  replace?: boolean;
  detach?: boolean;
  plan?: boolean;
  prepare?: boolean;
  apply?: string | boolean;
}

export async function launchCommand(flags: LiveFlags, io: CommandIo): Promise<number> {
  const launcher = flags.launcher ?? 'auto';
  if (launcher !== 'auto' && !isTroupeLauncher(launcher))
    throw new UsageError(`--launcher must be auto, ${LAUNCHERS.join(' or ')}, not '${launcher}'`);
  if (flags.plan || flags.prepare || flags.apply !== undefined)
    return launchPlanCommand(flags, launcher as Launcher, io);
  if (!flags.json && process.stdin.isTTY && process.stderr.isTTY) {
    const trusted = await confirmLaunchPlan(flags, launcher as Launcher, io);
    if (!trusted) return Exit.actionRequired;
  }
  const result = launch({
    cwd: io.cwd,
    ...(flags.session ? { session: flags.session } : {}),
    launcher: launcher as Launcher,
    tmux: new Tmux(),
    troupe: troupeCommandAnywhere(),
    env: process.env,
    startWake: ({ root, me, pane }) => spawnWake({ root, me, pane, replace: true }),
  });
  if (flags.json) writeJson(io, result);
  else io.out(describeLaunch(result));
  // the printed commands are the operator's to run (AMQ: exit 6)
  return result.launcher === 'commands' ? Exit.actionRequired : Exit.ok;
}

/**
 * AMQ's launch trust, for a person at a terminal: a plan (roster, commands, session, launcher)
 * not confirmed before is shown with its digest, and launches only on yes; the answer is kept
 * outside the worktree (launch-trust.ts). Scripts and `--json` are not asked: they review a plan
 * with `--prepare` and launch it with `--apply`, whose digest check refuses a changed one (exit 6).
 */
async function confirmLaunchPlan(flags: LiveFlags, launcher: Launcher, io: CommandIo): Promise<boolean> {
  const planned = planLaunch({
    cwd: io.cwd,
    ...(flags.session ? { session: flags.session } : {}),
    launcher,
    tmux: new Tmux(),
  });
  const dir = planned.plan.project_dir;
  if (isLaunchTrusted(dir, planned.digest)) return true;
  // the roster's commands are committed text: shown without the escapes that would drive the terminal
  io.err(printableLines(describePlan(planned)));
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  let answer: string;
  try {
    answer = await rl.question(`launch this plan (${planned.digest}) and trust it for ${dir}? [y/N] `);
  } finally {
    rl.close();
  }
  if (!/^y(es)?$/i.test(answer.trim())) {
    io.err('troupe: launch plan not trusted: nothing launched\n');
    return false;
  }
  trustLaunch(dir, planned.digest);
  return true;
}

/** `launch --plan | --prepare | --apply [file]`: AMQ's prepared launch, with its digest and journal. */
function launchPlanCommand(flags: LiveFlags, launcher: Launcher, io: CommandIo): number {
  if (flags.apply !== undefined && (flags.plan || flags.prepare))
    throw new UsageError('--apply carries out a prepared plan: use it without --plan or --prepare');
  if (flags.apply !== undefined && (flags.session || (flags.launcher && flags.launcher !== 'auto')))
    throw new UsageError(
      '--apply takes the session and launcher from the prepared plan: drop --session/--launcher',
    );
  const tmux = new Tmux();
  if (flags.apply === undefined) {
    const options = { cwd: io.cwd, ...(flags.session ? { session: flags.session } : {}), launcher, tmux };
    const out = flags.prepare ? prepareLaunch(options) : planLaunch(options);
    if (flags.json) writeJson(io, out);
    else io.out(describePlan(out));
    return Exit.ok;
  }
  const result = applyLaunch(typeof flags.apply === 'string' ? flags.apply : undefined, {
    cwd: io.cwd,
    tmux,
    troupe: troupeCommandAnywhere(),
    env: process.env,
    startWake: ({ root, me, pane }) => spawnWake({ root, me, pane, replace: true }),
  });
  if (flags.json) writeJson(io, result);
  else {
    io.out(describeLaunch({ ...result, agents: result.applied }));
    if (result.already.length) io.out(`already launched by an earlier apply: ${result.already.join(', ')}\n`);
  }
  return result.launcher === 'commands' && result.applied.some((a) => a.command)
    ? Exit.actionRequired
    : Exit.ok;
}

function describePlan(p: PreparedLaunch & { prepared?: string; journal?: string }): string {
  const lines = [
    `launch plan ${p.digest}`,
    `session ${p.plan.session} (${p.plan.root}), launcher ${p.plan.launcher}`,
  ];
  for (const a of p.plan.agents)
    lines.push(`  ${a.handle.padEnd(12)} ${a.action.padEnd(7)} ${a.command.map(shellQuote).join(' ')}`);
  if (p.prepared)
    lines.push(`prepared: ${p.prepared}`, `journal: ${p.journal}`, 'apply: troupe launch --apply');
  return `${lines.join('\n')}\n`;
}

function describeLaunch(r: Omit<LaunchResult, 'tmux_session'>): string {
  const lines: string[] = [];
  if (r.launcher === 'commands') {
    lines.push(`Paste each command into a terminal of its own (session ${r.session}):`);
    for (const a of r.agents)
      lines.push(a.command ? `\n# ${a.handle}\n${a.command}` : `\n# ${a.handle}: ${a.disposition}`);
    return `${lines.join('\n')}\n`;
  }
  lines.push(`session ${r.session} (${r.root})`);
  for (const a of r.agents) {
    const id = a.conversation_id ? ` conversation ${a.conversation_id}` : '';
    lines.push(`  ${a.handle.padEnd(12)} ${a.disposition.padEnd(8)} ${a.pane ?? ''}${id}`);
  }
  if (r.attach) lines.push(`attach: ${r.attach}`);
  return `${lines.join('\n')}\n`;
}

export async function sessionCreate(name: string, flags: LiveFlags, io: CommandIo): Promise<number> {
  const { config, baseRoot } = projectSession(io.cwd, name);
  if (!existsSync(baseRoot))
    throw new NotFoundError(`${baseRoot} does not exist`, { hint: 'run `troupe bus setup` first' });
  const root = createSession(
    baseRoot,
    name,
    config.agents.map((a) => a.handle),
  );
  if (flags.json) writeJson(io, { session: name, root });
  else io.out(`session ${name}: ${root}\n`);
  return Exit.ok;
}

export async function sessionList(flags: LiveFlags, io: CommandIo): Promise<number> {
  const { baseRoot } = projectSession(io.cwd);
  const sessions = listSessions(baseRoot);
  if (flags.json) writeJson(io, sessions);
  else {
    for (const s of sessions) {
      io.out(`${s.session}  ${s.root}\n`);
      for (const a of s.agents)
        io.out(
          `  ${a.handle.padEnd(12)} ${a.adapter.padEnd(7)} ${a.conversation_id ?? '(not known yet)'}  launches ${a.launches}\n`,
        );
    }
  }
  return Exit.ok;
}

export async function wakeCommand(flags: LiveFlags, io: CommandIo): Promise<number> {
  const raw = flags.me ?? process.env.AM_ME;
  if (!raw) throw new UsageError('--me is required (or set AM_ME)');
  const me = parseHandle(raw, '--me');
  const root = flags.root ? resolve(flags.root) : resolveRoot().root;
  const pane = flags.pane ?? process.env.TMUX_PANE;
  const firstRetryMs = parseDuration(flags.retry ?? '5s', '--retry');
  // outside tmux, a cmux surface or Ghostty terminal that troupe launched the agent in
  const sink = pane ? undefined : emulatorSink(process.env);
  if (flags.detach) {
    if (!pane && !sink) {
      io.err(
        'troupe: wake: not in tmux, cmux or a Ghostty terminal troupe opened, so no notices; check mail with `troupe bus list`\n',
      );
      return Exit.ok;
    }
    const extra = [...(flags.retry ? ['--retry', flags.retry] : []), ...(flags.poll ? ['--poll'] : [])];
    const pid = spawnWake({ root, me, pane, ...(flags.replace ? { replace: true } : {}), extra });
    io.out(`wake for ${me} started (pid ${pid})\n`);
    return Exit.ok;
  }
  const controller = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
    process.once(signal, () => controller.abort());
  const outcome = await runWake({
    root,
    me,
    ...(pane ? { pane } : {}),
    ...(sink ? { sink } : {}),
    tmux: new Tmux(),
    troupe: troupeCommandAnywhere(),
    doorbell: { firstRetryMs },
    ...(flags.poll ? { poll: true } : {}),
    ...(flags.replace ? { replace: true } : {}),
    signal: controller.signal,
    log: (line) => io.out(`${new Date().toISOString()} ${line}\n`),
  });
  if (outcome.end === 'already_running') {
    io.err(`troupe: a wake for ${me} already runs (pid ${outcome.owner?.pid}); one per agent\n`);
  } else io.out(`${new Date().toISOString()} wake for ${me} ended: ${outcome.end}\n`);
  return Exit.ok;
}
