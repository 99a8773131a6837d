import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../core/events.js';
import type { Usage } from '../core/usage.js';
import { agent, Log, pipeline } from '../engine/test-pipelines.js';
import { issueProgress, progressCommentTask } from './issue-progress.js';

/**
 * Stage `n` as the engine records it (activation `a<n>`: the start's, then each handoff's):
 * started, completed with its usage (priced) and duration, and handed off to `next`.
 */
function stage(n: number, id: string, durationMs: number, usage: Usage, next?: string): TaskEvent[] {
  const activation = `a${n}`;
  return [
    { type: 'stage_started', stage: n, activation, agent: id, input: 'x', attempt: 1 },
    { type: 'stage_completed', stage: n, activation, agent: id, output: 'ok', usage, durationMs },
    ...(next
      ? [
          {
            type: 'handoff' as const,
            stage: n,
            activation,
            targets: [{ agent: next, input: 'ok', condition: '' }],
          },
        ]
      : []),
  ];
}

const handoff = (to: string) => ({ to: [to], task: '', condition: '', payload: '{{ output }}' });
const writerEditor = () =>
  pipeline(
    agent('writer', { handoffs: [handoff('editor')] }),
    agent('editor', { handoffs: [handoff('writer')] }),
  );
const priced = (cost: number, estimated = false): Usage => ({
  input_tokens: 1000,
  output_tokens: 200,
  cost_usd: cost,
  ...(estimated ? { cost_estimated: true } : {}),
});

