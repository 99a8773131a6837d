import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseFrame, type SseFrame } from '../../test/support/serve.js';
import { example, project, waitFor, writerEditorPipeline } from '../../test/support/troupe.js';
import { openBus } from '../bus/bus.js';
import { TASK_STATUSES } from '../core/events.js';
import { loadProjectConfig } from '../pipeline/config.js';
import { loadPipeline } from '../pipeline/load.js';
import { initRegistry } from '../registry/init.js';
import { publishPipeline } from '../registry/publish.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { errorStatuses, type Route } from './api/define.js';
import { LiveFrame } from './api/events.js';
import { AQM_FRAME_NAMES } from './api/live-events.js';
import { apiRoutes, ErrorBody } from './api/routes.js';
import { createApp, type TroupeApp } from './app.js';
import { openApiDocument } from './openapi.js';

/**
 * The API answers what it declares: every route driven on a real project, in process, and every
 * answer parsed with the schema its route declares for that status. The schemas are strict, so a
 * field the declaration does not have fails here.
 */

const chunky = `agents:
  - id: planner
    runtime: claude
    system_prompt: "Plan: {{ input }} {{ chunks }}"
    chunks:
      initial: ["write the parser", "write the tests"]
    gate: { type: human }
`;
// a planner's two pieces, in place (no worktrees: nothing to diff)
const planned = `workspace: { isolation: none }
agents:
  - id: planner
    runtime: claude
    plan: { worker: builder, verifier: checker }
  - id: builder
    runtime: claude
  - id: checker
    runtime: claude
`;
const plannedScript = {
  agents: {
    planner: [
      '{"pieces": [{"id": "a", "goal": "A", "paths": ["a.txt"]}, {"id": "b", "goal": "B", "paths": ["b.txt"], "depends_on": ["a"]}]}',
    ],
    builder: ['built'],
  },
  gates: { builder: ['approved'] },
};
// its own provider, so that its closed window holds up no other task
const limited = 'agents:\n  - id: solo\n    runtime: gemini\n';
// fails at once, with a hint: its key variable is not set
const keyless =
  'agents:\n  - id: solo\n    runtime: openai\n    model: m\n    openai: {api_key_env: TROUPE_CONTRACT_NO_SUCH_KEY}\n';

let root: string;
let served: TroupeApp;
const WEBHOOK_SECRET = 'contract-webhook-secret';
let wakes = 0;
const answered = new Set<Route>();

beforeAll(() => {
  root = project({
    '.troupe/config.yaml': 'default_pipeline: write\n',
    '.troupe/pipelines/write.yaml': writerEditorPipeline,
    '.troupe/pipelines/chunky.yaml': chunky,
    '.troupe/pipelines/planned.yaml': planned,
    '.troupe/pipelines/limited.yaml': limited,
    '.troupe/pipelines/keyless.yaml': keyless,
    '.troupe/pipelines/team.yaml': writerEditorPipeline,
    '.troupe/pipelines/deploy.yaml': readFileSync(example('human-deploy'), 'utf8'),
    '.troupe/pipelines/design.yaml': readFileSync(example('design-session'), 'utf8'),
    'design-script.yaml': readFileSync(example('design-session', 'script.yaml'), 'utf8'),
  });
  const store = openSqliteStore(path.join(root, '.troupe', 'troupe.db'));
  served = createApp({
    project: { root, store, config: loadProjectConfig(root) },
    pollMs: 10,
    webhooks: { secrets: { github: WEBHOOK_SECRET, linear: WEBHOOK_SECRET }, wake: () => wakes++ },
  });
  served.start();
});
afterAll(async () => {
  served.stop();
  await served.ctx.runner.drain(2000);
  served.ctx.store.close();
});

function routeOf(method: string, url: string): Route {
  const pathname = new URL(url, 'http://x').pathname;
  const found = apiRoutes.find(
    (r) =>
      r.method === method.toLowerCase() && new RegExp(`^${r.path.replace(/:\w+/g, '[^/]+')}$`).test(pathname),
  );
  if (!found) throw new Error(`no declared route ${method} ${pathname}`);
  return found;
}

