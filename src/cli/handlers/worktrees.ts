import { hostname } from 'node:os';
import { relative } from 'node:path';
import { openProject } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import { isTerminal, TERMINAL_STATUSES } from '../../core/events.js';
import { findRepo, listWorktrees, pruneWorktrees } from '../../workspace/index.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface WorktreesOptions {
  dryRun?: boolean;
  force?: boolean;
  json?: boolean;
}

/**
 * `troupe worktrees [list|prune]`: what troupe keeps in the repository (task and fan-out
 * worktrees, their branches, scratch checkouts) and its safe cleanup. The library is
 * src/workspace/; task status comes from the store.
 */
export async function worktrees(what: string, options: WorktreesOptions, io: CommandIo): Promise<number> {
  if (what !== 'list' && what !== 'prune') {
    throw new UsageError(`unknown action ${JSON.stringify(what)}`, { hint: 'use list or prune' });
  }
  const repo = await findRepo(io.cwd);
  if (!repo)
    throw new UsageError('not inside a git repository: troupe keeps worktrees only in git repositories');
  const { statusOf, runningTask } = taskStatuses(io.cwd);
  const rel = (path: string | null) => (path ? relative(repo, path) || '.' : '-');

  if (what === 'list') {
    const rows = (await listWorktrees(repo)).map((w) => ({ ...w, status: statusOf(w.task) }));
    if (options.json) {
      writeJson(io, rows);
      return 0;
    }
    if (rows.length === 0) {
      io.out('no troupe worktrees\n');
      return 0;
    }
    const table = [['TASK', 'STATUS', 'KIND', 'BRANCH', 'AHEAD/BEHIND', 'STATE', 'PATH']];
    for (const r of rows) {
      const state = [
        r.merged ? 'merged' : '',
        r.pushed ? 'pushed' : '',
        r.dirty ? 'dirty' : '',
        r.missing ? 'missing' : '',
      ].filter(Boolean);
      table.push([
        r.agent ? `${r.task} (${r.agent})` : r.task,
        r.status,
        r.kind,
        r.branch ?? '(detached)',
        r.ahead === null ? '-' : `+${r.ahead} -${r.behind}`,
        state.join(',') || 'unmerged',
        rel(r.path),
      ]);
    }
    io.out(formatTable(table));
    return 0;
  }

  const all = await listWorktrees(repo);
  const ended = new Set(
    all.map((w) => w.task).filter((t) => (TERMINAL_STATUSES as readonly string[]).includes(statusOf(t))),
  );
  const actions = await pruneWorktrees(repo, {
    endedTasks: ended,
    runningTask,
    ...(options.dryRun ? { dryRun: true } : {}),
    ...(options.force ? { force: true } : {}),
  });
  if (options.json) {
    writeJson(io, { dryRun: Boolean(options.dryRun), force: Boolean(options.force), actions });
    return 0;
  }
  if (actions.length === 0) io.out('no troupe worktrees\n');
  const verb = options.dryRun ? 'would remove' : 'removed';
  for (const a of actions) {
    const name = `${a.task}${a.agent ? ` (${a.agent})` : ''}`;
    const where = `${rel(a.path)}${a.branch ? ` [${a.branch}]` : ''}`;
    if (a.action === 'keep') {
      io.out(`kept          ${name}  ${where}: ${a.reasons.join('; ')}\n`);
    } else {
      const forced = a.reasons.length ? ` (forced: ${a.reasons.join('; ')})` : '';
      const kept = a.archivedAs ? `; commits kept as tag ${a.archivedAs}` : '';
      io.out(`${verb.padEnd(13)} ${name}  ${where}${forced}${kept}\n`);
    }
  }
  const running = actions.filter((a) => a.running);
  if (running.length > 0) {
    const ids = [...new Set(running.map((a) => a.task))];
    io.out(
      `${running.length} kept because ${ids.length === 1 ? 'its task is' : 'their tasks are'} running, even with --force: wait for ${ids.join(', ')} to end, or \`troupe cancel ${ids[0]}\` first\n`,
    );
  }
  const kept = actions.filter((a) => a.action === 'keep' && !a.running).length;
  if (kept > 0) {
    io.out(
      `${kept} kept; \`troupe worktrees prune --force\` removes them too (unmerged commits are kept as tags troupe/archive/<task>)\n`,
    );
  }
  return 0;
}

/**
 * A task's status from the store (`unknown` when the store does not know it), and why it is
 * running right now: not ended, and its lease held by a live process.
 */
function taskStatuses(cwd: string) {
  const { store } = openProject(cwd);
  const statusOf = (task: string) => store.task(task)?.status ?? 'unknown';
  const runningTask = (task: string): string | null => {
    const status = store.task(task)?.status;
    if (status === undefined || isTerminal(status)) return null;
    const holder = store.leaseHolder(task);
    if (!holder) return null;
    const where = holder.host === hostname() ? '' : ` on ${holder.host}`;
    return `task is running (process ${holder.pid}${where})`;
  };
  return { statusOf, runningTask };
}

function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return `${rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n')}\n`;
}
