import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryWorld, watchedStore } from '../../app/test-doubles.js';
import type { StoredEvent } from '../../core/events.js';
import type { Script } from '../../core/script.js';
import { defaultConfig } from '../../pipeline/config.js';
import { openMemoryStore } from '../../store/memory-store.js';
import { agent, handoff, IN_WORKTREES, pipeline } from '../test-pipelines.js';

/**
 * The executor on the in-memory world (app/test-doubles.ts): no SQLite, no git, no disk. What a
 * task does is read back from its events; the integration tests in test/ are the backstop.
 */

const script = (agents: Script['agents'], gates: Script['gates'] = {}): Script => ({
  agents,
  gates,
  human: {},
});

const llmGate = {
  type: 'llm' as const,
  prompt: '',
  model: null,
  max_retries: 2,
  command: null,
  timeout: null,
};

function eventsOf(world: { store: { events(id: string): IterableIterator<StoredEvent> } }, id: string) {
  return [...world.store.events(id)];
}

describe('executor in memory', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs a chain, each stage handed the previous output, one transaction per stage', async () => {
    const watched = watchedStore(openMemoryStore());
    const world = memoryWorld({ store: watched.store });
    const p = pipeline(
      agent('a', { handoffs: [handoff('b')] }),
      agent('b', { handoffs: [handoff('c')] }),
      agent('c'),
    );
    const id = world.service.start({
      pipeline: p,
      input: 'go',
      script: script({ a: ['A'], b: ['B'], c: ['C'] }),
    });
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(done.stages.map((s) => [s.agent, s.input, s.output])).toEqual([
      ['a', 'go', 'A'],
      ['b', 'A', 'B'],
      ['c', 'B', 'C'],
    ]);
    expect(watched.appends).toEqual([
      ['stage_started'],
      ['stage_completed', 'handoff', 'stage_started'],
      ['stage_completed', 'handoff', 'stage_started'],
      ['stage_completed', 'handoff', 'task_completed'],
    ]);
    expect(world.files.get(id)?.last?.status).toBe('completed');
  });

  it("never reads back its own events while polling, and applies another writer's", async () => {
    const watched = watchedStore(openMemoryStore());
    const world = memoryWorld({ store: watched.store });
    const p = pipeline(agent('slow', { handoffs: [handoff('next')] }), agent('next'));
    const id = world.service.start({
      pipeline: p,
      input: 'go',
      script: script({ slow: [{ reply: 'done slowly', delay_ms: 500 }], next: ['next done'] }),
    });
    setTimeout(() => {
      world.store.append(id, [{ type: 'budget_warning', used: 9, limit: 10, unit: 'tokens' }], {
        status: 'running',
      });
    }, 100);
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(done.budgetWarned).toBe(true);
    expect(watched.polled).toEqual(['budget_warning']);
  });

  it('runs a rejected stage again with the reason, and goes on once the gate approves', async () => {
    const world = memoryWorld();
    const p = pipeline(
      agent('dev', { gate: llmGate, handoffs: [handoff('ship', 'on_approve')] }),
      agent('ship'),
    );
    const id = world.service.start({
      pipeline: p,
      input: 'build it',
      script: script(
        { dev: ['v1', 'v2'], ship: ['shipped'] },
        { dev: [{ decision: 'rejected', reason: 'no tests' }, 'approved'] },
      ),
    });
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(done.stages.map((s) => [s.agent, s.output, s.gate?.decision ?? null])).toEqual([
      ['dev', 'v1', 'rejected'],
      ['dev', 'v2', 'approved'],
      ['ship', 'shipped', null],
    ]);
    expect(done.stages[1]!.input).toContain('no tests');
  });

  it('waits at a human gate, asks the person by mail once that is recorded; a mail verdict decides only where the project allows it', async () => {
    const allowing = defaultConfig();
    allowing.gate.mail_verdicts = true;
    const world = memoryWorld({ config: allowing });
    const gate = { ...llmGate, type: 'human' as const };
    const p = pipeline(agent('dev', { gate, handoffs: [handoff('ship', 'on_approve')] }), agent('ship'));
    const id = world.service.start({
      pipeline: p,
      input: 'go',
      script: script({ dev: ['v1'], ship: ['shipped'] }),
    });
    const waiting = await world.service.continue(id);
    expect(waiting.status).toBe('awaiting_gate');
    expect(world.mail.asked.map((m) => [m.kind, m.agent])).toEqual([['review_request', 'dev']]);
    expect(world.store.task(id)?.status).toBe('awaiting_gate');
    world.mail.replies.set('dev', ['approve: fine']);
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(done.stages.map((s) => s.agent)).toEqual(['dev', 'ship']);
    expect(done.stages[0]!.gate).toEqual({
      decision: 'approved',
      reason: 'fine',
      by: 'human',
      from: { channel: 'mail', who: 'user' },
    });
    // the request the verdict answered is read in the person's inbox
    expect(world.mail.asksRead).toEqual([{ taskId: id, agent: 'dev' }]);
  });

  it('by default, mail does not decide a gate: anyone who writes the mail, an agent too, could send it', async () => {
    const world = memoryWorld();
    const gate = { ...llmGate, type: 'human' as const };
    const p = pipeline(agent('dev', { gate, handoffs: [handoff('ship', 'on_approve')] }), agent('ship'));
    const id = world.service.start({
      pipeline: p,
      input: 'go',
      script: script({ dev: ['v1'], ship: ['shipped'] }),
    });
    await world.service.continue(id);
    expect(world.mail.asked[0]?.body).toContain(`Decide with \`troupe approve ${id}\``);
    world.mail.replies.set('dev', ['approve']);
    const still = await world.service.continue(id);
    expect(still.status).toBe('awaiting_gate');
    expect(world.mail.replies.get('dev')).toEqual(['approve']);
    expect(world.mail.asksRead).toEqual([]);
    world.service.decideGate(id, 'approved', '', { channel: 'cli', who: 'ana@laptop' });
    expect(world.mail.asksRead).toEqual([{ taskId: id, agent: 'dev' }]);
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(done.stages[0]!.gate?.from).toEqual({ channel: 'cli', who: 'ana@laptop' });
  });

  it("a question answered, or a waiting task cancelled, settles the person's ask", async () => {
    const world = memoryWorld();
    const asking = agent('dev', {
      human_input: { enabled: true, mode: 'before', prompt: 'Which port?' },
    });
    const answered = world.service.start({
      pipeline: pipeline(asking),
      input: 'go',
      script: script({ dev: ['ok'] }),
    });
    expect((await world.service.continue(answered)).status).toBe('awaiting_human_input');
    world.service.answer(answered, '8080');
    const cancelled = world.service.start({
      pipeline: pipeline(asking),
      input: 'go',
      script: script({ dev: ['ok'] }),
    });
    await world.service.continue(cancelled);
    world.service.cancel(cancelled, 'not now');
    expect(world.mail.asksRead).toEqual([
      { taskId: answered, agent: 'dev' },
      { taskId: cancelled, agent: 'dev' },
    ]);
  });

  describe('fan-out and join', () => {
    const p = pipeline(
      agent('lead', { handoffs: [handoff('sec, perf')] }),
      agent('sec', { handoffs: [handoff('sum')] }),
      agent('perf', { handoffs: [handoff('sum')] }),
      agent('sum'),
    );
    const replies = script({ lead: ['code'], sec: ['safe'], perf: ['fast'], sum: ['both fine'] });
    const inWorktrees = { ...p, workspace: IN_WORKTREES };

    it('runs the branches, then the join once, with both outputs', async () => {
      const world = memoryWorld();
      const id = world.service.start({ pipeline: p, input: 'review', script: replies });
      const done = await world.service.continue(id);
      expect(done.status).toBe('completed');
      expect(done.stages.map((s) => s.agent)).toEqual(['lead', 'sec', 'perf', 'sum']);
      const join = eventsOf(world, id).filter((e) => e.type === 'join');
      expect(join).toHaveLength(1);
      expect(done.stages[3]!.input).toContain('safe');
      expect(done.stages[3]!.input).toContain('fast');
    });

    it('in worktrees: each branch works and commits in its own, and the join merges them first', async () => {
      const world = memoryWorld({ repo: '/memory/project' });
      const id = world.service.start({ pipeline: inWorktrees, input: 'review', script: replies });
      const done = await world.service.continue(id);
      expect(done.status).toBe('completed');
      const root = `/memory/project/.troupe/worktrees/${id}`;
      expect(world.workspace.calls).toEqual([
        `prepare ${id}`,
        `commit lead ${root}`,
        'branch sec',
        'branch perf',
        `commit sec ${root}--sec`,
        `commit perf ${root}--perf`,
        `merge troupe/${id}--sec troupe/${id}--perf into ${root}`,
        `commit sum ${root}`,
        `merge troupe/${id} into main`,
        `tidy ${id}`,
      ]);
      expect(eventsOf(world, id).map((e) => e.type)).toContain('branches_merged');
      expect(done.workspace?.merged).toBeTruthy();
    });

    it("a branch's worktree that cannot be made fails the task, not the process", async () => {
      const world = memoryWorld({ repo: '/memory/project' });
      const unhandled: unknown[] = [];
      const note = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', note);
      world.workspace.prepareBranch = async () => {
        throw new Error('worktree T-1--sec exists and is not a git worktree');
      };
      try {
        const id = world.service.start({ pipeline: inWorktrees, input: 'review', script: replies });
        const done = await world.service.continue(id);
        expect(done.status).toBe('failed');
        expect(done.failure?.reason).toContain('is not a git worktree');
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', note);
      }
    });
  });

  describe('rate limits', () => {
    it('a limited stage waits for the reset, then runs again under the same number', async () => {
      const world = memoryWorld();
      const statuses: string[] = [];
      const id = world.service.start({
        pipeline: pipeline(agent('a')),
        input: 'go',
        script: script({ a: [{ error: 'rate_limit', reset_after_s: 0.3 }, 'done'] }),
      });
      const done = await world.service.continue(id, {
        onEvent: (e, state) => e.type === 'rate_limited' && statuses.push(state.status),
      });
      expect(done.status).toBe('completed');
      expect(statuses).toEqual(['waiting']);
      const events = eventsOf(world, id);
      const starts = events.filter((e) => e.type === 'stage_started');
      expect(starts.map((e) => e.type === 'stage_started' && e.stage)).toEqual([1, 1]);
      const limited = events.find((e) => e.type === 'rate_limited');
      expect(limited).toMatchObject({ provider: 'claude' });
      // waited for the reset: the second call began once the store's clock had reached it
      const resetAt = limited?.type === 'rate_limited' ? Date.parse(limited.resetAt) : Number.NaN;
      expect(Date.parse(starts[1]!.at)).toBeGreaterThanOrEqual(resetAt);
      expect(limited).not.toHaveProperty('retryAt');
      expect(done.stages.map((s) => s.output)).toEqual(['done']);
    });

    it('a provider another task closed is waited for before any call', async () => {
      const world = memoryWorld();
      // long enough that a slow machine still finds it closed at the first stage
      const resetAt = new Date(Date.now() + 500).toISOString();
      world.store.closeProvider('claude', resetAt);
      const id = world.service.start({
        pipeline: pipeline(agent('a')),
        input: 'go',
        script: script({ a: ['done'] }),
      });
      const done = await world.service.continue(id);
      expect(done.status).toBe('completed');
      const events = eventsOf(world, id).slice(1);
      expect(events).toMatchObject([
        { type: 'stage_started' },
        { type: 'rate_limited', resetAt },
        { type: 'stage_started' },
        { type: 'stage_completed' },
        { type: 'handoff' },
        { type: 'task_completed' },
      ]);
      const completed = events.find((e) => e.type === 'stage_completed')!;
      expect(Date.parse(completed.at)).toBeGreaterThanOrEqual(Date.parse(resetAt));
    });

    it('a limit on one endpoint of runtime openai leaves another alone (OpenAI and Ollama)', async () => {
      const world = memoryWorld();
      world.store.closeProvider('openai@api.openai.com', new Date(Date.now() + 3_600_000).toISOString());
      const local = agent('local', {
        runtime: 'openai',
        model: 'llama3.2',
        openai: { base_url: 'http://127.0.0.1:11434/v1', api_key_env: null },
      });
      const fromOllama = world.service.start({
        pipeline: pipeline(local),
        input: 'go',
        script: script({ local: ['from ollama'] }),
      });
      // not held by the hour OpenAI is closed for: no wait recorded (a wait would outlast the test)
      expect((await world.service.continue(fromOllama)).status).toBe('completed');
      expect(eventsOf(world, fromOllama).map((e) => e.type)).not.toContain('rate_limited');
      const hosted = agent('hosted', { runtime: 'openai', model: 'gpt-4.1-mini' });
      const fromOpenAi = world.service.start({
        pipeline: pipeline(hosted),
        input: 'go',
        script: script({ hosted: ['from openai'] }),
      });
      const stop = new AbortController();
      const state = await world.service
        .continue(fromOpenAi, { onEvent: (e) => e.type === 'rate_limited' && stop.abort() }, stop.signal)
        .catch(() => world.service.state(fromOpenAi));
      expect(state.status).toBe('waiting');
      expect(eventsOf(world, fromOpenAi).find((e) => e.type === 'rate_limited')).toMatchObject({
        provider: 'openai@api.openai.com',
      });
    });

    it("moves a limited stage to the agent's first open fallback at once, and records the decision", async () => {
      const world = memoryWorld();
      const a = agent('a', { fallback: [{ runtime: 'gemini', model: 'gemini-2.5-flash' }] });
      const id = world.service.start({
        pipeline: pipeline(a),
        input: 'go',
        script: script({ a: [{ error: 'rate_limit', reset_after_s: 3600 }, 'from gemini'] }),
      });
      const done = await world.service.continue(id);
      expect(done.status).toBe('completed');
      expect(done.stages.map((s) => s.output)).toEqual(['from gemini']);
      const events = eventsOf(world, id);
      expect(events.find((e) => e.type === 'rate_limited')).toHaveProperty('retryAt');
      expect(events.find((e) => e.type === 'decision')).toMatchObject({
        kind: 'fallback',
        from: { runtime: 'claude' },
        to: { runtime: 'gemini', model: 'gemini-2.5-flash' },
      });
      expect(world.store.closedProviders(new Date()).map((w) => w.provider)).toEqual(['claude']);
      expect(world.decisions).toEqual([expect.objectContaining({ task: id, kind: 'fallback' })]);
    });
  });

  describe('runtime retries', () => {
    const started = (events: StoredEvent[]) =>
      events.flatMap((e) => (e.type === 'stage_started' ? [[e.stage, e.attempt]] : []));

    it('retries overloaded and network failures after a doubling backoff, then goes on', async () => {
      const world = memoryWorld();
      const a = agent('a', { retry: { max_retries: 2, backoff: 0.1, fallback_context_strategy: null } });
      const id = world.service.start({
        pipeline: pipeline(a),
        input: 'go',
        script: script({ a: [{ error: 'overloaded' }, { error: 'network' }, 'done'] }),
      });
      const done = await world.service.continue(id);
      expect(done.status).toBe('completed');
      const events = eventsOf(world, id);
      expect(started(events)).toEqual([
        [1, 1],
        [1, 2],
        [1, 3],
      ]);
      const failed = events.filter((e) => e.type === 'stage_attempt_failed');
      expect(failed.map((e) => e.type === 'stage_attempt_failed' && e.error.kind)).toEqual([
        'overloaded',
        'network',
      ]);
      // each retryAt is its backoff (100 ms, then 200 ms) after the attempt failed, so at least
      // that long after the attempt began (a bound that holds on any machine, however loaded)
      const begun = events.filter((e) => e.type === 'stage_started');
      const waits = failed.map(
        (e, i) => e.type === 'stage_attempt_failed' && Date.parse(e.retryAt!) - Date.parse(begun[i]!.at),
      );
      expect(waits[0]).toBeGreaterThanOrEqual(100);
      expect(waits[1]).toBeGreaterThanOrEqual(200);
      const second = begun[1]!;
      expect(Date.parse(second.at)).toBeGreaterThanOrEqual(
        Date.parse((failed[0] as { retryAt: string }).retryAt),
      );
    });

    it('fails with the kind once the attempts are used up; auth is never retried', async () => {
      const world = memoryWorld();
      const fast = { max_retries: 2, backoff: 0, fallback_context_strategy: null };
      const timedOut = world.service.start({
        pipeline: pipeline(agent('a', { retry: fast })),
        input: 'go',
        script: script({ a: [{ error: 'timeout' }] }),
      });
      expect((await world.service.continue(timedOut)).failure).toMatchObject({
        reason: expect.stringMatching(/failed after 3 attempts/),
        errorKind: 'timeout',
      });
      const denied = world.service.start({
        pipeline: pipeline(agent('a', { retry: fast })),
        input: 'go',
        script: script({ a: [{ error: 'auth' }, 'never'] }),
      });
      expect((await world.service.continue(denied)).failure).toMatchObject({ errorKind: 'auth' });
      expect(started(eventsOf(world, denied))).toEqual([[1, 1]]);
    });

    it('retries by default (no retry:), and the backoff is recorded, so a new process waits out the rest', async () => {
      // one clock for the failure's retryAt and the store's `at`: the wall clock, held still
      vi.useFakeTimers({ toFake: ['Date'] });
      const world = memoryWorld();
      const id = world.service.start({
        pipeline: pipeline(agent('a')),
        input: 'go',
        script: script({ a: [{ error: 'overloaded' }, 'done'] }),
      });
      const stop = new AbortController();
      const first = await world.service
        .continue(id, { onEvent: (e) => e.type === 'stage_attempt_failed' && stop.abort() }, stop.signal)
        .catch(() => world.service.state(id));
      expect(first.status).not.toBe('failed');
      const failed = eventsOf(world, id).find((e) => e.type === 'stage_attempt_failed')!;
      expect(
        failed.type === 'stage_attempt_failed' && Date.parse(failed.retryAt!) - Date.parse(failed.at),
      ).toBe(10_000);
      expect(first.activations.get('a1')?.retryAt).toBe((failed as { retryAt: string }).retryAt);
    });
  });

  it('a cancel from elsewhere aborts the running stage; nothing more is recorded', async () => {
    const world = memoryWorld();
    const p = pipeline(agent('slow', { handoffs: [handoff('next')] }), agent('next'));
    const id = world.service.start({
      pipeline: p,
      input: 'go',
      // longer than the test may last: only the abort can end this stage
      script: script({ slow: [{ reply: 'too late', delay_ms: 600_000 }], next: ['never'] }),
    });
    setTimeout(() => world.service.cancel(id, 'enough'), 50);
    const done = await world.service.continue(id);
    expect(done.status).toBe('cancelled');
    expect(eventsOf(world, id).map((e) => e.type)).toEqual([
      'task_created',
      'stage_started',
      'task_cancelled',
    ]);
  });
});
