import { verdictCommands } from '../core/verdict-commands.js';
import { type StageRecord, type TaskState, waitingFor } from '../engine/fold/task-state.js';
import { markdownFence, markdownInline, markdownLink } from './markdown-text.js';
import { formatCost, formatDuration } from './task-view.js';

/**
 * The text of troupe's one progress comment on the issue a task works on (`troupe watch` posts it
 * and replaces it as the task goes on): Markdown, short, decided from the folded state alone.
 * Everything the tracker, an agent or an error wrote is escaped (app/markdown-text.ts).
 */

/**
 * How every progress comment starts: `<!-- troupe:progress T-1A2B3C -->`, a line the trackers do
 * not show; troupe finds its own comment on an issue (and the task it tells of) by it.
 */
export const PROGRESS_MARKER = '<!-- troupe:progress';

/** The task a comment's body tells the progress of, when it is one of troupe's progress comments. */
export function progressCommentTask(body: string): string | null {
  return /^<!-- troupe:progress (T-[0-9A-Za-z]+) -->\n/.exec(body)?.[1] ?? null;
}

export interface IssueProgressOptions {
  /** The pull request troupe opened for the task, when it opened one. */
  pullRequest?: string | null;
  /** Now (ISO): a running stage shows how long it has run; without it, only that it runs. */
  now?: string;
  /** At most this many stages are listed, the latest (default 10). */
  maxStages?: number;
}

/** The progress comment of the task: status, stages, what runs now, cost, what waits for a person, the PR, the failure. */
export function issueProgress(state: TaskState, options: IssueProgressOptions = {}): string {
  const id = state.id;
  const stages = state.stages.filter((s): s is StageRecord => Boolean(s));
  const shown = stages.slice(-(options.maxStages ?? 10));
  const out = [
    `${PROGRESS_MARKER} ${id} -->`,
    `**troupe** task \`${id}\`: **${state.status.replace(/_/g, ' ')}**`,
    '',
  ];
  if (shown.length > 0) {
    if (shown.length < stages.length)
      out.push(`${stages.length - shown.length} earlier stages not shown`, '');
    out.push('| # | agent | outcome | time |', '|---|---|---|---|');
    for (const s of shown)
      out.push(`| ${s.n} | ${markdownInline(s.agent, 40)} | ${outcome(s)} | ${stageTime(s, options.now)} |`);
    out.push('');
  }
  const running = stages.filter((s) => s.status === 'running' && !s.gateWaiting);
  for (const s of running) out.push(`Now: stage ${s.n}, ${markdownInline(s.agent, 40)}`);
  const cost = formatCost(state.usage, true);
  if (cost) out.push(`Cost: ${cost}`);
  out.push(...waitLines(state));
  const pr = options.pullRequest ? markdownLink('pull request', options.pullRequest) : null;
  if (pr) out.push(`Pull request: ${pr}`);
  if (state.status === 'failed' && state.failure)
    out.push('Failed:', '', markdownFence(state.failure.reason));
  if (state.status === 'cancelled' && state.cancelReason)
    out.push(`Cancelled: ${markdownInline(state.cancelReason)}`);
  if (state.status === 'parked' && state.parked)
    out.push(`Parked after ${state.parked.failures} failed runs; \`troupe resume ${id}\` runs it again.`);
  return `${out.join('\n').trimEnd()}\n`;
}

/** A stage's outcome: its status, the gate's decision, or its error's kind. */
function outcome(stage: StageRecord): string {
  if (stage.gateWaiting) return 'awaiting approval';
  if (stage.status === 'failed' && stage.error) return `failed (${markdownInline(stage.error.kind, 40)})`;
  return stage.gate ? `${stage.status}, ${stage.gate.decision}` : stage.status;
}

function stageTime(stage: StageRecord, now: string | undefined): string {
  if (stage.status !== 'running') return formatDuration(stage.durationMs);
  return now ? formatDuration(Math.max(0, Date.parse(now) - Date.parse(stage.startedAt))) : '';
}

/** What waits for a person, and the command that answers it (only the task's id is in it). */
function waitLines(state: TaskState): string[] {
  const waiting = waitingFor(state);
  if (!waiting) return [];
  const agent = markdownInline(waiting.agent, 40);
  if (waiting.kind === 'gate') {
    const { approve, reject } = verdictCommands(state.id);
    return [`Waiting for approval of ${agent}'s output: \`${approve}\` or \`${reject}\``];
  }
  return [
    `${agent} asks:`,
    ...waiting.questions.map((q) => `- ${markdownInline(q, 300)}`),
    '',
    `Answer with \`troupe human-input ${state.id} "<answer>"\``,
  ];
}