/** The lines of the comment outside its fenced blocks (where Markdown would act). */
function outsideFences(text: string): string {
  return text.replace(/^(`{3,})text\n[\s\S]*?\n\1$/gm, '');
}

describe('issueProgress', () => {
  it('a completed task: the marker, its status, each stage with outcome and time, and the cost', () => {
    const log = new Log(writerEditor()).add(
      ...stage(1, 'writer', 1500, priced(0.012), 'editor'),
      ...stage(2, 'editor', 65_000, priced(0.0034, true)),
      { type: 'task_completed' },
    );
    expect(issueProgress(log.state, { pullRequest: 'https://github.com/acme/app/pull/7' })).toBe(
      [
        '<!-- troupe:progress T-TEST -->',
        '**troupe** task `T-TEST`: **completed**',
        '',
        '| # | agent | outcome | time |',
        '|---|---|---|---|',
        '| 1 | writer | completed | 1.5s |',
        '| 2 | editor | completed | 1m5s |',
        '',
        'Cost: $0.0154 (estimated)',
        'Pull request: [pull request](https://github.com/acme/app/pull/7)',
        '',
      ].join('\n'),
    );
  });

  it("is recognised as troupe's own comment, with its task; a person's comment quoting the marker is not", () => {
    const text = issueProgress(new Log(writerEditor()).state);
    expect(progressCommentTask(text)).toBe('T-TEST');
    expect(progressCommentTask(`> ${text}`)).toBeNull();
    expect(progressCommentTask('thanks! <!-- troupe:progress T-1 -->\n')).toBeNull();
  });

  it('a running stage: what runs now, and for how long when told the time', () => {
    const log = new Log(writerEditor()).add(...stage(1, 'writer', 900, priced(0.01), 'editor'), {
      type: 'stage_started',
      stage: 2,
      activation: 'a2',
      agent: 'editor',
      input: 'x',
      attempt: 1,
    });
    const text = issueProgress(log.state, { now: '2026-01-01T00:00:31.000Z' });
    expect(text).toContain('**troupe** task `T-TEST`: **running**');
    expect(text).toContain('| 2 | editor | running | 30.0s |');
    expect(text).toContain('Now: stage 2, editor');
    expect(issueProgress(log.state)).toContain('| 2 | editor | running |  |');
  });

  it('a gate waiting for a person: the commands that approve or reject it', () => {
    const human = {
      type: 'human' as const,
      prompt: '',
      model: null,
      max_retries: 0,
      command: null,
      timeout: null,
    };
    const gated = pipeline(agent('writer', { gate: human }));
    const log = new Log(gated).add(...stage(1, 'writer', 10, priced(0.001)), {
      type: 'gate_waiting',
      stage: 1,
      agent: 'writer',
    });
    const text = issueProgress(log.state);
    expect(text).toContain('**awaiting gate**');
    expect(text).toContain('| 1 | writer | awaiting approval | 10ms |');
    expect(text).toContain(
      'Waiting for approval of writer\'s output: `troupe approve T-TEST` or `troupe reject T-TEST -r "<reason>"`',
    );
    expect(text).not.toContain('Now:');
  });

  it("an agent's question: escaped so it adds no markup, HTML, link or mention; the command to answer", () => {
    const question =
      '@octocat <img src=x onerror=alert(1)> **now** [click](javascript:alert(1)) | `x`\n# heading';
    const log = new Log(writerEditor()).add(
      { type: 'stage_started', stage: 1, activation: 'a1', agent: 'writer', input: 'x', attempt: 1 },
      {
        type: 'human_input_requested',
        activation: 'a1',
        agent: 'writer',
        stage: 1,
        mode: 'on_demand',
        questions: [question, 'which @acme/owners?'],
      },
    );
    const text = issueProgress(log.state);
    expect(text).toContain('writer asks:\n- ');
    expect(text).toContain('Answer with `troupe human-input T-TEST "<answer>"`');
    const asked = text.split('\n').filter((line) => line.startsWith('- '));
    expect(asked).toEqual([
      '- @\u200boctocat \\<img src\\=x onerror\\=alert\\(1\\)\\> \\*\\*now\\*\\* \\[click\\]\\(javascript\\:alert\\(1\\)\\) \\| \\`x\\` \\# heading',
      '- which @\u200bacme/owners?',
    ]);
    // every markup character is escaped: none is left bare
    for (const line of asked) expect(line.slice(2).replace(/\\[^\s]/g, '')).not.toMatch(/[<>*[\]()`|#]/);
  });

  it('a failure: its reason in a fence no line of it can close, HTML and mentions inert inside', () => {
    const reason = 'tests failed:\n```\n<script>alert(1)</script> @octocat\n````\nend';
    const log = new Log(writerEditor()).add(...stage(1, 'writer', 10, priced(0.001)), {
      type: 'task_failed',
      reason,
      stage: 1,
      errorKind: 'crashed',
    });
    const text = issueProgress(log.state);
    expect(text).toContain(`Failed:\n\n\`\`\`\`\`text\n${reason}\n\`\`\`\`\`\n`);
    expect(outsideFences(text)).not.toContain('<script>');
    expect(outsideFences(text)).not.toContain('@octocat');
  });

  it("a hostile agent name keeps the table's columns, and a stage's error kind shows", () => {
    const log = new Log(pipeline(agent('a|b'))).add(
      { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a|b', input: 'x', attempt: 1 },
      {
        type: 'stage_attempt_failed',
        stage: 1,
        activation: 'a1',
        agent: 'a|b',
        attempt: 1,
        error: { kind: 'timeout', message: 'took too long' },
        partialOutput: '',
        durationMs: 2000,
      },
    );
    const row = issueProgress(log.state)
      .split('\n')
      .find((line) => line.startsWith('| 1 '))!;
    expect(row).toBe('| 1 | a\\|b | failed (timeout) | 2.0s |');
    expect(row.replace(/\\\|/g, '').match(/\|/g)).toHaveLength(5);
  });

  it('links only to an http(s) pull request; any other address stays text', () => {
    const state = new Log(writerEditor()).add({ type: 'task_completed' }).state;
    expect(issueProgress(state, { pullRequest: 'javascript:alert(1)' })).toContain(
      'Pull request: pull request\n',
    );
    expect(issueProgress(state, { pullRequest: 'https://x.test/a (b)' })).toContain(
      '[pull request](https://x.test/a%20%28b%29)',
    );
    expect(issueProgress(state)).not.toContain('Pull request');
  });

  it('keeps long tasks short: the latest stages, and how many came before', () => {
    const log = new Log(writerEditor());
    for (let n = 1; n <= 14; n++)
      log.add(...stage(n, n % 2 ? 'writer' : 'editor', 10, priced(0.001), n % 2 ? 'editor' : 'writer'));
    const text = issueProgress(log.state, { maxStages: 4 });
    expect(text).toContain('10 earlier stages not shown');
    expect(
      text
        .split('\n')
        .filter((line) => /^\| \d+ /.test(line))
        .map((l) => l.split(' ')[1]),
    ).toEqual(['11', '12', '13', '14']);
  });

  it('a cancelled task says why, escaped; a parked one how to run it again', () => {
    const cancelled = new Log(writerEditor()).add({
      type: 'task_cancelled',
      reason: 'by @boss: *stop*',
    }).state;
    expect(issueProgress(cancelled)).toContain('Cancelled: by @\u200bboss\\: \\*stop\\*');
    const parked = new Log(writerEditor()).add({
      type: 'task_parked',
      reason: 'worker crashed',
      failures: 3,
    }).state;
    expect(issueProgress(parked)).toContain(
      'Parked after 3 failed runs; `troupe resume T-TEST` runs it again.',
    );
  });
});
