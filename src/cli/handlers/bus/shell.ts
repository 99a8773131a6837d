import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ContextMismatchError } from '../../../bus/errors.js';
import { parseHandle } from '../../../bus/handle.js';
import { pinMismatch, type ResolvedRoot, type RootSource, resolveRoot } from '../../../bus/root.js';
import {
  contextVariables,
  quote,
  renderShell,
  rootIdentity,
  SHELLS,
  type Shell,
} from '../../../bus/shell-context.js';
import { traceMessage } from '../../../bus/trace.js';
import { messageOf, NotFoundError, UsageError } from '../../../core/errors.js';
import { printable } from '../../../core/printable.js';
import { packageRoot, packageVersion } from '../../../package-root.js';
import type { CommandIo } from '../../command-io.js';
import { Exit, exitCodeFor } from '../../exit-codes.js';
import { troupeCommand } from '../../self-command.js';
import { type BusFlags, printJson } from './context.js';
import { me as meOf, openFromFlags } from './open.js';

/** AMQ's names for where a root came from (`amq env --json`'s `root_source`). */
const AMQ_SOURCE: Record<RootSource, string> = {
  flag: 'flag',
  env: 'env',
  amqrc: 'project_amqrc',
  global: 'global_env',
  home_amqrc: 'global_amqrc',
  detected: 'auto_detect',
};

function shellOf(flags: BusFlags, fallback: Shell): Shell {
  const shell = (flags.shell ?? fallback).trim().toLowerCase();
  if (!(SHELLS as readonly string[]).includes(shell))
    throw new UsageError(`invalid shell '${shell}' (supported: ${SHELLS.join(', ')})`);
  return shell as Shell;
}

function validSession(name: string): string {
  if (!/^[a-z0-9_-]+$/.test(name)) throw new UsageError(`invalid session '${name}'`);
  return name;
}

/**
 * The root `env` pins: `--session NAME` (a session of the pinned base, else of the base root this
 * directory finds; it must exist), `--root`, else the root found as every command finds it.
 */
