import { resolve } from 'node:path';
import { openProject } from '../../app/project.js';
import { describeWatch, openWatchContext } from '../../app/watch/watch-context.js';
import { watchLoop } from '../../app/watch/watch-loop.js';
import { type PollResult, pollOnce } from '../../app/watch/watch-poll.js';
import { UsageError } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import { loadScript } from '../../runtimes/script.js';
import type { CommandIo } from '../command-io.js';
import { Exit } from '../exit-codes.js';

export interface WatchOptions {
  once?: boolean;
  dryRun?: boolean;
  workflow?: string;
  script?: string;
  json?: boolean;
}

/** `troupe watch`: docs/trackers.md, "troupe watch". Exit 0 once stopped (SIGINT/SIGTERM) or after --once. */
export async function watch(options: WatchOptions, io: CommandIo): Promise<number> {
  if (options.dryRun && !options.once) throw new UsageError('--dry-run goes with --once');
  const project = openProject(io.cwd);
  const ctx = await openWatchContext(project, {
    ...(options.workflow ? { workflow: options.workflow } : {}),
    script: options.script ? loadScript(resolve(io.cwd, options.script)) : null,
    warn: (line) => io.err(`${line}\n`),
  });
  // the long-running loop tells what changed: an issue's reason is printed again only when it changes
  const told = options.once ? null : new Map<string, string>();
  const report = (result: PollResult) => printPoll(result, options.json === true, io, told);
  if (options.dryRun) {
    report(await pollOnce(ctx, { dryRun: true }));
    return Exit.ok;
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (!options.once) io.err(`troupe watch: ${describeWatch(ctx)}\n`);
    await watchLoop(ctx, { once: options.once === true, signal: stop.signal, onPoll: report });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return Exit.ok;
}

function printPoll(result: PollResult, json: boolean, io: CommandIo, told: Map<string, string> | null): void {
  const { started } = result;
  const selection = told
    ? {
        ...result.selection,
        skipped: result.selection.skipped.filter((s) => told.get(s.issue.id) !== s.reason),
      }
    : result.selection;
  for (const s of selection.skipped) told?.set(s.issue.id, s.reason);
  for (const s of started) told?.delete(s.issue.id);
  if (told && selection.start.length === 0 && selection.skipped.length === 0) return;
  const taskOf = (id: string) => started.find((s) => s.issue.id === id)?.taskId ?? null;
  if (json) {
    io.out(
      `${JSON.stringify({
        start: selection.start.map((s) => ({
          id: s.issue.id,
          identifier: s.issue.identifier,
          title: s.issue.title,
          pipeline: s.pipeline,
          retry: s.retryOf,
          task: taskOf(s.issue.id),
        })),
        skipped: selection.skipped.map((s) => ({
          id: s.issue.id,
          identifier: s.issue.identifier,
          reason: s.reason,
        })),
      })}\n`,
    );
    return;
  }
  // issue text is someone else's: nothing in it reaches the terminal as control characters
  for (const s of selection.start) {
    const task = taskOf(s.issue.id);
    io.out(
      `${task ? `started ${task}` : 'would start'}  ${printable(s.issue.identifier)}  ${s.pipeline}  ${printable(JSON.stringify(s.issue.title))}\n`,
    );
  }
  for (const s of selection.skipped)
    io.out(`skipped  ${printable(s.issue.identifier)}  ${printable(s.reason)}\n`);
}
