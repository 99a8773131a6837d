import { PERSON_MAILBOX } from '../../core/task-mail.js';
import { verdictCommands } from '../../core/verdict-commands.js';
import { parseVerdict } from '../../pipeline/lang/human-verdict.js';
import type { StepOf } from '../plan/plan.js';
import type { RunContext } from './run-context.js';

/**
 * The steps that wait for a person: a question, and a human gate. An answer the task already has
 * (its script's `human:` entry) is taken at once; otherwise the wait is recorded and the person
 * is told by mail once it is in the store.
 */

export function askHuman(run: RunContext, step: StepOf<'ask_human'>): void {
  const answer = nextAnswer(run, step.agent);
  const requested = {
    type: 'human_input_requested' as const,
    activation: step.activation,
    agent: step.agent,
    stage: step.stage,
    mode: step.mode,
    questions: step.questions,
  };
  if (answer !== undefined) {
    run.events.record([
      requested,
      { type: 'human_input_given', activation: step.activation, answer, by: 'script' },
    ]);
    return;
  }
  run.events.record([requested]);
  const mail = {
    to: PERSON_MAILBOX,
    kind: 'question' as const,
    subject: `${step.agent} asks (${run.taskId})`,
  };
  run.events.mailAfterFlush(mail, () =>
    run.ports.mail?.askPerson({
      ...mail,
      taskId: run.taskId,
      agent: step.agent,
      body: `${step.questions.map((q) => `- ${q}`).join('\n')}\n\nReply on this thread with your answer.`,
    }),
  );
}

export function awaitGate(run: RunContext, step: StepOf<'await_gate'>): void {
  const answer = nextAnswer(run, step.agent);
  if (answer === undefined) {
    run.events.record([{ type: 'gate_waiting', stage: step.stage, agent: step.agent }]);
    const output = run.state.stages[step.stage - 1]?.output ?? '';
    const mail = {
      to: PERSON_MAILBOX,
      kind: 'review_request' as const,
      subject: `approve ${step.agent}'s output? (${run.taskId}, stage ${step.stage})`,
    };
    run.events.mailAfterFlush(mail, () =>
      run.ports.mail?.askPerson({
        ...mail,
        taskId: run.taskId,
        agent: step.agent,
        body: `${output}\n\n---\n${verdictHow(run)}`,
      }),
    );
    return;
  }
  // a scripted answer that is neither a yes nor a no approves, with the words as the reason
  const verdict = parseVerdict(answer) ?? { decision: 'approved' as const, reason: answer };
  run.events.record([
    { type: 'gate_decided', stage: step.stage, agent: step.agent, ...verdict, by: 'human' },
  ]);
}

function nextAnswer(run: RunContext, agent: string): string | undefined {
  return run.ports.human(run.state).answer(agent, run.state.humanAnswers[agent] ?? 0);
}

/** How the person can decide, as the gate's mail tells them. */
function verdictHow(run: RunContext): string {
  const { approve, reject } = verdictCommands(run.taskId);
  const cli = `\`${approve}\` or \`${reject}\`, or the dashboard`;
  return run.state.gateConfig.mail_verdicts
    ? `Reply on this thread: \`approve\` (optionally with a reason), or \`reject: <reason>\`; or ${cli}.`
    : `Decide with ${cli}. A reply here does not decide (gate.mail_verdicts is off).`;
}