function envRoot(flags: BusFlags): ResolvedRoot {
  if (flags.session && flags.root) throw new UsageError('--session and --root are exclusive');
  if (!flags.session) {
    const resolved = resolveRoot(flags.root ? { root: flags.root } : {});
    const mismatch = flags.root ? undefined : pinMismatch(resolved);
    if (mismatch)
      throw new ContextMismatchError(`refusing env: ${mismatch}`, {
        hint: 'run `troupe bus env --session <name>` or `--root <dir>` to pin this shell again',
      });
    return resolved;
  }
  const session = validSession(flags.session);
  const base = process.env.AM_BASE_ROOT || resolveRoot().baseRoot;
  const root = join(base, session);
  if (!isDir(join(root, 'agents')))
    throw new NotFoundError(`no session '${session}' in ${base}`, {
      hint: `create it with \`troupe session create ${session}\``,
    });
  return { root, baseRoot: base, session, source: 'flag', warnings: [] };
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `bus env`: the shell lines (or JSON) that pin this terminal to one root, AMQ's `amq env`. */
export async function env(flags: BusFlags, io: CommandIo): Promise<number> {
  const exclusive = [
    flags.json && '--json',
    flags.export && '--export',
    flags.sessionName && '--session-name',
  ];
  if (exclusive.filter(Boolean).length > 1)
    throw new UsageError(`${exclusive.filter(Boolean).join(' and ')} are mutually exclusive`);
  const shell = shellOf(flags, 'sh');
  const resolved = envRoot(flags);
  const raw = flags.me ?? process.env.AM_ME;
  const me = raw ? parseHandle(raw, '--me') : undefined;
  const session = resolved.session ?? '';
  if (flags.sessionName) {
    if (session) io.out(`${session}\n`);
    return Exit.ok;
  }
  if (flags.json) {
    printJson(io, {
      schema_version: 1,
      troupe_version: packageVersion(),
      root: resolved.root,
      root_id: rootIdentity(resolved.root),
      base_root: resolved.baseRoot,
      base_root_id: rootIdentity(resolved.baseRoot),
      session_name: session,
      in_session: session !== '',
      me: me ?? '',
      project: resolved.amqrc?.project ?? '',
      root_source: AMQ_SOURCE[resolved.source],
      peers: resolved.amqrc?.peers ?? {},
      shell,
      ...(flags.wake ? { wake: true } : {}),
    });
    return Exit.ok;
  }
  let text = renderShell(
    contextVariables({ root: resolved.root, baseRoot: resolved.baseRoot, session, ...(me ? { me } : {}) }),
    shell,
  );
  if (flags.wake) {
    if (!me) throw new UsageError('--wake needs --me (or AM_ME)');
    text += `${troupeCommand()} wake --me ${me} --detach\n`;
  }
  io.out(text);
  if (flags.export)
    io.err(
      `troupe: this terminal is now pinned to ${resolved.root} (${session ? `session ${session}` : 'no session'}); one terminal, one session\n`,
    );
  return Exit.ok;
}

const ALIASES = [
  ['claudeAlias', 'amc', 'claude'],
  ['codexAlias', 'amx', 'codex'],
  ['geminiAlias', 'amg', 'gemini'],
] as const;

/** How an rc file or a hook runs this troupe: `troupe` when that is it on PATH, else node and the absolute bin. */
export function rcTroupe(): string {
  if (troupeCommand() === 'troupe') return 'troupe';
  return `${quote(process.execPath)} ${quote(join(packageRoot(), 'bin', 'troupe.js'))}`;
}

/**
 * `bus shell-setup`: AMQ's co-op shortcuts (`amc`, `amx`, and `amg` for gemini), each
 * `<alias> [session] [cli args]`: pin this shell to the session (default: the pinned one, else
 * collab), start the agent's wake when in tmux, and run the CLI — with no permission-bypass flag.
 */
export async function shellSetup(flags: BusFlags, io: CommandIo): Promise<number> {
  const detected = basename(process.env.SHELL ?? '');
  const shell = shellOf(flags, detected === 'zsh' || detected === 'fish' ? detected : 'bash');
  if (shell === 'sh') throw new UsageError("invalid shell 'sh' (supported: bash, zsh, fish)");
  const troupe = rcTroupe();
  const lines = ['# troupe co-op aliases (added by troupe bus shell-setup)'];
  for (const [flag, fallback, cli] of ALIASES) {
    const name = flags[flag] ?? fallback;
    if (!/^[A-Za-z0-9_-]+$/.test(name))
      throw new UsageError(`invalid alias name '${name}' (allowed: letters, digits, -, _)`);
    lines.push(shell === 'fish' ? fishFunction(name, cli, troupe) : posixFunction(name, cli, troupe));
  }
  io.out(`${lines.join('\n')}\n`);
  return Exit.ok;
}

function posixFunction(name: string, cli: string, troupe: string): string {
  return `function ${name}() {
  local session="\${AM_SESSION:-collab}"
  if [ -n "\${1:-}" ] && [ "\${1#-}" = "$1" ]; then session="$1"; shift; fi
  local context
  context="$(${troupe} bus env --session "$session" --me ${cli})" && eval "$context" || return
  if [ -n "\${TMUX_PANE:-}" ]; then ${troupe} wake --me ${cli} --detach; fi
  ${cli} "$@"
}`;
}

function fishFunction(name: string, cli: string, troupe: string): string {
  return `function ${name}
  set -l session collab
  if set -q AM_SESSION; and test -n "$AM_SESSION"; set session $AM_SESSION; end
  if test (count $argv) -gt 0; and not string match -q -- '-*' $argv[1]
    set session $argv[1]
    set -e argv[1]
  end
  ${troupe} bus env --shell fish --session $session --me ${cli} | source; or return
  if set -q TMUX_PANE; and test -n "$TMUX_PANE"; ${troupe} wake --me ${cli} --detach; end
  ${cli} $argv
end`;
}

/** `bus route explain`: where a send would go now, and the exact command, without sending (AMQ's). */
export async function routeExplain(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus, resolved } = openFromFlags({ ...flags, root: flags.fromRoot ?? flags.root }, io, 'read');
  const from = meOf(flags);
  const to = [flags.to!];
  const base = {
    schema_version: 1,
    source_root: resolved.root,
    source_project: resolved.amqrc?.project ?? '',
    source_session: resolved.session ?? '',
  };
  const argv = [
    ...troupeCommand().split(' '),
    'bus',
    'send',
    '--root',
    resolved.root,
    '--me',
    from,
    '--to',
    flags.to!,
    ...(flags.project ? ['--project', flags.project] : []),
    ...(flags.session ? ['--session', flags.session] : []),
  ];
  let out: Record<string, unknown>;
  let code: number = Exit.ok;
  try {
    const route = bus.explainRoute({
      from,
      to,
      ...(flags.project ? { project: flags.project } : {}),
      ...(flags.session ? { session: flags.session } : {}),
    });
    out = {
      ...base,
      routable: true,
      argv,
      display_command: argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : quote(a))).join(' '),
      delivery_root: route.root,
      target_project: route.crossProject ? route.project : base.source_project,
      target_session: route.session ?? '',
      thread: route.thread,
      cross_session: route.crossSession,
      cross_project: route.crossProject,
    };
  } catch (error) {
    code = exitCodeFor(error);
    out = { ...base, routable: false, argv: [], display_command: '', error: messageOf(error) };
  }
  if (flags.json) printJson(io, out);
  else if (out.routable) {
    io.out(
      `${from} → ${to[0]}: delivered into ${out.delivery_root}${out.target_session ? ` (session ${out.target_session})` : ''}${out.cross_project ? ` of project ${out.target_project}` : ''}\nthread ${out.thread}\n${out.display_command}\n`,
    );
  } else io.err(`troupe: not routable: ${out.error}\n`);
  return code;
}

/** `bus trace <id>`: the message's copies, route, delivery, DLQ, receipts and replies; exit 3 if none. */
export async function trace(id: string, flags: BusFlags, io: CommandIo): Promise<number> {
  const { resolved } = openFromFlags(flags, io, 'read');
  const t = traceMessage(resolved.root, id, troupeCommand());
  if (flags.json) printJson(io, t);
  else {
    io.out(`trace ${t.message_id} in ${t.root}: ${t.status}\n`);
    for (const [name, leg] of Object.entries(t.legs)) {
      io.out(`${name}: ${leg.status}${leg.evidence.length ? ` (${leg.evidence.length})` : ''}\n`);
      for (const e of leg.evidence) io.out(`  ${printable(describe(e))}\n`);
      if (leg.detail) io.out(`  ${leg.detail}\n`);
      if (leg.next_step && leg.status !== 'evidence') io.out(`  next: ${leg.next_step}\n`);
    }
  }
  return t.status === 'not_found' ? Exit.notFound : Exit.ok;
}

function describe(e: Record<string, unknown>): string {
  return Object.entries(e)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
}
