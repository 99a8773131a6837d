import { formatDuration, formatTokens } from '../app/task-view.js';
import { eventTable, handleEvent } from '../core/event-table.js';
import { pieceOfActivation, type TaskState } from '../engine/fold/task-state.js';
import type { RunObserver } from '../engine/ports.js';

/**
 * What a foreground run shows while it works: a line per stage (agent, status, elapsed,
 * tokens) and the output as it streams. Colour only on a terminal, and never with NO_COLOR.
 */
export function liveOutput(stream: NodeJS.WriteStream = process.stderr): RunObserver {
  const color = stream.isTTY === true && !process.env.NO_COLOR;
  const paint = (code: number, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  let midLine = false;
  // on a terminal, a wait for a provider's reset counts down on a line of its own, rewritten each
  // second until anything else is shown (then it is wiped and the output goes on below)
  let countdown: NodeJS.Timeout | null = null;
  const stopCountdown = () => {
    if (!countdown) return;
    clearInterval(countdown);
    countdown = null;
    stream.write('\r\x1b[2K');
  };
  const startCountdown = (provider: string, until: string) => {
    if (stream.isTTY !== true) return;
    stopCountdown();
    const tick = () => {
      const ms = Date.parse(until) - Date.now();
      if (ms <= 0) return stopCountdown();
      stream.write(`\r\x1b[2K${paint(2, `  ⏳ ${provider} reopens in ${formatDuration(ms)}`)}`);
    };
    countdown = setInterval(tick, 1000);
    countdown.unref();
    tick();
  };
  const line = (text: string) => {
    stopCountdown();
    if (midLine) stream.write('\n');
    midLine = false;
    stream.write(`${text}\n`);
  };
  return {
    onText(_stage, _agent, text) {
      stopCountdown();
      stream.write(paint(2, text));
      midLine = !text.endsWith('\n');
    },
    onEvent(event, state) {
      handleEvent(LIVE_LINES, event, { state, line, paint, startCountdown });
    },
  };
}

/** What a handler of the live output may do: print a line, colour text, count down to a reset. */
interface LiveScreen {
  state: TaskState;
  line: (text: string) => void;
  paint: (code: number, text: string) => string;
  startCountdown: (provider: string, until: string) => void;
}

/** A line for each event a person follows; the rest, listed, shows nothing. */
const LIVE_LINES = eventTable<void, LiveScreen>()(
  {
    task_created: (event, { line, paint }) => line(paint(1, `troupe ${event.taskId} · ${event.pipeline}`)),
    entry_routed: (event, { line, paint }) =>
      line(
        event.fallback
          ? paint(
              33,
              `⇢ the router named no agent ("${firstLine(event.answer)}"); starting with ${event.agent}`,
            )
          : `⇢ routed to ${event.agent}`,
      ),
    stage_started: (event, { line, paint, state }) =>
      line(
        paint(
          36,
          `▶ [${event.stage}] ${event.agent}${pieceLabel(state, event.activation)}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`,
        ),
      ),
    stage_completed: (event, { line, paint }) =>
      line(
        paint(
          32,
          `✓ [${event.stage}] ${event.agent}  ${formatDuration(event.durationMs)}  ${formatTokens(event.usage)}`,
        ),
      ),
    stage_attempt_failed: (event, { line, paint }) => {
      const took = event.durationMs === undefined ? '' : `  ${formatDuration(event.durationMs)}`;
      line(
        paint(31, `✗ [${event.stage}] ${event.agent}${took}  ${event.error.kind}: ${event.error.message}`),
      );
      if (event.error.hint) line(`  hint: ${event.error.hint}`);
    },
    stage_warning: (event, { line, paint }) =>
      line(paint(33, `⚠ [${event.stage}] ${event.agent}: ${event.message}`)),
    budget_warning: (event, { line, paint }) =>
      line(
        paint(
          33,
          `⚠ budget: ${event.unit === 'usd' ? `$${event.used.toFixed(2)} of $${event.limit}` : `${event.used} of ${event.limit} tokens`} used (80 %)`,
        ),
      ),
    rate_limited: (event, { line, paint, startCountdown }) => {
      if (!event.retryAt) {
        line(
          paint(
            33,
            `⏳ [${event.stage}] ${event.agent}: ${event.provider} is limited; waiting until ${event.resetAt.slice(0, 19).replace('T', ' ')} UTC (${untilText(event.resetAt)}), then it carries on`,
          ),
        );
        startCountdown(event.provider, event.resetAt);
        return;
      }
      line(
        paint(
          33,
          `⏳ [${event.stage}] ${event.agent}: ${event.provider} is limited until ${event.resetAt.slice(0, 19).replace('T', ' ')} UTC; moving to a fallback`,
        ),
      );
    },
    stage_interrupted: (event, { line, paint }) =>
      line(paint(33, `↻ [${event.stage}] interrupted earlier; running it again`)),
    gate_decided: (event, { line, paint }) =>
      line(
        paint(
          event.decision === 'approved' ? 32 : 33,
          `  gate (${event.by}): ${event.decision}${event.reason ? ` — ${firstLine(event.reason)}` : ''}`,
        ),
      ),
    gate_waiting: (event, { line, paint }) =>
      line(
        paint(
          35,
          `⏸ [${event.stage}] ${event.agent} waits for approval: troupe approve ${event.taskId}  |  troupe reject ${event.taskId} -r "why"`,
        ),
      ),
    human_input_requested: (event, { line, paint }) =>
      line(
        paint(
          35,
          `? ${event.agent} asks: ${event.questions.join(' / ')}\n  answer with: troupe human-input ${event.taskId} "your answer"`,
        ),
      ),
    human_input_given: (event, { line }) => line(`  answered (${event.by})`),
    handoff: (event, { line }) => {
      if (event.targets.length) line(`  → ${event.targets.map((t) => t.agent).join(', ')}`);
    },
    join: (event, { line }) => line(`  ⇉ ${event.agent} gets ${event.activations.length} branches`),
    plan_expanded: (event, { line, paint }) => {
      line(paint(36, `⊞ ${event.agent}'s plan (round ${event.round}): ${event.pieces.length} pieces`));
      for (const piece of event.pieces) {
        const after = piece.depends_on.length ? `  after ${piece.depends_on.join(', ')}` : '';
        line(`  · ${piece.id}: ${firstLine(piece.goal)}${after}`);
      }
      for (const warning of event.warnings) line(paint(33, `  ⚠ ${warning}`));
    },
    piece_started: (event, { line }) => line(`  ⊞ piece ${event.piece} starts`),
    piece_failed: (event, { line, paint }) =>
      line(paint(31, `  ⊞ piece ${event.piece} failed: ${firstLine(event.reason)}`)),
    piece_outside_paths: (event, { line, paint }) =>
      line(paint(33, `  ⚠ piece ${event.piece} wrote outside its paths: ${event.files.join(', ')}`)),
    plan_replanned: (event, { line, paint }) =>
      line(paint(33, `⊞ re-planning (round ${event.round + 1}) after ${event.failed.join(', ')} failed`)),
    workspace_ready: (event, { line, state }) =>
      line(
        `⎇ working in ${event.path} on ${event.branch}${state.isolation ? ` (default: ${state.isolation.reason})` : ''}`,
      ),
    workspace_merged: (event, { line }) => line(`⎇ merged into ${event.into} (${event.how})`),
    workspace_conflict: (event, { line, paint }) =>
      line(paint(33, `⎇ not merged into ${event.into}: conflicts in ${event.files.join(', ')}`)),
    workspace_merge_failed: (event, { line, paint }) =>
      line(paint(33, `⎇ not merged: ${event.reason}; merge later with troupe merge ${event.taskId}`)),
    task_completed: (_event, { line, paint, state }) =>
      line(
        paint(32, `✔ completed ${state.id} in ${state.stages.length} stages · ${formatTokens(state.usage)}`),
      ),
    task_failed: (event, { line, paint, state }) => {
      line(paint(31, `✘ failed ${state.id}: ${event.reason}`));
      if (event.hint) line(`  hint: ${event.hint}`);
    },
    task_cancelled: (event, { line, paint, state }) =>
      line(paint(33, `✘ cancelled ${state.id}: ${event.reason}`)),
  },
  [
    'task_resumed',
    'task_restarted',
    'stage_output', // streamed through onText
    'mailbox_asked',
    'mailbox_replied',
    'mail_failed',
    'session_started',
    'session_round_ended',
    'session_ended',
    'chunk_added',
    'chunk_updated',
    'chunk_removed',
    'isolation_chosen',
    'workspace_committed',
    'workspace_removed',
    'branch_workspace_ready',
    'branches_merged',
    'branch_conflict',
    'conflict_handled',
    'decision',
    'verified',
    'task_sized',
    'spec_recorded',
    'output_rejected',
    'task_parked',
  ],
);

/** ` · piece <id>` for a stage that works on a plan's piece. */
function pieceLabel(state: TaskState, activation: string): string {
  const piece = pieceOfActivation(state, activation);
  return piece ? ` · piece ${piece.id}` : '';
}

function untilText(iso: string): string {
  const ms = Date.parse(iso) - Date.now();
  if (ms <= 0) return 'now';
  const hours = ms / 3_600_000;
  if (hours > 24) return `in ${Math.round(hours)} h — more than a day; the task waits`;
  return `in ${formatDuration(ms)}`;
}

function firstLine(text: string): string {
  const first = text.split('\n')[0] ?? '';
  return first.length > 160 ? `${first.slice(0, 157)}...` : first;
}
