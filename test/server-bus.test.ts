import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Served, serve } from './support/serve.js';
import { project, troupe } from './support/troupe.js';

/** The bus routes of a real `troupe serve --token`, on a bus made and read by the CLI. */

const TOKEN = 'bus-token-for-the-test';
let dir: string;
let server: Served;

async function http(path: string, init: RequestInit & { token?: string | null } = {}) {
  const { token = TOKEN, ...rest } = init;
  const response = await fetch(new URL(path, server.url), {
    ...rest,
    headers: {
      'Content-Type': 'application/json',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(rest.headers as Record<string, string> | undefined),
    },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function cli(args: string[]) {
  const result = await troupe(dir, ['bus', ...args, '--root', '.agent-mail', '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

beforeAll(async () => {
  dir = project();
  await cli(['init', '--agents', 'planner,coder']);
  server = await serve(dir, ['--token', TOKEN]);
});
afterAll(async () => {
  await server?.stop();
});

describe('the bus over HTTP', () => {
  it("sends and replies as user with the token, and the agents' CLI reads it on the thread", async () => {
    const asked = await cli([
      'send',
      '--me',
      'planner',
      '--to',
      'user',
      '--subject',
      'Scope?',
      '--kind',
      'question',
      '--body',
      'Just the parser?',
    ]);
    const roster = await http('/api/bus/roster');
    expect(roster.status).toBe(200);
    expect(roster.body).toMatchObject({ session: null, sessions: [] });
    expect(roster.body.agents).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ handle: 'planner', presence: 'active' }),
        expect.objectContaining({ handle: 'user', backlog: { new: 1, cur: 0 } }),
      ]),
    );

    const opened = await http(`/api/bus/mailboxes/user/inbox/${asked.id}`);
    expect(opened).toMatchObject({ status: 200, body: { body: 'Just the parser?\n', read: true } });

    const reply = { id: asked.id, body: 'Parser and tests.' };
    expect(
      (await http('/api/bus/reply', { method: 'POST', body: JSON.stringify(reply), token: null })).status,
    ).toBe(401);
    const foreign = {
      method: 'POST',
      body: JSON.stringify(reply),
      headers: { Origin: 'http://evil.example' },
    };
    expect((await http('/api/bus/reply', foreign)).status).toBe(403);
    const replied = await http('/api/bus/reply', { method: 'POST', body: JSON.stringify(reply) });
    expect(replied).toMatchObject({ status: 201, body: { thread: asked.thread, to: ['planner'] } });

    const sent = await http('/api/bus/send', {
      method: 'POST',
      body: JSON.stringify({
        to: ['planner', 'coder'],
        thread: 'plan/parser',
        subject: 'Kickoff',
        body: 'Go.',
      }),
    });
    expect(sent).toMatchObject({ status: 201, body: { delivered: ['planner', 'coder'] } });
    expect(
      (
        await http('/api/bus/send', {
          method: 'POST',
          body: JSON.stringify({ to: ['planner', 'coder'], body: 'x' }),
        })
      ).body,
    ).toMatchObject({
      error: { code: 'usage', message: '--thread is required with more than one recipient' },
    });

    const planner = (await cli(['drain', '--me', 'planner', '--include-body'])) as {
      drained: { from: string; thread: string; subject: string }[];
    };
    expect(planner.drained.map((m) => [m.from, m.thread, m.subject])).toEqual([
      ['user', asked.thread, 'Re: Scope?'],
      ['user', 'plan/parser', 'Kickoff'],
    ]);
    // opened over HTTP, the question is read as `bus read` leaves it: no longer in `list --new`
    const unread = await troupe(dir, [
      'bus',
      'list',
      '--me',
      'user',
      '--new',
      '--root',
      '.agent-mail',
      '--json',
    ]);
    expect(JSON.parse(unread.stdout)).toEqual([]);
  });
});
