import { describe, expect, it } from 'vitest';
import { serve } from './support/serve.js';
import {
  eventLog,
  project,
  spawnTroupe,
  type TaskJson,
  troupe,
  troupeJson,
  waitFor,
} from './support/troupe.js';

/** Headless (scripted) writer, then a reviewer who is whoever answers as `codex` on the bus. */
const pipeline = (reviewer = '') => `agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
    handoffs: [{ to: reviewer }]
  - id: reviewer
    runtime: mailbox
    handle: codex
    system_prompt: "Review this draft: {{ input }}"
${reviewer}`;

const script = `agents:
  writer: ["Draft: troupe mails stages to live agents."]
`;

interface Listed {
  id: string;
  from: string;
  kind: string;
  thread: string;
  subject: string;
  labels?: string[];
  context?: { troupe?: { task: string; stage: number; reply: string } };
}

const inbox = async (dir: string, me: string): Promise<Listed[]> => {
  const listed = await troupe(dir, ['bus', 'list', '--me', me, '--json']);
  return listed.code === 0 ? (JSON.parse(listed.stdout) as Listed[]) : [];
};

/** The nth message troupe mails to `codex`, once it is there. */
const mailToCodex = (dir: string, n = 1) =>
  waitFor(async () => {
    const mail = await inbox(dir, 'codex');
    return mail.length >= n ? mail[n - 1] : undefined;
  }, 30_000);

const read = async (dir: string, id: string) => {
  const r = await troupe(dir, ['bus', 'read', '--me', 'codex', '--id', id]);
  expect(r.code).toBe(0);
  return r.stdout;
};

