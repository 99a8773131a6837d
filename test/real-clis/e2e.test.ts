import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sh, tmpRepo } from '../support/git-repo.js';
import { eventLog } from '../support/troupe.js';
import { cliBin, FULL, hasCli, parseJson, runUntilWaiting, scratchHome, troupeAs } from './harness.js';
import { anthropic, type Mock, startMock } from './mock-apis/index.js';

/**
 * The real `claude` binary through `troupe run`, against a loopback mock of the Anthropic
 * Messages API (ANTHROPIC_BASE_URL, a fake key): the model's tool calls are carried out by
 * Claude Code itself, in the task's worktree.
 */

interface Status {
  id: string;
  status: string;
  error: string | null;
  stages: Array<{
    agent: string;
    status: string;
    output: string;
    usage: { input_tokens: number; output_tokens: number };
    gate: { decision: string } | null;
  }>;
}

const mocks: Mock[] = [];
afterEach(async () => {
  for (const m of mocks.splice(0)) await m.close();
});

function claudeEnv(
  mock: Mock,
  home: string,
  auth: 'api_key' | 'subscription' = 'api_key',
): Record<string, string> {
  return {
    HOME: home,
    TROUPE_CLAUDE_BIN: cliBin('claude'),
    ANTHROPIC_BASE_URL: mock.url,
    ...(auth === 'api_key'
      ? { ANTHROPIC_API_KEY: 'sk-ant-fake-e2e' }
      : { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-e2e' }),
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

const PIPELINE = `agents:
  - id: dev
    runtime: claude
    resume: true
    permissions: edit
    system_prompt: "{{ input }}"
    gate: { type: llm, prompt: "[[script:gate]] Is the file there?" }
    handoffs: [{ to: dev, condition: "again == yes" }]
`;

describe.skipIf(!hasCli('claude'))('claude (real binary, mock Anthropic API)', () => {
  it('a Write tool call lands in the worktree; usage and session recorded; resume continues it; the gate judges', async () => {
    const mock = await startMock(anthropic, {
      dev: [
        {
          tool: {
            name: 'Write',
            input: ({ cwd }) => ({
              file_path: join(cwd ?? '.', 'hello.txt'),
              content: 'hi from the model\n',
            }),
          },
          usage: { input: 1200, output: 30 },
        },
        { text: 'Wrote hello.txt.\nagain: yes\n[[script:dev2]] go on', usage: { input: 1300, output: 40 } },
      ],
      dev2: [{ text: 'Still there.\nagain: no', usage: { input: 1400, output: 50 } }],
      gate: [{ text: '{"decision": "approved", "reason": "hello.txt written"}' }],
    });
    mocks.push(mock);
    const repo = await tmpRepo();
    const pipeline = join(dirname(repo), 'p.yaml');
    writeFileSync(pipeline, PIPELINE);
    const env = claudeEnv(mock, scratchHome());
    const run = await troupeAs(
      repo,
      ['run', '[[script:dev]] create hello.txt', '--file', pipeline, '--json'],
      env,
    );
    const task = parseJson<Status>(run);
    expect(task.error, run.stderr).toBeNull();
    expect(task.status).toBe('completed');
    expect(task.stages.map((s) => [s.agent, s.gate?.decision])).toEqual([
      ['dev', 'approved'],
      ['dev', 'approved'],
    ]);

    // the edit: Claude Code's Write tool, in the task's worktree, committed on its branch
    const write = mock.of('dev')[0]!;
    expect(write.answered).toBe('tool');
    expect(write.body.tools.map((t: { name: string }) => t.name)).toContain('Write');
    const toolResult = mock.of('dev')[1]!.messages!.find((m) => m.kind === 'tool_result')!;
    expect(toolResult.isError, toolResult.text).toBe(false);
    expect(toolResult.text).toMatch(/hello\.txt/);
    expect(await sh(repo, 'show', `troupe/${task.id}:hello.txt`)).toBe('hi from the model');
    expect(JSON.stringify(write.body.system)).toContain(join('.troupe', 'worktrees', task.id));

    // usage (the mock's figures, summed by Claude Code) and the session id in the event log
    expect(task.stages[0]!.usage.input_tokens).toBeGreaterThanOrEqual(2500);
    expect(task.stages[0]!.usage.output_tokens).toBeGreaterThanOrEqual(70);
    const done = eventLog(repo, task.id).filter((e) => e.type === 'stage_completed');
    const sessions = done.map((e) => (e.data.meta as Record<string, unknown>).session_id);
    expect(sessions[0]).toMatch(/^[0-9a-f-]{36}$/);

    // resume: true — the second dev stage continues the first's conversation
    const resumed = mock.of('dev2')[0]!;
    const texts = resumed.messages!.map((m) => m.text).join('\n');
    expect(texts).toContain('[[script:dev]] create hello.txt');
    expect(resumed.messages!.some((m) => m.kind === 'tool_result' && /hello\.txt/.test(m.text))).toBe(true);
    expect(sessions[1]).toBe(sessions[0]);

    // the gate: a claude call of its own, given the stage's output
    const gate = mock.of('gate');
    expect(gate).toHaveLength(2);
    expect(gate[0]!.messages!.some((m) => m.role === 'user' && m.text.includes('Wrote hello.txt.'))).toBe(
      true,
    );
  });

  it('a 429 with a reset (a subscription limit) makes the task wait, then it carries on by itself', async () => {
    const mock = await startMock(anthropic, {
      dev: [{ limit: { resetAfterS: 2 }, text: 'done after the limit\nagain: no' }],
      gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
    });
    mocks.push(mock);
    const repo = await tmpRepo();
    const pipeline = join(dirname(repo), 'p.yaml');
    writeFileSync(pipeline, PIPELINE);
    // a claude.ai login (here a fake OAuth token): Claude Code then reports the limit and its
    // reset (`rate_limit_event` rejected); with an API key it retries a 429 by itself
    const env = claudeEnv(mock, scratchHome(), 'subscription');
    const { child, id } = await runUntilWaiting(repo, ['run', '[[script:dev]] go', '--file', pipeline], env);
    const during = parseJson<Status>(await troupeAs(repo, ['status', id, '--json'], env));
    expect(during.status).toBe('waiting');
    const run = await child;
    expect(run.exitCode, String(run.stderr)).toBe(0);
    expect(String(run.stderr)).toMatch(/claude is limited; waiting until/);
    const done = parseJson<Status>(await troupeAs(repo, ['status', id, '--json'], env));
    expect(done.status).toBe('completed');
    expect(done.stages.map((s) => s.output)).toEqual(['done after the limit\nagain: no']);
    const calls = mock.of('dev');
    expect(calls.map((r) => r.answered)).toEqual(['limit', 'text']);
    // not before the reset the 429 named
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1000);
    const limited = eventLog(repo, id).find((e) => e.type === 'rate_limited');
    expect(limited?.data.provider).toBe('claude');
  });
});
