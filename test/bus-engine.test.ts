import { describe, expect, it } from 'vitest';
import { example, project, troupe, troupeJson } from './support/troupe.js';

const noHuman = `agents:
  developer: ["Refactored auth into token.ts and session.ts."]
  deployer: ["Ready to deploy 2.0.0 to staging."]
`;

interface Listed {
  id: string;
  from: string;
  kind: string;
  thread: string;
  subject: string;
}

const inbox = async (dir: string, me: string) => {
  const listed = await troupe(dir, ['bus', 'list', '--me', me, '--json']);
  return JSON.parse(listed.stdout) as Listed[];
};

describe('the bus in the engine', () => {
  it('a task waiting for a person writes to user on thread task/<id>, and replies there carry it on', async () => {
    // a verdict by mail needs the project's say-so (docs/security.md)
    const dir = project({ 's.yaml': noHuman, '.troupe/config.yaml': 'gate:\n  mail_verdicts: true\n' });
    const first = await troupeJson(dir, [
      'run',
      'Refactor auth',
      '--file',
      example('human-deploy'),
      '--script',
      's.yaml',
    ]);
    expect(first.code).toBe(6);
    const id = first.json.id;
    const [question] = await inbox(dir, 'user');
    expect(question).toMatchObject({ from: 'developer', kind: 'question', thread: `task/${id}` });

    const reply = await troupe(dir, [
      'bus',
      'reply',
      '--me',
      'user',
      '--id',
      question!.id,
      '--body',
      'keep the public API',
    ]);
    expect(reply.code).toBe(0);
    const answered = await troupeJson(dir, ['resume', id]);
    expect(answered.code).toBe(6);
    expect(answered.json.status).toBe('awaiting_gate');
    expect(answered.json.stages[0]!.input).toContain('--- User Input ---\nkeep the public API');

    const review = (await inbox(dir, 'user')).find((m) => m.kind === 'review_request');
    expect(review).toMatchObject({ from: 'deployer', thread: `task/${id}` });
    await troupe(dir, [
      'bus',
      'reply',
      '--me',
      'user',
      '--id',
      review!.id,
      '--body',
      'reject: staging is frozen today',
    ]);
    const rejected = await troupeJson(dir, ['resume', id]);
    expect(rejected.json.stages[1]!.gate).toMatchObject({
      decision: 'rejected',
      reason: 'staging is frozen today',
      by: 'human',
    });
  });

  it('agents message each other with SEND: and read their mail as {{ inbox }}', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: reviewer
    runtime: claude
    handoffs: [{to: implementer}]
  - id: implementer
    runtime: claude
    system_prompt: "Task: {{ input }}\\nMail:\\n{{ inbox }}"
`,
      's.yaml': `agents:
  reviewer:
    - |
      Review done.
      SEND: implementer: flaky test
      test/login.test.ts fails one run in ten.

      Nothing else.
  implementer:
    - when: "From reviewer \\\\(status: flaky test\\\\):\\ntest/login.test.ts fails one run in ten."
      reply: "fixed the flaky login test"
    - "did not see the mail"
`,
    });
    const { code, json } = await troupeJson(dir, [
      'run',
      'ship it',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(code).toBe(0);
    expect(json.stages[1]!.output).toBe('fixed the flaky login test');
    // drained when the prompt was sent
    expect(await inbox(dir, 'implementer')).toEqual([]);
  });
});
