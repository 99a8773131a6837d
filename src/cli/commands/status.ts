import type { Command } from 'commander';
import { action } from '../action.js';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description("a task's stages: agent, status, gate verdict, duration, tokens")
    .argument('<task>', 'task id')
    .option('--json', 'print the task as JSON')
    .action(
      action(async (taskId: string, options: { json?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { printJson } = await import('../options.js');
        const {
          taskJson,
          formatDuration,
          formatTokens,
          mailFailureLines,
          ownerGoneHint,
          sizeAndSpecLines,
          taskOwner,
          taskOwnHint,
          workspaceLines,
        } = await import('../../app/task-view.js');
        const { mailboxWaits, waitingFor } = await import('../../engine/fold/task-state.js');
        const { deadLetters, parkedTasks } = await import('../../app/queue-config.js');
        const { parkedOf } = await import('../../app/parked.js');
        const project = openProject();
        const state = project.tasks.state(taskId);
        const parked = parkedOf(state, await parkedTasks(project));
        // one state: a parked task is parked, even when only the queue could record it
        const status = parked ? 'parked' : state.status;
        const deadLetter = parked
          ? undefined
          : (await deadLetters(project))?.find((d) => d.taskId === taskId);
        const owner = taskOwner(project.store, taskId, status);
        const { noWorkerReason, readWorkersIfWaiting } = await import('../../app/worker-wait.js');
        const noWorker = noWorkerReason(
          state,
          owner,
          await readWorkersIfWaiting(project, [{ status, owner }]),
        );
        if (options.json) {
          printJson({
            ...taskJson(state, owner, noWorker),
            status,
            parked: parked ? { reason: parked.reason, failures: parked.failures, at: parked.at } : null,
            ...(deadLetter ? { deadLetter } : {}),
          });
          return 0;
        }
        const out: string[] = [`${state.id}  ${status}  ${state.pipeline}  "${state.input}"`];
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
        out.push(`  usage: ${formatTokens(state.usage)}`);
        for (const w of project.store.closedProviders(new Date())) {
          out.push(`  provider ${w.provider} is closed until ${w.resetAt} (rate or usage limit)`);
        }
        process.stdout.write(`${out.join('\n')}\n`);
        return 0;
      }),
    );
}
