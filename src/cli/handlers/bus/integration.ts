import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDuration } from '../../../bus/duration.js';
import { KanbanState } from '../../../bus/integration/kanban.js';
import { KANBAN_URL, runKanbanBridge } from '../../../bus/integration/kanban-bridge.js';
import { emitOrchestratorEvent } from '../../../bus/integration/orchestrator.js';
import { SYMPHONY_EVENTS, symphonyEvent } from '../../../bus/integration/symphony.js';
import { patchWorkflow } from '../../../bus/integration/symphony-init.js';
import { quote } from '../../../bus/shell-context.js';
import { NotFoundError, StateError, UsageError } from '../../../core/errors.js';
import { printable } from '../../../core/printable.js';
import type { CommandIo } from '../../command-io.js';
import { Exit } from '../../exit-codes.js';
import { type BusFlags, printJson, warn } from './context.js';
import { me, openFromFlags } from './open.js';
import { rcTroupe } from './shell.js';

/** `troupe bus integration symphony|kanban …`: orchestrator events as AMQ integration messages. */

export interface IntegrationFlags extends BusFlags {
  event?: string;
  workspace?: string;
  identifier?: string;
  workflow?: string;
  check?: boolean;
  url?: string;
  workspaceId?: string;
  reconnectDelay?: string;
}

/**
 * `troupe bus integration kanban bridge --me codex`: Kanban's runtime WebSocket, each notification
 * mailed to `--me`, until stopped. On Node 20 it runs itself again with --experimental-websocket.
 */
export async function kanbanBridge(flags: IntegrationFlags, io: CommandIo): Promise<number> {
  const handle = me(flags);
  const url = flags.url ?? KANBAN_URL;
  if (!/^wss?:\/\//.test(url)) throw new UsageError(`--url must be a ws:// or wss:// URL, not '${url}'`);
  const reconnectMs = parseDuration(flags.reconnectDelay ?? '2s', '--reconnect-delay');
  if (reconnectMs <= 0) throw new UsageError('--reconnect-delay must be more than 0');
  const { bus } = openFromFlags(flags, io);
  if (typeof globalThis.WebSocket === 'undefined') {
    if (process.env.TROUPE_WS_FLAG) throw new StateError('this Node has no WebSocket: use Node 22 or later');
    const child = spawn(process.execPath, ['--experimental-websocket', ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, TROUPE_WS_FLAG: '1', NODE_NO_WARNINGS: '1' },
    });
    // a stop sent to this process is the bridge's
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
      process.on(signal, () => child.kill(signal));
    return new Promise((done) => child.on('exit', (code) => done(code ?? Exit.failed)));
  }
  const controller = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
    process.once(signal, () => {
      controller.abort();
      // a server that never answers the close handshake would hold the process: 1 s, then go
      setTimeout(() => process.exit(Exit.ok), 1000).unref();
    });
  io.err(`troupe: kanban bridge for ${handle}: reading ${url}\n`);
  await runKanbanBridge({
    url,
    ...(flags.workspaceId ? { workspaceId: flags.workspaceId } : {}),
    reconnectMs,
    signal: controller.signal,
    notify: (note) => {
      const sent = emitOrchestratorEvent(bus, handle, note);
      if (flags.json)
        io.out(`${JSON.stringify({ id: sent.id, subject: note.subject, thread: sent.thread })}\n`);
      else io.out(`${sent.id}  ${printable(note.subject)}\n`);
    },
    log: (line) => io.err(`troupe: ${printable(line)}\n`),
  });
  return Exit.ok;
}

/**
 * `troupe bus integration symphony init --me codex [--root R]`: WORKFLOW.md's four hooks each run
 * `troupe bus integration symphony emit` (between AMQ's managed markers; `|| true`, so a hook
 * never fails a Symphony run). `--check` only says whether they are there.
 */
export async function symphonyInit(flags: IntegrationFlags, io: CommandIo): Promise<number> {
  const handle = me(flags);
  const path = resolve(io.cwd, flags.workflow ?? 'WORKFLOW.md');
  if (!existsSync(path))
    throw new NotFoundError(`${path} not found`, { hint: 'run it where WORKFLOW.md is, or pass --workflow' });
  const root = flags.root ? resolve(io.cwd, flags.root) : undefined;
  const troupe = rcTroupe();
  const line = (event: string) =>
    `${troupe} bus integration symphony emit --event ${event} --me ${handle}${root ? ` --root ${quote(root)}` : ''} || true`;
  const { text, result } = patchWorkflow(readFileSync(path, 'utf8'), path, line, {
    ...(flags.check ? { check: true } : {}),
    ...(flags.force ? { force: true } : {}),
  });
  if (text !== undefined) writeFileSync(path, text);
  if (flags.json) printJson(io, result);
  else if (result.check_only)
    io.out(`${path}: ${result.hooks_found ? 'managed hooks present' : 'managed hooks missing'}\n`);
  else if (result.already_ok) io.out(`${path}: managed hooks already present (--force rewrites them)\n`);
  else
    io.out(
      `${path}: managed hooks ${result.updated ? 'rewritten' : 'added'} (${SYMPHONY_EVENTS.join(', ')})\n`,
    );
  return Exit.ok;
}

/** A Symphony hook: `troupe bus integration symphony emit --event after_run --me codex`. */
export async function symphonyEmit(flags: IntegrationFlags, io: CommandIo): Promise<number> {
  if (!flags.event)
    throw new UsageError('--event is required (after_create, before_run, after_run, before_remove)');
  const event = symphonyEvent({
    event: flags.event,
    workspace: flags.workspace ?? io.cwd,
    ...(flags.identifier ? { identifier: flags.identifier } : {}),
  });
  const handle = me(flags);
  const sent = emitOrchestratorEvent(openFromFlags(flags, io).bus, handle, event);
  if (flags.json)
    printJson(io, {
      event: event.event,
      me: handle,
      thread: sent.thread,
      id: sent.id,
      workspace: event.workspace,
    });
  else io.out(`${sent.id}  ${event.subject}\n`);
  return Exit.ok;
}

/**
 * Cline Kanban's runtime messages, one JSON object per line on stdin (the frames its WebSocket
 * sends): each notification they make is mailed to `--me`.
 */
export async function kanbanEmit(flags: IntegrationFlags, io: CommandIo): Promise<number> {
  if (process.stdin.isTTY) throw new UsageError('pipe Kanban runtime messages (JSON lines) into stdin');
  const handle = me(flags);
  const { bus } = openFromFlags(flags, io);
  const state = new KanbanState();
  const sent: Array<{ id: string; subject: string; thread: string }> = [];
  for (const [i, line] of readFileSync(0, 'utf8').split('\n').entries()) {
    if (!line.trim()) continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      warn(io, `stdin line ${i + 1}: not JSON, skipped`);
      continue;
    }
    for (const note of state.apply(message)) {
      const result = emitOrchestratorEvent(bus, handle, note);
      sent.push({ id: result.id, subject: note.subject, thread: result.thread });
    }
  }
  if (flags.json) printJson(io, sent);
  else for (const s of sent) io.out(`${s.id}  ${s.subject}\n`);
  return Exit.ok;
}
