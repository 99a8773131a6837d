import type { Command } from 'commander';
import { action } from '../action.js';

/**
 * `troupe worktrees [list|prune]`: what troupe keeps in the repository (task and fan-out
 * worktrees, their branches, scratch checkouts) and its safe cleanup. The library is
 * src/workspace/; task status comes from the store.
 */
export function registerWorktrees(program: Command): void {
  program
    .command('worktrees')
    .description(
      "list troupe's git worktrees, or prune those of ended tasks whose commits are merged or pushed",
    )
    .argument('[action]', 'list | prune', 'list')
    .option('--dry-run', 'prune: say what would be removed, change nothing')
    .option(
      '--force',
      'prune: also remove unsafe ones (unmerged commits are kept as tags troupe/archive/<task>)',
    )
    .option('--json', 'print JSON')
    .action(
      action(async (what: string, options: { dryRun?: boolean; force?: boolean; json?: boolean }) => {
        const { UsageError } = await import('../../core/errors.js');
        if (what !== 'list' && what !== 'prune') {
          throw new UsageError(`unknown action ${JSON.stringify(what)}`, { hint: 'use list or prune' });
        }
        const { relative } = await import('node:path');
        const { findRepo, listWorktrees, pruneWorktrees } = await import('../../workspace/index.js');
        const { printJson } = await import('../options.js');
        const repo = await findRepo(process.cwd());
        if (!repo)
          throw new UsageError(
            'not inside a git repository: troupe keeps worktrees only in git repositories',
          );
        const { statusOf, runningTask } = await taskStatuses();
        const rel = (path: string | null) => (path ? relative(repo, path) || '.' : '-');

        if (what === 'list') {
          const rows = (await listWorktrees(repo)).map((w) => ({ ...w, status: statusOf(w.task) }));
          if (options.json) {
            printJson(rows);
            return 0;
          }
          if (rows.length === 0) {
            process.stdout.write('no troupe worktrees\n');
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
          process.stdout.write(formatTable(table));
          return 0;
        }

        const { TERMINAL_STATUSES } = await import('../../core/events.js');
        const all = await listWorktrees(repo);
        const ended = new Set(
          all
            .map((w) => w.task)
            .filter((t) => (TERMINAL_STATUSES as readonly string[]).includes(statusOf(t))),
        );
        const actions = await pruneWorktrees(repo, {
          endedTasks: ended,
          runningTask,
          ...(options.dryRun ? { dryRun: true } : {}),
          ...(options.force ? { force: true } : {}),
        });
        if (options.json) {
          printJson({ dryRun: Boolean(options.dryRun), force: Boolean(options.force), actions });
          return 0;
        }
        if (actions.length === 0) process.stdout.write('no troupe worktrees\n');
        const verb = options.dryRun ? 'would remove' : 'removed';
        for (const a of actions) {
          const name = `${a.task}${a.agent ? ` (${a.agent})` : ''}`;
          const where = `${rel(a.path)}${a.branch ? ` [${a.branch}]` : ''}`;
          if (a.action === 'keep') {
            process.stdout.write(`kept          ${name}  ${where}: ${a.reasons.join('; ')}\n`);
          } else {
            const forced = a.reasons.length ? ` (forced: ${a.reasons.join('; ')})` : '';
            const kept = a.archivedAs ? `; commits kept as tag ${a.archivedAs}` : '';
            process.stdout.write(`${verb.padEnd(13)} ${name}  ${where}${forced}${kept}\n`);
          }
        }
        const running = actions.filter((a) => a.running);
        if (running.length > 0) {
          const ids = [...new Set(running.map((a) => a.task))];
          process.stdout.write(
            `${running.length} kept because ${ids.length === 1 ? 'its task is' : 'their tasks are'} running, even with --force: wait for ${ids.join(', ')} to end, or \`troupe cancel ${ids[0]}\` first\n`,
          );
        }
        const kept = actions.filter((a) => a.action === 'keep' && !a.running).length;
        if (kept > 0) {
          process.stdout.write(
            `${kept} kept; \`troupe worktrees prune --force\` removes them too (unmerged commits are kept as tags troupe/archive/<task>)\n`,
          );
        }
        return 0;
      }),
    );
}

/**
 * A task's status from the store (`unknown` when the store does not know it), and why it is
 * running right now: not ended, and its lease held by a live process.
 */
async function taskStatuses() {
  const { hostname } = await import('node:os');
  const { openProject } = await import('../../app/project.js');
  const { isTerminal } = await import('../../core/events.js');
  const { store } = openProject();
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
