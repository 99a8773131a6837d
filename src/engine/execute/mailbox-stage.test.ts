import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { memoryWorld } from '../../app/test-doubles.js';
import type { Script } from '../../core/script.js';
import { mailboxWaits } from '../fold/task-state.js';
import { agent, handoff, pipeline } from '../test-pipelines.js';
import { mailboxTimedOut } from './mailbox-stage.js';

const writerThenCodex = (extra: Parameters<typeof agent>[1] = {}) =>
  pipeline(
    agent('writer', { handoffs: [handoff('reviewer')] }),
    agent('reviewer', {
      runtime: 'mailbox',
      handle: 'codex',
      system_prompt: 'Review: {{ input }}',
      ...extra,
    }),
  );
const script = (agents: Script['agents']): Script => ({ agents, gates: {}, human: {} });

describe('a mailbox agent in the executor (in memory)', () => {
  it('mails the prompt to its handle, waits, and completes with the reply, usage unknown', async () => {
    const world = memoryWorld();
    const id = world.service.start({
      pipeline: writerThenCodex(),
      input: 'go',
      script: script({ writer: ['DRAFT'] }),
    });
    const waiting = await world.service.continue(id);
    expect(waiting.status).toBe('waiting');
    expect(mailboxWaits(waiting)).toMatchObject([
      { agent: 'reviewer', stage: 2, handle: 'codex', thread: `task/${id}`, deadline: null },
    ]);
    expect(world.mail.asked).toHaveLength(1);
    const [asked] = world.mail.asked;
    expect(asked).toMatchObject({ agent: 'reviewer', to: 'codex', kind: 'question' });
    expect(asked!.body).toContain('Review: DRAFT');
    expect(asked!.context).toMatchObject({
      troupe: {
        task: id,
        agent: 'reviewer',
        stage: 2,
        reply: expect.stringContaining('--me codex --to reviewer'),
      },
    });

    expect(world.service.takeMailReplies(id)).toBe(false);
    // continued again before any reply: nothing was cut off, nothing is mailed twice
    const again = await world.service.continue(id);
    expect(again.status).toBe('waiting');
    expect(world.mail.asked).toHaveLength(1);
    expect([...world.store.events(id)].map((e) => e.type)).not.toContain('stage_interrupted');

    world.mail.replies.set('reviewer<codex', ['LGTM\n']);
    expect(world.service.takeMailReplies(id)).toBe(true);
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(done.stages[1]).toMatchObject({ agent: 'reviewer', output: 'LGTM', status: 'completed' });
    expect(done.stages[1]!.usage).toEqual({ input_tokens: 0, output_tokens: 0, unknown: true });
  });

  it("runs on the task's script when the script has replies for it (troupe test stays offline)", async () => {
    const world = memoryWorld();
    const id = world.service.start({
      pipeline: writerThenCodex(),
      input: 'go',
      script: script({ writer: ['DRAFT'], reviewer: ['scripted review'] }),
    });
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(done.stages[1]!.output).toBe('scripted review');
    expect(world.mail.asked).toHaveLength(0);
  });

  it("records the agent's timeout as the stage's deadline", async () => {
    // one clock for the deadline and the wait's askedAt: the wall clock, held still
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const world = memoryWorld();
    const id = world.service.start({
      pipeline: writerThenCodex({ timeout: 3600 }),
      input: 'go',
      script: script({ writer: ['DRAFT'] }),
    });
    const [wait] = mailboxWaits(await world.service.continue(id));
    expect(Date.parse(wait!.deadline!) - Date.parse(wait!.askedAt)).toBe(3_600_000);
  });
});

describe('mailboxTimedOut', () => {
  const waitingState = async (extra: Parameters<typeof agent>[1]) => {
    const world = memoryWorld();
    const id = world.service.start({
      pipeline: writerThenCodex(extra),
      input: 'go',
      script: script({ writer: ['DRAFT'] }),
    });
    const state = await world.service.continue(id);
    return { state, wait: mailboxWaits(state)[0]! };
  };

  it('is a timeout failure, retried after the backoff by default (a new message)', async () => {
    const { state, wait } = await waitingState({ timeout: 60 });
    const now = new Date(Date.parse(wait.askedAt) + 61_000);
    const event = mailboxTimedOut(state, wait, now);
    expect(event).toMatchObject({
      type: 'stage_attempt_failed',
      stage: 2,
      agent: 'reviewer',
      attempt: 1,
      error: { kind: 'timeout', message: 'timed out after 61s: no reply from codex on the bus' },
      retryAt: new Date(now.getTime() + 10_000).toISOString(),
    });
  });

  it('has no retry time when the agent allows no retries', async () => {
    const { state, wait } = await waitingState({
      timeout: 60,
      retry: { max_retries: 0, fallback_context_strategy: null, backoff: 10 },
    });
    expect(mailboxTimedOut(state, wait, new Date()).retryAt).toBeUndefined();
  });
});