/** A request, and its answer checked against what its route declares for that status. */
async function call<T = Record<string, unknown>>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; data: T }> {
  const response = await served.app.request(url, {
    method,
    headers: { Host: '127.0.0.1:8000', 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const route = routeOf(method, url);
  const status = response.status;
  const declared =
    route.responses[status] ??
    (errorStatuses(route).some((s) => s === status) ? { description: 'error', json: ErrorBody } : undefined);
  if (!declared) expect.fail(`${method} ${url} answered ${status}, undeclared: ${await response.text()}`);
  if ('frames' in declared) expect(response.headers.get('content-type')).toContain('text/event-stream');
  if (!('json' in declared)) {
    if ('content' in declared && declared.content)
      expect(response.headers.get('content-type')).toContain(declared.content);
    await response.body?.cancel();
    if (status < 300) answered.add(route);
    return { status, data: undefined as T };
  }
  const data = (await response.json()) as T;
  const parsed = declared.json.safeParse(data);
  expect(parsed.error?.issues ?? [], `${method} ${url} → ${status}`).toEqual([]);
  if (status < 300) answered.add(route);
  return { status, data };
}

/** A stream's frames, read until the one with id `seq`. */
async function framesUpTo(url: string, seq: number): Promise<SseFrame[]> {
  const response = await served.app.request(url, { headers: { Host: '127.0.0.1:8000' } });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const frames: SseFrame[] = [];
  let buffer = '';
  while (!frames.some((frame) => frame.id === String(seq))) {
    const { value, done } = await reader.read();
    if (done) break;
    const blocks = (buffer + value).split('\n\n');
    buffer = blocks.pop()!;
    for (const frame of blocks.map(parseFrame)) if (frame) frames.push(frame);
  }
  await reader.cancel();
  return frames;
}

type Detail = { status: string; stages: unknown[]; last_seq: number };

function until(id: string, ...statuses: string[]) {
  return waitFor(async () => {
    const { data } = await call<Detail>('GET', `/api/tasks/${id}`);
    return statuses.includes(data.status) ? data : undefined;
  });
}

async function run(body: Record<string, unknown>): Promise<string> {
  const { status, data } = await call<{ task_id: string }>('POST', '/api/run', body);
  expect(status).toBe(202);
  return data.task_id;
}

describe('every route answers what it declares', () => {
  it('the server and its pipelines: list, show, save, edit an agent, validate', async () => {
    await call('GET', '/api/health');
    await call('GET', '/api/openapi.json');
    await call('GET', '/api/pipelines');
    await call('GET', '/api/pipelines/write');
    await call('GET', '/api/pipelines/write/yaml');
    await call('GET', '/api/agents');
    await call('GET', '/api/agents?pipeline=design');
    expect(
      (await call('POST', '/api/validate', { name: 'write', content: writerEditorPipeline })).status,
    ).toBe(200);
    const solo = { content: 'agents:\n  - id: solo\n    runtime: claude\n' };
    expect((await call('PUT', '/api/pipelines/solo', solo)).status).toBe(201);
    expect((await call('PUT', '/api/pipelines/solo', solo)).status).toBe(200);
    expect(
      (await call('PUT', '/api/pipelines/solo', { content: 'agents: [{id: a, handoffs: [{to: b}]}]' }))
        .status,
    ).toBe(422);
    expect((await call('POST', '/api/pipelines/default', { name: 'write' })).status).toBe(200);

    await call('GET', '/api/pipelines/team/agents');
    const reviewer = {
      id: 'reviewer',
      runtime: 'gemini',
      gate: { type: 'llm', prompt: 'Is it right?', max_retries: '2' },
      handoffs: [{ to: 'writer', condition: 'on_reject' }],
      human_input: { enabled: true, mode: 'before' },
    };
    expect((await call('POST', '/api/pipelines/team/agents', reviewer)).status).toBe(201);
    expect(
      (await call('PUT', '/api/pipelines/team/agents/reviewer', { model: 'gemini-2.5-pro' })).status,
    ).toBe(200);
    expect(
      (await call('PUT', '/api/pipelines/team/agents/writer', { handoffs: [{ to: 'nobody' }] })).status,
    ).toBe(422);
    expect((await call('DELETE', '/api/pipelines/team/agents/reviewer')).status).toBe(200);
  });

  it('a run: detail, context, its stream, restart and a fix', async () => {
    const id = await run({ input: 'a haiku', script: { agents: { writer: ['draft'], editor: ['edited'] } } });
    const done = await until(id, 'completed');
    await call('GET', `/api/tasks/${id}/context`);
    await call('GET', `/api/tasks/${id}/events`);
    expect((await call('GET', `/api/tasks/${id}/events?after=${done.last_seq}`)).status).toBe(204);
    await call('GET', '/api/events');
    expect((await call('POST', `/api/tasks/${id}/restart`, { from_stage: 2 })).status).toBe(202);
    await until(id, 'completed', 'failed');
    const fix = await call('POST', '/api/fix', {
      parent_task_id: id,
      description: 'shorter',
      script: { agents: { writer: ['fixed'], editor: ['ok'] } },
    });
    expect(fix.status).toBe(202);
    await call('GET', '/api/tasks?limit=1');
  });

  it("a plan: the task's graph in its detail", async () => {
    const id = await run({ input: 'two pieces', pipeline: 'planned', script: plannedScript });
    await until(id, 'completed');
    const { data } = await call<{ plan: { pieces: { id: string; status: string; level: number }[] } }>(
      'GET',
      `/api/tasks/${id}`,
    );
    expect(data.plan.pieces.map((p) => [p.id, p.status, p.level])).toEqual([
      ['a', 'merged', 0],
      ['b', 'merged', 1],
    ]);
  });

  it('a person answers, rejects and approves', async () => {
    const script = { agents: { developer: ['built', 'rebuilt'], deployer: ['ready', 'ready again'] } };
    const id = await run({ input: 'ship it', pipeline: 'deploy', script });
    await until(id, 'awaiting_human_input');
    expect((await call('POST', `/api/tasks/${id}/human-input`, { response: 'keep the API' })).status).toBe(
      202,
    );
    await until(id, 'awaiting_gate');
    expect((await call('POST', `/api/tasks/${id}/reject`, { reason: 'not yet' })).status).toBe(202);
    await until(id, 'awaiting_gate', 'failed');
    const gated = await run({ input: 'ship it', pipeline: 'deploy', script });
    await until(gated, 'awaiting_human_input');
    await call('POST', `/api/tasks/${gated}/human-input`, { answer: 'as is' });
    await until(gated, 'awaiting_gate');
    // nothing runs it (the gate waits for a person): resuming it looks again and leaves it waiting
    expect((await call('POST', `/api/tasks/${gated}/resume`)).status).toBe(202);
    await until(gated, 'awaiting_gate');
    expect((await call('POST', `/api/tasks/${gated}/approve`, { reason: 'LGTM' })).status).toBe(202);
    await until(gated, 'completed');
  });

  it('chunks: the board, add, done, remove; then cancel', async () => {
    const id = await run({
      input: 'a parser',
      pipeline: 'chunky',
      script: { agents: { planner: ['planned'] } },
    });
    await until(id, 'awaiting_gate');
    await call('GET', `/api/tasks/${id}/chunks`);
    expect((await call('POST', `/api/tasks/${id}/chunks`, { description: 'document it' })).status).toBe(201);
    expect((await call('PATCH', `/api/tasks/${id}/chunks/C-001`, { status: 'done' })).status).toBe(200);
    expect((await call('PATCH', `/api/tasks/${id}/chunks/C-001`, { status: 'pending' })).status).toBe(400);
    expect((await call('DELETE', `/api/tasks/${id}/chunks/C-002`)).status).toBe(200);
    expect((await call('POST', `/api/tasks/${id}/cancel`, {})).status).toBe(200);
    expect((await call('POST', `/api/tasks/${id}/resume`)).status).toBe(409);
  });

  it('a session, round by round', async () => {
    const id = await run({
      input: 'How should we do auth?',
      pipeline: 'design',
      script: 'design-script.yaml',
    });
    const done = await until(id, 'completed');
    expect(done.stages.length).toBeGreaterThan(0);
  });

  it('?status=waiting lists the task that waits for a provider', async () => {
    const script = { agents: { solo: [{ error: 'rate_limit', reset_after_s: 600 }, 'done'] } };
    const id = await run({ input: 'limited', pipeline: 'limited', script });
    await until(id, 'waiting');
    const { status, data } = await call<{ tasks: { id: string; status: string }[] }>(
      'GET',
      '/api/tasks?status=waiting',
    );
    expect(status).toBe(200);
    expect(data.tasks.map((t) => [t.id, t.status])).toEqual([[id, 'waiting']]);
    await call('POST', `/api/tasks/${id}/cancel`, { reason: 'enough' });
  });

  it('a task from a tracker carries its issue in the list and in its detail', async () => {
    const issue = { source: 'linear:eng', id: 'u-1', identifier: 'ENG-7', url: null, state: 'Todo' };
    const pipeline = loadPipeline(path.join(root, '.troupe/pipelines/write.yaml'));
    const id = served.ctx.tasks.start({ pipeline, input: 'from linear', cwd: root, issue });
    const list = await call<{ tasks: { id: string; issue: unknown }[] }>('GET', '/api/tasks?limit=100');
    expect(list.data.tasks.find((t) => t.id === id)?.issue).toEqual(issue);
    expect(list.data.tasks.filter((t) => t.id !== id).map((t) => t.issue)).not.toContainEqual(
      expect.anything(),
    );
    expect((await call<{ issue: unknown }>('GET', `/api/tasks/${id}`)).data.issue).toEqual(issue);
    await call('POST', `/api/tasks/${id}/cancel`, { reason: 'enough' });
  });

  it("a failed task's detail carries its error's hint", async () => {
    const id = await run({ input: 'x', pipeline: 'keyless' });
    const failed = (await until(id, 'failed')) as Detail & { hint: string | null };
    expect(failed.hint).toBe('export TROUPE_CONTRACT_NO_SUCH_KEY=… before running troupe');
    expect(failed.stages[0]).toMatchObject({ error: { kind: 'auth', hint: failed.hint } });
  });

  it('the bus: roster, an inbox, a message, send and reply, on a session', async () => {
    const base = path.join(root, '.agent-mail');
    const codex = openBus(path.join(base, 'review'), { baseRoot: base, session: 'review' });
    codex.init(['codex']);
    const asked = codex.send({
      from: 'codex',
      to: 'user',
      subject: 'Which API?',
      body: 'REST or RPC?',
      kind: 'question',
    });

    expect((await call('GET', '/api/bus/roster')).status).toBe(200);
    const roster = await call<{ session: string; sessions: string[]; agents: unknown[] }>(
      'GET',
      '/api/bus/roster?session=review',
    );
    expect(roster.data).toMatchObject({ session: 'review', sessions: ['review'] });
    expect(roster.data.agents).toEqual([
      expect.objectContaining({
        handle: 'codex',
        kind: 'agent',
        presence: 'active',
        backlog: { new: 0, cur: 0 },
      }),
      expect.objectContaining({
        handle: 'user',
        kind: 'human',
        presence: 'offline',
        backlog: { new: 1, cur: 0 },
      }),
    ]);
    type Inbox = { messages: { id: string; read: boolean }[] };
    const inbox = await call<Inbox>('GET', '/api/bus/mailboxes/user/inbox?session=review');
    expect(inbox.data.messages).toEqual([
      expect.objectContaining({ id: asked.id, read: false, kind: 'question' }),
    ]);
    const opened = await call<{ body: string }>(
      'GET',
      `/api/bus/mailboxes/user/inbox/${asked.id}?session=review`,
    );
    expect(opened.data.body).toBe('REST or RPC?\n');
    expect(
      (await call<Inbox>('GET', '/api/bus/mailboxes/user/inbox?session=review')).data.messages[0]?.read,
    ).toBe(true);

    const replied = await call<{ thread: string; to: string[] }>('POST', '/api/bus/reply?session=review', {
      id: asked.id,
      body: 'REST',
    });
    expect(replied).toMatchObject({ status: 201, data: { thread: asked.thread, to: ['codex'] } });
    const sent = await call<{ id: string }>('POST', '/api/bus/send?session=review', {
      to: ['codex'],
      subject: 'Ship it',
      body: 'today',
      priority: 'urgent',
      kind: 'todo',
    });
    expect(sent.status).toBe(201);
    expect(codex.list('codex').items.map((m) => [m.subject, m.kind, m.thread])).toEqual([
      ['Re: Which API?', 'answer', asked.thread],
      ['Ship it', 'todo', asked.thread],
    ]);
    // an agent's message is shown, not taken from it
    const peeked = await call<{ read: boolean }>(
      'GET',
      `/api/bus/mailboxes/codex/inbox/${sent.data.id}?session=review`,
    );
    expect(peeked.data.read).toBe(false);
    expect(
      (await call<Inbox>('GET', '/api/bus/mailboxes/codex/inbox?session=review')).data.messages,
    ).toHaveLength(2);

    const status = async (method: string, url: string, body?: unknown) =>
      (await call(method, url, body)).status;
    expect(await status('GET', '/api/bus/roster?session=nope')).toBe(404);
    expect(await status('GET', '/api/bus/mailboxes/nobody/inbox?session=review')).toBe(404);
    expect(await status('GET', '/api/bus/mailboxes/user/inbox/no-such-id?session=review')).toBe(404);
    expect(await status('GET', '/api/bus/mailboxes/Bad!/inbox')).toBe(400);
    expect(await status('POST', '/api/bus/send?session=review', { to: ['nobody'], body: 'x' })).toBe(404);
    expect(await status('POST', '/api/bus/send?session=review', { to: [], body: 'x' })).toBe(400);
    expect(await status('POST', '/api/bus/send?session=review', { to: ['codex'], body: ' ' })).toBe(400);
    expect(
      await status('POST', '/api/bus/send?session=review', { to: ['codex'], body: 'x', priority: 'asap' }),
    ).toBe(400);
    expect(await status('POST', '/api/bus/reply?session=review', { id: 'no-such-id', body: 'x' })).toBe(404);
  });

  it('a bad request is a one-line 400 that names the field', async () => {
    const error = async (method: string, url: string, body?: unknown) => {
      const { status, data } = await call<{ error: { code: string; message: string } }>(method, url, body);
      expect(status).toBe(400);
      expect(data.error.code).toBe('bad_request');
      return data.error.message;
    };
    expect(await error('POST', '/api/run', {})).toBe('input: is required');
    expect(await error('POST', '/api/run', { input: 'x', size: 'huge' })).toMatch(
      /^size: .*"S"\|"M"\|"L"\|"XL"$/,
    );
    expect(await error('POST', '/api/run', [])).toBe(
      'the body: Invalid input: expected object, received array',
    );
    expect(await error('GET', '/api/tasks?status=running,bogus')).toMatch(/^\?status: .*"waiting"/);
    expect(await error('GET', '/api/tasks?limit=0')).toMatch(/^\?limit: /);
    expect((await call('POST', '/api/run', { input: 'x'.repeat(300 * 1024) })).status).toBe(413);
  });

  it('takes every value its query parameters declare', async () => {
    const doc = openApiDocument() as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: Schema }[] }>>;
      components: { schemas: Record<string, Schema> };
    };
    type Schema = { enum?: string[]; items?: Schema; $ref?: string };
    const resolve = (s: Schema): Schema => (s.$ref ? doc.components.schemas[s.$ref.split('/').at(-1)!]! : s);
    const tried: string[] = [];
    for (const [p, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const param of operation.parameters ?? []) {
          if (param.in !== 'query') continue;
          const schema = resolve(param.schema);
          for (const value of resolve(schema.items ?? schema).enum ?? []) {
            const url = `${p}?${param.name}=${value}`;
            tried.push(url);
            expect((await call(method, url)).status, url).toBe(200);
          }
        }
      }
    }
    expect(tried).toEqual(expect.arrayContaining(TASK_STATUSES.map((s) => `/api/tasks?status=${s}`)));
  });

  it('the live stream sends the frames it declares, every event of the runs above among them', async () => {
    const { data } = await call<{ last_seq: number }>('GET', '/api/health');
    const frames = await framesUpTo('/api/events?after=0', data.last_seq);
    for (const { id, event, data } of frames) {
      const parsed = LiveFrame.safeParse(id === null ? { event, data } : { id, event, data });
      expect(parsed.error?.issues ?? [], `${event} ${JSON.stringify(data)}`).toEqual([]);
    }
    const own = frames.filter((frame) => frame.id !== null);
    expect(own.at(-1)?.id).toBe(String(data.last_seq));
    expect(own.every((frame) => (frame.data as { type: string }).type === frame.event)).toBe(true);
    // every aqm frame but stage_output (scripted replies stream no output), and a provider's wait
    const heard = [...AQM_FRAME_NAMES.filter((name) => name !== 'stage_output'), 'rate_limited'];
    expect([...new Set(frames.map((frame) => frame.event))]).toEqual(expect.arrayContaining(heard));
  });

  it("the registry: its catalog, a pipeline's versions, a version pulled; bad names and versions refused", async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'troupe-contract-home-'));
    const registry = path.join(home, 'registry');
    await initRegistry(registry);
    const config = loadProjectConfig(root);
    const location = { kind: 'path' as const, path: registry };
    await publishPipeline({ root, config, location, name: 'write', as: 'shared', description: 'two steps' });
    await publishPipeline({ root, config, location, name: 'write', as: 'shared', bump: 'minor' });
    vi.stubEnv('XDG_CACHE_HOME', path.join(home, 'cache'));
    vi.stubEnv('XDG_CONFIG_HOME', path.join(home, 'config'));
    vi.stubEnv('TROUPE_DEFAULT_REGISTRY', registry);
    try {
      const catalog = await call<{ pipelines: unknown[]; is_default: boolean }>('GET', '/api/registry');
      expect(catalog.data).toMatchObject({
        is_default: true,
        pipelines: [{ name: 'shared', versions: ['1.0.0', '1.1.0'], latest: '1.1.0', installed: null }],
      });
      expect((await call('GET', '/api/registry?query=nothing-like-it')).data).toMatchObject({
        pipelines: [],
      });
      expect((await call('GET', '/api/registry/shared/versions')).data).toEqual({
        name: 'shared',
        registry,
        versions: ['1.0.0', '1.1.0'],
        latest: '1.1.0',
      });
      const pulled = await call('POST', '/api/registry/shared/pull', { version: '1.0.0' });
      expect(pulled.data).toMatchObject({ name: 'shared', version: '1.0.0', status: 'installed' });
      expect(readFileSync(path.join(root, '.troupe', 'pipelines', 'shared', 'agents.yaml'), 'utf8')).toBe(
        writerEditorPipeline,
      );
      expect((await call('GET', '/api/registry')).data).toMatchObject({
        pipelines: [{ name: 'shared', installed: '1.0.0' }],
      });
      expect((await call('POST', '/api/registry/shared/pull', { version: '9.9.9' })).status).toBe(404);
      expect((await call('GET', '/api/registry/nope/versions')).status).toBe(404);
      for (const [name, body] of [
        ['..%2fx', { version: '1.0.0' }],
        ['.hidden', { version: '1.0.0' }],
        ['shared', { version: '^1.0' }],
        ['shared', { version: '1.0.0; rm -rf /' }],
        ['shared', { version: '1.0.0', path: '/etc' }],
      ] as const) {
        const refused = await call<{ error: { code: string } }>('POST', `/api/registry/${name}/pull`, body);
        expect(refused.status, `${name} ${JSON.stringify(body)}`).toBe(400);
      }
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('tracker webhooks: signed, the watch is woken; unsigned, tampered or stale, 401', async () => {
    const sign = (text: string) => createHmac('sha256', WEBHOOK_SECRET).update(text).digest('hex');
    const push = { action: 'opened', issue: { number: 1 } };
    const github = '/api/trackers/webhook/github';
    const signed = { 'X-Hub-Signature-256': `sha256=${sign(JSON.stringify(push))}` };
    expect((await call('POST', github, push, signed)).data).toEqual({ poll: 'soon' });
    expect(wakes).toBe(1);
    const other = { ...push, action: 'closed' };
    expect((await call('POST', github, other, signed)).status).toBe(401);
    expect((await call('POST', github, push)).status).toBe(401);
    const linear = '/api/trackers/webhook/linear';
    const fresh = { action: 'create', type: 'Issue', webhookTimestamp: Date.now() };
    const linearSigned = (body: unknown) => ({ 'Linear-Signature': sign(JSON.stringify(body)) });
    expect((await call('POST', linear, fresh, linearSigned(fresh))).status).toBe(202);
    const stale = { ...fresh, webhookTimestamp: Date.now() - 120_000 };
    const replay = await call<{ error: { message: string } }>('POST', linear, stale, linearSigned(stale));
    expect([replay.status, replay.data.error.message]).toEqual([
      401,
      expect.stringMatching(/webhookTimestamp/),
    ]);
    expect(wakes).toBe(2);
  });

  it('and every declared route was driven to a success', async () => {
    await call('GET', '/api/usage');
    // a SQLite project has no queue, so no workers
    expect((await call('GET', '/api/workers')).data).toEqual({ queue: null, workers: [] });
    expect((await call('GET', '/api/queue')).data).toEqual({
      queue: null,
      lanes: [],
      active: [],
      dead_letters: 0,
    });
    expect((await call('GET', '/metrics')).status).toBe(200);
    // nor parked tasks or dead letters
    expect((await call('GET', '/api/parked')).data).toEqual({ queue: null, parked: [], dead_letters: [] });
    expect((await call('POST', '/api/parked/resume')).data).toEqual({ resumed: [] });
    expect(apiRoutes.filter((r) => !answered.has(r)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });
});
