import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { example, project, troupe, troupeJson } from './support/troupe.js';

/**
 * The red team's H1: an agent (or anything that can write the project's mail) approved its own
 * gate by replying `approve` as `user` on the bus, or could run `troupe approve` from its shell.
 * Only the person decides: by default a reply on the bus does not decide a gate, and `troupe
 * approve` refuses to run inside an agent's processes; each decision records where it came from.
 */

const noHuman = `agents:
  developer: ["Refactored auth into token.ts and session.ts."]
  deployer: ["Ready to deploy 2.0.0 to staging."]
`;

interface Listed {
  id: string;
  kind: string;
}

/** The human-deploy example run to its human gate (its question answered on the command line). */
async function atTheGate(files: Record<string, string> = {}) {
  const dir = project({ 's.yaml': noHuman, ...files });
  const file = example('human-deploy');
  const first = await troupeJson(dir, ['run', 'Refactor auth', '--file', file, '--script', 's.yaml']);
  const id = first.json.id;
  const answered = await troupeJson(dir, ['human-input', id, 'keep the public API']);
  expect(answered.json.status).toBe('awaiting_gate');
  return { dir, id };
}

/** What a forger does: reads the person's mail and answers the review request as them. */
async function forgeApproval(dir: string): Promise<void> {
  const listed = await troupe(dir, ['bus', 'list', '--me', 'user', '--json']);
  const review = (JSON.parse(listed.stdout) as Listed[]).find((m) => m.kind === 'review_request');
  expect(review).toBeDefined();
  const reply = await troupe(dir, ['bus', 'reply', '--me', 'user', '--id', review!.id, '--body', 'approve']);
  expect(reply.code).toBe(0);
}

describe('only the person decides a gate', () => {
  it('a reply on the bus as `user` does not approve a gate, and the mail says how to decide', async () => {
    const { dir, id } = await atTheGate();
    const inbox = join(dir, '.agent-mail', 'agents', 'user', 'inbox', 'new');
    const mail = readdirSync(inbox).map((name) => readFileSync(join(inbox, name), 'utf8'));
    expect(mail.find((m) => m.includes('review_request'))).toContain(`Decide with \`troupe approve ${id}\``);
    await forgeApproval(dir);
    const after = await troupeJson(dir, ['resume', id]);
    expect(after.json.status).toBe('awaiting_gate');
    expect(after.json.stages[1]!.gate).toBeNull();
  });

  it('troupe approve run inside an agent is refused; from a person it is recorded with who and how', async () => {
    const { dir, id } = await atTheGate();
    // what an agent's shell carries (runtimes/supervisor.ts): every process under an agent has it
    const forged = await troupe(dir, ['approve', id], { TROUPE_AGENT_TAG: `${id}/1x.abc` });
    expect(forged.code).toBe(2);
    expect(forged.stderr).toContain('an agent cannot decide a gate');
    expect((await troupeJson(dir, ['status', id])).json.status).toBe('awaiting_gate');
    const approved = await troupeJson(dir, ['approve', id, '-r', 'ship it']);
    expect(approved.json.status).toBe('completed');
    expect(approved.json.stages[1]!.gate).toMatchObject({
      decision: 'approved',
      by: 'human',
      from: { channel: 'cli', who: expect.stringMatching(/^.+@.+$/) },
    });
  });

  it('a project that allows mail verdicts takes the reply, and records that it came by mail', async () => {
    const { dir, id } = await atTheGate({ '.troupe/config.yaml': 'gate:\n  mail_verdicts: true\n' });
    await forgeApproval(dir);
    const after = await troupeJson(dir, ['resume', id]);
    expect(after.json.status).toBe('completed');
    expect(after.json.stages[1]!.gate).toMatchObject({ from: { channel: 'mail', who: 'user' } });
  });
});
