import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { KanbanState } from '../../../bus/integration/kanban.js';
import { emitOrchestratorEvent } from '../../../bus/integration/orchestrator.js';
import { SYMPHONY_EVENTS, symphonyEvent } from '../../../bus/integration/symphony.js';
import { patchWorkflow } from '../../../bus/integration/symphony-init.js';
import { quote } from '../../../bus/shell-context.js';
import { NotFoundError, UsageError } from '../../../core/errors.js';
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
