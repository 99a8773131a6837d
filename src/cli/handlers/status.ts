import { parkedOf } from '../../app/parked.js';
import { pieceDiffs } from '../../app/piece-diffs.js';
import { planLines } from '../../app/plan-lines.js';
import { planView } from '../../app/plan-view.js';
import { openProject } from '../../app/project.js';
import { deadLetters, parkedTasks } from '../../app/queue-config.js';
import {
  formatCost,
  formatDuration,
  formatTokens,
  issueLines,
  mailFailureLines,
  ownerGoneHint,
  sizeAndSpecLines,
  taskJson,
  taskOwner,
  taskOwnHint,
  workspaceLines,
} from '../../app/task-view.js';
import { noWorkerReason, readWorkersIfWaiting } from '../../app/worker-wait.js';
import { mailboxWaits, waitingFor } from '../../engine/fold/task-state.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface StatusOptions {
  json?: boolean;
}

/** `troupe status <task>`: a task's stages, its plan as a graph, what it waits for, and why it stopped. */
export async function showStatus(taskId: string, options: StatusOptions, io: CommandIo): Promise<number> {
  const project = openProject(io.cwd);
  const state = project.tasks.state(taskId);
  const parked = parkedOf(state, await parkedTasks(project));
  // one state: a parked task is parked, even when only the queue could record it
  const status = parked ? 'parked' : state.status;
  const deadLetter = parked ? undefined : (await deadLetters(project))?.find((d) => d.taskId === taskId);
  const owner = taskOwner(project.store, taskId, status);
  const noWorker = noWorkerReason(state, owner, await readWorkersIfWaiting(project, [{ status, owner }]));
  const diffs = await pieceDiffs(state);
  if (options.json) {
    writeJson(io, {
      ...taskJson(state, owner, noWorker, diffs),
      status,
      parked: parked ? { reason: parked.reason, failures: parked.failures, at: parked.at } : null,
      ...(deadLetter ? { deadLetter } : {}),
    });
    return 0;
  }
  const out: string[] = [`${state.id}  ${status}  ${state.pipeline}  "${state.input}"`];
  out.push(...issueLines(state));
  out.push(...workspaceLines(state));
  out.push(...sizeAndSpecLines(state));
  const onBus = mailboxWaits(state);
  for (const s of state.stages) {
    const gate = s.gate
      ? `  gate: ${s.gate.decision}${s.gate.reason ? ` (${s.gate.reason.split('\n')[0]})` : ''}`
      : '';
    const status = s.gateWaiting
      ? 'awaiting_gate'
      : onBus.some((w) => w.stage === s.n)
        ? 'waiting'
        : s.status;
    const route = state.routes[s.n];
    const tier = route ? `  tier: ${route.tier} (${route.model ?? route.runtime})` : '';
    out.push(
      `  [${s.n}] ${s.agent.padEnd(16)} ${status.padEnd(13)} ${formatDuration(s.durationMs).padStart(7)}  ${formatTokens(s.usage)}${tier}${gate}`,
    );
    for (const warning of s.warnings) out.push(`      ⚠ ${warning.split('\n')[0]}`);
    if (s.error) {
      out.push(`      ${s.error.kind}: ${s.error.message.split('\n').slice(0, 3).join(' ')}`);
      if (s.error.hint) out.push(`      hint: ${s.error.hint}`);
    }
  }
  out.push(...planLines(planView(state, diffs)));
  if (state.failure) out.push(`  error: ${state.failure.reason}`);
  const hint = taskOwnHint(state);
  if (hint) out.push(`  hint: ${hint}`);
  const gone = ownerGoneHint(taskId, owner);
  if (gone) out.push(`  ${gone}`);
  if (noWorker) out.push(`  not taken: ${noWorker}`);
  const waiting = waitingFor(state);
  if (waiting)
    out.push(
      `  waiting: ${waiting.kind} at ${waiting.agent}${waiting.questions.length ? ` — ${waiting.questions.join(' / ')}` : ''}`,
    );
  for (const w of onBus) {
    const until = w.deadline ? `, times out at ${w.deadline}` : '';
    out.push(
      `  waiting for ${w.handle} on the bus (${w.agent}, stage ${w.stage}, thread ${w.thread}${until})`,
    );
  }
  out.push(...mailFailureLines(state));
  if (parked)
    out.push(
      `  parked: ${parked.reason} (\`troupe resume ${taskId}\` to run it again)`,
      `      its runs failed ${parked.failures} times; parked ${parked.at.slice(0, 19)}`,
    );
  if (deadLetter)
    out.push(
      `  dead-lettered ${deadLetter.at.slice(0, 19)}: ${deadLetter.error} (\`troupe resume ${taskId}\` queues it again)`,
    );
  const cost = formatCost(state.usage, true);
  out.push(`  usage: ${formatTokens(state.usage)}${cost ? ` ${cost}` : ''}`);
  for (const w of project.store.closedProviders(new Date())) {
    out.push(`  provider ${w.provider} is closed until ${w.resetAt} (rate or usage limit)`);
  }
  io.out(`${out.join('\n')}\n`);
  return 0;
}