describe('runtime: mailbox — a stage given to a live agent or a person on the bus', () => {
  it('the foreground run waits on the bus, shows who it waits for, and completes with the reply from another process', async () => {
    const dir = project({ 'p.yaml': pipeline(), 's.yaml': script });
    const run = spawnTroupe(dir, [
      'run',
      'a launch note',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--json',
    ]);
    const asked = await mailToCodex(dir);
    expect(asked).toMatchObject({ from: 'reviewer', kind: 'question' });
    expect(asked.labels).toContain('troupe');
    const taskId = asked.thread.replace(/^task\//, '');
    expect(asked.context?.troupe).toMatchObject({ task: taskId, stage: 2 });
    expect(asked.context?.troupe?.reply).toContain(`--me codex --to reviewer --thread task/${taskId}`);

    const status = await troupe(dir, ['status', taskId]);
    expect(status.stdout).toContain(`${taskId}  waiting`);
    expect(status.stdout).toContain('waiting for codex on the bus (reviewer, stage 2');
    const statusJson = await troupeJson(dir, ['status', taskId]);
    expect(statusJson.json.status).toBe('waiting');

    const body = await read(dir, asked.id);
    expect(body).toContain('Review this draft: Draft: troupe mails stages to live agents.');
    const reply = await troupe(dir, [
      'bus',
      'reply',
      '--me',
      'codex',
      '--id',
      asked.id,
      '--body',
      'LGTM: ship it',
    ]);
    expect(reply.code).toBe(0);

    const done = await run;
    expect(done.exitCode).toBe(0);
    const json = JSON.parse(String(done.stdout)) as TaskJson;
    expect(json.status).toBe('completed');
    expect(json.stages.map((s) => [s.agent, s.status, s.output])).toEqual([
      ['writer', 'completed', 'Draft: troupe mails stages to live agents.'],
      ['reviewer', 'completed', 'LGTM: ship it'],
    ]);
    expect(json.stages[1]!.usage).toMatchObject({ input_tokens: 0, output_tokens: 0, unknown: true });
    expect(json.stages[1]!.usage).not.toHaveProperty('cost_usd');
  });

  it('outlives the process: killed while it waits, `troupe resume` takes the reply that came meanwhile', async () => {
    const dir = project({ 'p.yaml': pipeline(), 's.yaml': script });
    const run = spawnTroupe(dir, [
      'run',
      'a launch note',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--json',
    ]);
    const asked = await mailToCodex(dir);
    const taskId = asked.thread.replace(/^task\//, '');
    run.kill('SIGKILL');
    await run;

    // a plain send on the task's thread, as the message's reply command says, counts as well
    const sent = await troupe(
      dir,
      [
        'bus',
        'send',
        '--me',
        'codex',
        '--to',
        'reviewer',
        '--thread',
        `task/${taskId}`,
        '--kind',
        'answer',
        '--body',
        '-',
      ],
      {},
      'Approved after a night’s sleep.',
    );
    expect(sent.code).toBe(0);
    const resumed = await troupeJson(dir, ['resume', taskId]);
    expect(resumed.code).toBe(0);
    expect(resumed.json.status).toBe('completed');
    expect(resumed.json.stages[1]!.output).toBe('Approved after a night’s sleep.');
    // the stage was waiting on the bus, not cut off: it was mailed once and not run again
    const types = eventLog(dir, taskId).map((e) => e.type);
    expect(types.filter((t) => t === 'mailbox_asked')).toHaveLength(1);
    expect(types).not.toContain('stage_interrupted');
    expect(await inbox(dir, 'reviewer')).toHaveLength(0); // the reply was taken
  });

  it('`troupe serve` takes the reply of a task left waiting and carries it on', async () => {
    const dir = project({ 'p.yaml': pipeline(), 's.yaml': script });
    const run = spawnTroupe(dir, [
      'run',
      'a launch note',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--json',
    ]);
    const asked = await mailToCodex(dir);
    const taskId = asked.thread.replace(/^task\//, '');
    run.kill('SIGKILL');
    await run;
    const server = await serve(dir);
    try {
      await troupe(dir, [
        'bus',
        'reply',
        '--me',
        'codex',
        '--id',
        asked.id,
        '--body',
        'Reviewed from my terminal.',
      ]);
      const done = await waitFor(async () => {
        const status = await troupeJson(dir, ['status', taskId]);
        return status.json.status === 'completed' ? status.json : undefined;
      }, 30_000);
      expect(done.stages[1]!.output).toBe('Reviewed from my terminal.');
    } finally {
      await server.stop();
    }
  });

  it("a gate rejecting the mailbox agent's output sends the stage back to it in a new message", async () => {
    const dir = project({
      'p.yaml': pipeline('    gate: { type: llm, runtime: claude, max_retries: 2 }\n'),
      's.yaml': `${script}gates:
  reviewer:
    - { decision: rejected, reason: "name the release" }
    - approved
`,
    });
    const run = spawnTroupe(dir, [
      'run',
      'a launch note',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--json',
    ]);
    const first = await mailToCodex(dir);
    await troupe(dir, ['bus', 'reply', '--me', 'codex', '--id', first.id, '--body', 'Looks fine.']);
    const second = await mailToCodex(dir, 2);
    expect(second.thread).toBe(first.thread);
    expect(await read(dir, second.id)).toContain('name the release');
    await troupe(dir, [
      'bus',
      'reply',
      '--me',
      'codex',
      '--id',
      second.id,
      '--body',
      'Fine for release 2.0.',
    ]);

    const done = await run;
    expect(done.exitCode).toBe(0);
    const json = JSON.parse(String(done.stdout)) as TaskJson;
    expect(json.stages.map((s) => [s.agent, s.output, s.gate?.decision ?? null])).toEqual([
      ['writer', 'Draft: troupe mails stages to live agents.', null],
      ['reviewer', 'Looks fine.', 'rejected'],
      ['reviewer', 'Fine for release 2.0.', 'approved'],
    ]);
  });

  it('`timeout:` ends a stage nobody answered as the usual timeout failure', async () => {
    const dir = project({
      'p.yaml': pipeline('    timeout: 1\n    retry: { max_retries: 0 }\n'),
      's.yaml': script,
    });
    const { code, json } = await troupeJson(dir, [
      'run',
      'a launch note',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(code).not.toBe(0);
    expect(json.status).toBe('failed');
    expect(json.stages[1]).toMatchObject({ agent: 'reviewer', status: 'failed' });
    const stage = json.stages[1] as unknown as { error: { kind: string; message: string } };
    expect(stage.error.kind).toBe('timeout');
    expect(stage.error.message).toContain('no reply from codex on the bus');
    expect(json.error).toContain("agent 'reviewer' failed");
  });

  it('a mailbox agent without a handle, or mailing itself, is an error at its line; an llm gate with no runtime a warning', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: reviewer
    runtime: mailbox
`,
      'q.yaml': `agents:
  - id: codex
    runtime: mailbox
    handle: codex
`,
      'g.yaml': `agents:
  - id: reviewer
    runtime: mailbox
    handle: codex
    gate: { type: llm }
`,
    });
    const noHandle = await troupe(dir, ['validate', 'p.yaml']);
    expect(noHandle.code).toBe(2);
    expect(noHandle.stdout).toMatch(
      /^p\.yaml:3:14: error: agent `reviewer` has runtime mailbox but no `handle`$/m,
    );
    const itself = await troupe(dir, ['validate', 'q.yaml']);
    expect(itself.code).toBe(2);
    expect(itself.stdout).toMatch(/^q\.yaml:4:13: error: agent `codex` would mail its stages to itself/m);
    const gate = await troupe(dir, ['validate', 'g.yaml']);
    expect(gate.code).toBe(0);
    expect(gate.stdout).toMatch(
      /^g\.yaml:5:11: warning: agent `reviewer`'s llm gate would run on runtime mailbox/m,
    );
  });
});
