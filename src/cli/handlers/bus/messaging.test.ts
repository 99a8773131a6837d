import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Exit } from '../../exit-codes.js';
import { capturedIo } from '../testing.js';
import { drain, list, reply, send } from './messaging.js';
import { init } from './operations.js';

/** A fresh mailbox root for alice and bob (and user), as `troupe bus init --root` makes it. */
async function mailRoot(): Promise<string> {
  const root = join(mkdtempSync(join(tmpdir(), 'troupe-bus-handler-')), '.agent-mail');
  const io = capturedIo(root);
  expect(await init({ root, agents: 'alice,bob' }, io)).toBe(Exit.ok);
  expect(io.stdout()).toBe(`initialized ${root} with alice, bob, user\n`);
  return root;
}

describe('troupe bus send, reply, list and drain', () => {
  // the shell's own mailbox settings must not leak in
  beforeEach(() => {
    for (const name of ['AM_ROOT', 'AM_ME', 'AM_SESSION', 'AM_BASE_ROOT']) vi.stubEnv(name, undefined);
  });
  afterEach(() => void vi.unstubAllEnvs());

  it('delivers a message, lists it unread, drains it with its body, and replies on its thread', async () => {
    const root = await mailRoot();
    const sent = capturedIo(root);
    const flags = {
      root,
      me: 'alice',
      to: 'bob',
      subject: 'review?',
      kind: 'review_request',
      body: 'the diff',
    };
    expect(await send(flags, sent)).toBe(Exit.ok);
    const [, id, thread] = sent.stdout().match(/^sent (\S+) to bob \(thread (\S+)\)\n$/) ?? [];
    expect(thread).toBe('p2p/alice__bob');

    const unread = capturedIo(root);
    await list({ root, me: 'bob', json: true }, unread);
    expect(JSON.parse(unread.stdout())).toEqual([
      expect.objectContaining({ id, from: 'alice', subject: 'review?', kind: 'review_request' }),
    ]);

    const drained = capturedIo(root);
    await drain({ root, me: 'bob', includeBody: true }, drained);
    expect(drained.stdout()).toContain(
      `[AMQ] 1 new message(s) for bob:\n- From: alice\n  Thread: ${thread}\n  ID: ${id}`,
    );
    expect(drained.stdout()).toContain('  Body:\n  the diff\n---\n');

    const replied = capturedIo(root);
    await reply({ root, me: 'bob', id: id!, body: 'looks good', json: true }, replied);
    // a review request is answered with a review response, on the same thread
    expect(JSON.parse(replied.stdout())).toMatchObject({ to: ['alice'], thread });
    const inbox = capturedIo(root);
    await list({ root, me: 'alice', json: true }, inbox);
    expect(JSON.parse(inbox.stdout())).toEqual([
      expect.objectContaining({ from: 'bob', kind: 'review_response', subject: 'Re: review?' }),
    ]);
  });

  it('refuses to wait for a receipt from several recipients, before it sends', async () => {
    const root = await mailRoot();
    const io = capturedIo(root);
    const flags = { root, me: 'alice', to: 'bob,user', thread: 't', body: 'x', waitFor: 'drained' };
    await expect(send(flags, io)).rejects.toThrow('--wait-for needs exactly one recipient');
    const bob = capturedIo(root);
    await list({ root, me: 'bob', json: true }, bob);
    expect(JSON.parse(bob.stdout())).toEqual([]);
  });

  it('a --context that is not a JSON object is refused', async () => {
    const root = await mailRoot();
    const flags = { root, me: 'alice', to: 'bob', body: 'x', context: '[1]' };
    await expect(send(flags, capturedIo(root))).rejects.toThrow('--context must be a JSON object');
  });
});
