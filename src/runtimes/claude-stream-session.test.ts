import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeRequest } from '../core/runtime.js';
import { ClaudeStreamParser, claudeArgs, claudeRuntime } from './claude.js';
import { ClaudeStreamSessions, keptUpArgs } from './claude-stream-session.js';
import { baseRequest, collect, failureOf, fakeCli } from './contract.js';

const SESSION = 'f977f2f1-8abb-4ba6-9a23-5d722df1bdcd';

/** A fake claude that records each turn (argv, and the stdin line of that turn). */
function fake(scenario = 'success') {
  const argvFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'troupe-kept-')), 'argv.jsonl');
  const runtime = claudeRuntime({
    bin: fakeCli('claude'),
    env: { FAKE_CLI_SCENARIO: scenario, FAKE_CLI_ARGV_FILE: argvFile },
  });
  const calls = () =>
    readFileSync(argvFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; stdin: string; pid: number });
  return { runtime, calls };
}

const stage = (overrides: Partial<RuntimeRequest> = {}) => baseRequest({ keepSession: true, ...overrides });
const resultOf = async (events: Promise<Awaited<ReturnType<typeof collect>>>) => {
  const last = (await events).at(-1);
  if (last?.type !== 'result') throw new Error('no result');
  return last;
};

describe('claude kept up between the stages of a resume: true agent', () => {
  it('serves the next stage that resumes its session: one process, the prompt on stdin, the turn its own usage', async () => {
    const { runtime, calls } = fake();
    const first = await resultOf(collect(runtime, stage({ prompt: 'PROMPT-ONE' })));
    expect(first.meta?.session_id).toBe(SESSION);
    const second = await resultOf(
      collect(runtime, stage({ prompt: 'PROMPT-TWO', resumeSessionId: SESSION })),
    );
    expect(second.text).toBe('hi from mock');
    // the CLI reports the process's running totals; each stage records only its own turn
    expect(second.usage).toEqual(first.usage);
    expect(second.usage).toMatchObject({
      input_tokens: 42,
      output_tokens: 12,
      cost_usd: 0.0005135000000000001,
    });
    const [one, two] = calls();
    expect(calls()).toHaveLength(2);
    expect(two!.argv).toEqual(one!.argv);
    expect(one!.argv.slice(0, 3)).toEqual(['-p', '--input-format', 'stream-json']);
    expect(one!.argv).not.toContain('--resume');
    expect(one!.argv).not.toContain('PROMPT-ONE');
    expect(JSON.parse(one!.stdin)).toEqual({
      type: 'user',
      message: { role: 'user', content: 'PROMPT-ONE' },
    });
    expect(JSON.parse(two!.stdin).message.content).toBe('PROMPT-TWO');
  });

  it('starts a new process resuming the session when the flags changed (another model)', async () => {
    const { runtime, calls } = fake();
    await collect(runtime, stage());
    await collect(runtime, stage({ resumeSessionId: SESSION, model: 'sonnet' }));
    const [, two] = calls();
    expect(two!.argv.join(' ')).toContain(`--model sonnet`);
    expect(two!.argv.join(' ')).toContain(`--resume ${SESSION}`);
  });

  it('closes the process after a failed turn, classified as a new process would be; the retry resumes in a new one', async () => {
    const { runtime, calls } = fake('success,api-429');
    await collect(runtime, stage());
    const error = await failureOf(runtime, stage({ resumeSessionId: SESSION }));
    expect(error.kind).toBe('rate_limited');
    await collect(runtime, stage({ resumeSessionId: SESSION }));
    const all = calls();
    expect(all).toHaveLength(3);
    expect(all[1]!.argv).not.toContain('--resume');
    expect(all[2]!.argv.join(' ')).toContain(`--resume ${SESSION}`);
  });

  it('does not hand a turn to a parked process that died: the stage resumes in a new one', async () => {
    const { runtime, calls } = fake();
    await collect(runtime, stage());
    process.kill(calls()[0]!.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const result = await resultOf(collect(runtime, stage({ resumeSessionId: SESSION })));
    expect(result.text).toBe('hi from mock');
    expect(calls()[1]!.argv.join(' ')).toContain(`--resume ${SESSION}`);
  });

  it('closes an idle process: a stage after idleMs resumes in a new one', async () => {
    const argvFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'troupe-kept-')), 'argv.jsonl');
    const sessions = new ClaudeStreamSessions(50);
    const launch = {
      bin: fakeCli('claude'),
      args: keptUpArgs(claudeArgs(baseRequest({ prompt: '' }), null).args),
      env: { FAKE_CLI_ARGV_FILE: argvFile },
      install: 'npm i -g @anthropic-ai/claude-code',
    };
    for await (const _ of sessions.run(stage(), launch, new ClaudeStreamParser())) {
      // drain
    }
    await new Promise((r) => setTimeout(r, 300));
    for await (const _ of sessions.run(
      stage({ resumeSessionId: SESSION }),
      launch,
      new ClaudeStreamParser(),
    )) {
      // drain
    }
    await sessions.closeAll();
    const argv = readFileSync(argvFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { argv: string[] }).argv.join(' '));
    expect(argv).toHaveLength(2);
    expect(argv[1]).toContain(`--resume ${SESSION}`);
  });

  it('is not used for a gate, a stage with MCP servers, or an agent without resume: true', async () => {
    const { runtime, calls } = fake();
    await collect(runtime, stage({ purpose: 'gate' }));
    await collect(runtime, stage({ mcp: [{ server: 'probe', command: 'true', args: [], env: {} }] }));
    await collect(runtime, baseRequest());
    for (const call of calls()) expect(call.argv).not.toContain('--input-format');
  });
});
