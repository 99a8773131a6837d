import type { EventOf } from '../../core/events.js';
import { type AgentNode, findNode } from '../../core/pipeline.js';
import { agentMailbox, taskThread } from '../../core/task-mail.js';
import type { MailboxWait, TaskState } from '../fold/task-state.js';
import type { StepOf } from '../plan/plan.js';
import { retryAfter } from '../plan/retry-policy.js';
import type { Workplace } from './branch-workspaces.js';
import type { RunContext } from './run-context.js';

/**
 * A mailbox agent's stage (runtime mailbox): no process runs it. Its prompt is mailed to the
 * agent's `handle` on the task's thread, the same way a human gate is mailed to `user`, and the
 * wait is recorded; the reply is taken off the bus by whichever process looks next
 * (TaskService.takeMailReplies: a foreground run's poll, `troupe resume`, the server), and the
 * planner then finishes the stage with it (stage-run.ts, finishMailboxStage).
 */

/**
 * Whether the stage goes to the bus: a mailbox agent, unless the task's script has replies for
 * it (`troupe test` stays offline).
 */
export function mailsStage(state: Readonly<TaskState>, node: AgentNode): boolean {
  return node.runtime === 'mailbox' && !state.script?.agents[node.id];
}

/** What a mailbox agent's reply is counted as: nothing measured, no cost. */
export const MAILBOX_USAGE = { input_tokens: 0, output_tokens: 0, unknown: true } as const;

export function mailStage(
  run: RunContext,
  step: StepOf<'start_stage'>,
  node: AgentNode,
  prompt: string,
  place: Workplace,
): void {
  const handle = node.handle!;
  const thread = taskThread(run.taskId);
  const seconds = node.timeout ?? run.state.timeouts.mailbox ?? null;
  const deadline = seconds === null ? null : new Date(Date.now() + seconds * 1000).toISOString();
  run.events.record([
    {
      type: 'mailbox_asked',
      stage: step.stage,
      activation: step.activation,
      agent: node.id,
      handle,
      thread,
      deadline,
    },
  ]);
  const reply = replyCommand(handle, node.id, run.taskId);
  const body = [
    prompt.trimEnd(),
    '',
    '---',
    `You are troupe agent \`${node.id}\` in task ${run.taskId} (stage ${step.stage}), working in ${place.cwd}.`,
    "Reply on this thread: the whole body of your reply is the stage's output.",
    `  ${reply}`,
  ];
  if (deadline) body.push(`The stage times out at ${deadline}.`);
  const mail = {
    to: handle,
    kind: 'question' as const,
    subject: `${node.id}: stage ${step.stage} of ${run.taskId} is yours`,
  };
  run.events.mailAfterFlush(mail, () =>
    run.ports.mail?.askPerson({
      ...mail,
      taskId: run.taskId,
      agent: node.id,
      body: body.join('\n'),
      labels: ['troupe', 'troupe:stage'],
      context: {
        troupe: {
          task: run.taskId,
          agent: node.id,
          stage: step.stage,
          attempt: step.attempt,
          cwd: place.cwd,
          reply,
          ...(deadline ? { deadline } : {}),
        },
      },
    }),
  );
}

/** The command the recipient answers with (`troupe bus reply --id <id>` works as well). */
export function replyCommand(handle: string, agent: string, taskId: string): string {
  return `troupe bus send --me ${handle} --to ${agentMailbox(agent)} --thread ${taskThread(taskId)} --kind answer --body @reply.md`;
}

/**
 * A mailbox stage whose `timeout:` has passed without a reply: the usual timeout failure, retried
 * (a new message) or failing the task by retry-policy.ts, as a runtime's timeout would.
 */
export function mailboxTimedOut(
  state: Readonly<TaskState>,
  wait: { activation: string; agent: string } & MailboxWait,
  now: Date,
): EventOf<'stage_attempt_failed'> {
  const node = findNode(state.definition, wait.agent);
  const record = state.stages[wait.stage - 1];
  const attempt = record?.attempt ?? 1;
  const decision = retryAfter(node?.type === 'agent' ? node : { retry: null }, 'timeout', attempt);
  const retryAt =
    decision.retry && decision.delayMs > 0 ? new Date(now.getTime() + decision.delayMs).toISOString() : null;
  const waited = Math.max(0, now.getTime() - Date.parse(wait.askedAt));
  return {
    type: 'stage_attempt_failed',
    stage: wait.stage,
    activation: wait.activation,
    agent: wait.agent,
    attempt,
    error: {
      kind: 'timeout',
      message: `timed out after ${Math.round(waited / 1000)}s: no reply from ${wait.handle} on the bus`,
    },
    partialOutput: '',
    durationMs: record ? Math.max(0, now.getTime() - Date.parse(record.startedAt)) : waited,
    ...(retryAt ? { retryAt } : {}),
    meta: { error_kind: 'timeout' },
  };
}
