import { formatDuration, formatTokens } from '../app/task-view.js';
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
      switch (event.type) {
        case 'task_created':
          return line(paint(1, `troupe ${event.taskId} · ${event.pipeline}`));
        case 'entry_routed':
          return line(
            event.fallback
              ? paint(
                  33,
                  `⇢ the router named no agent ("${firstLine(event.answer)}"); starting with ${event.agent}`,
                )
              : `⇢ routed to ${event.agent}`,
          );
        case 'stage_started':
          return line(
            paint(
              36,
              `▶ [${event.stage}] ${event.agent}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`,
            ),
          );
        case 'stage_completed':
          return line(
            paint(
              32,
              `✓ [${event.stage}] ${event.agent}  ${formatDuration(event.durationMs)}  ${formatTokens(event.usage)}`,
            ),
          );
        case 'stage_attempt_failed': {
          const took = event.durationMs === undefined ? '' : `  ${formatDuration(event.durationMs)}`;
          line(
            paint(
              31,
              `✗ [${event.stage}] ${event.agent}${took}  ${event.error.kind}: ${event.error.message}`,
            ),
          );
          return event.error.hint ? line(`  hint: ${event.error.hint}`) : undefined;
        }
        case 'stage_warning':
          return line(paint(33, `⚠ [${event.stage}] ${event.agent}: ${event.message}`));
        case 'budget_warning':
          return line(
            paint(
              33,
              `⚠ budget: ${event.unit === 'usd' ? `$${event.used.toFixed(2)} of $${event.limit}` : `${event.used} of ${event.limit} tokens`} used (80 %)`,
            ),
          );
        case 'rate_limited':
          if (!event.retryAt) {
            line(
              paint(
                33,
                `⏳ [${event.stage}] ${event.agent}: ${event.provider} is limited; waiting until ${event.resetAt.slice(0, 19).replace('T', ' ')} UTC (${untilText(event.resetAt)}), then it carries on`,
              ),
            );
            return startCountdown(event.provider, event.resetAt);
          }
          return line(
            paint(
              33,
              `⏳ [${event.stage}] ${event.agent}: ${event.provider} is limited until ${event.resetAt.slice(0, 19).replace('T', ' ')} UTC; moving to a fallback`,
            ),
          );
        case 'stage_interrupted':
          return line(paint(33, `↻ [${event.stage}] interrupted earlier; running it again`));
        case 'gate_decided':
          return line(
            paint(
              event.decision === 'approved' ? 32 : 33,
              `  gate (${event.by}): ${event.decision}${event.reason ? ` — ${firstLine(event.reason)}` : ''}`,
            ),
          );
        case 'gate_waiting':
          return line(
            paint(
              35,
              `⏸ [${event.stage}] ${event.agent} waits for approval: troupe approve ${event.taskId}  |  troupe reject ${event.taskId} -r "why"`,
            ),
          );
        case 'human_input_requested':
          return line(
            paint(
              35,
              `? ${event.agent} asks: ${event.questions.join(' / ')}\n  answer with: troupe human-input ${event.taskId} "your answer"`,
            ),
          );
        case 'human_input_given':
          return line(`  answered (${event.by})`);
        case 'handoff':
          return event.targets.length
            ? line(`  → ${event.targets.map((t) => t.agent).join(', ')}`)
            : undefined;
        case 'join':
          return line(`  ⇉ ${event.agent} gets ${event.activations.length} branches`);
        case 'workspace_ready':
          return line(
            `⎇ working in ${event.path} on ${event.branch}${state.isolation ? ` (default: ${state.isolation.reason})` : ''}`,
          );
        case 'workspace_merged':
          return line(`⎇ merged into ${event.into} (${event.how})`);
        case 'workspace_conflict':
          return line(paint(33, `⎇ not merged into ${event.into}: conflicts in ${event.files.join(', ')}`));
        case 'workspace_merge_failed':
          return line(
            paint(33, `⎇ not merged: ${event.reason}; merge later with troupe merge ${event.taskId}`),
          );
        case 'task_completed':
          return line(
            paint(
              32,
              `✔ completed ${state.id} in ${state.stages.length} stages · ${formatTokens(state.usage)}`,
            ),
          );
        case 'task_failed':
          line(paint(31, `✘ failed ${state.id}: ${event.reason}`));
          return event.hint ? line(`  hint: ${event.hint}`) : undefined;
        case 'task_cancelled':
          return line(paint(33, `✘ cancelled ${state.id}: ${event.reason}`));
        default:
          return;
      }
    },
  };
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
