import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse, type Served, serve } from './support/serve.js';
import { eventLog, example, project, troupe, waitFor, writerEditorPipeline } from './support/troupe.js';

/** `troupe serve` as people use it: a real server on a free loopback port, driven over HTTP. */

const slowScript = {
  agents: {
    writer: [{ reply: 'first draft\nwith two lines\n', delay_ms: 150 }],
    editor: [{ reply: 'edited draft', delay_ms: 150 }],
  },
};
const noHuman = `agents:
  developer: ["Refactored auth into token.ts and session.ts."]
  deployer: ["Ready to deploy 2.0.0 to staging."]
`;

const chunkyPipeline = `agents:
  - id: planner
    runtime: claude
    system_prompt: "Plan: {{ input }} {{ chunks }}"
    chunks:
      initial: ["write the parser", "write the tests"]
    gate: { type: human }
`;
const teamPipeline = `# the team: keep this comment
agents:
  - id: writer # the one who writes
    runtime: claude
    system_prompt: |
      Write: {{ input }}
    handoffs: [{ to: editor }]
  # the editor checks
  - id: editor
    runtime: claude
    system_prompt: "Edit: {{ input }}"
`;

const branchPipeline = `params:
  branch: main
agents:
  - id: checker
    runtime: command
    command: [node, -e, "0"]
    gate: { type: command, command: "test \${{ params.branch }} = main", max_retries: 1 }
`;

let dir: string;
let server: Served;
const api = (path: string) => new URL(path, server.url).toString();
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(api(path), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const getJson = async <T = Record<string, unknown>>(path: string) =>
  (await (await fetch(api(path))).json()) as T;

beforeAll(async () => {
  dir = project({
    '.troupe/pipelines/write.yaml': writerEditorPipeline,
    '.troupe/pipelines/deploy.yaml': (await import('node:fs')).readFileSync(example('human-deploy'), 'utf8'),
    '.troupe/config.yaml': 'default_pipeline: write\n',
    'no-human.yaml': noHuman,
    'write-script.yaml': 'agents:\n  writer: ["draft"]\n  editor: ["edited"]\n',
    '.troupe/pipelines/chunky.yaml': chunkyPipeline,
    '.troupe/pipelines/team.yaml': teamPipeline,
    '.troupe/pipelines/branch.yaml': branchPipeline,
    '.troupe/pipelines/design.yaml': (await import('node:fs')).readFileSync(
      example('design-session'),
      'utf8',
    ),
    'design-script.yaml': (await import('node:fs')).readFileSync(
      example('design-session', 'script.yaml'),
      'utf8',
    ),
  });
  server = await serve(dir);
});
afterAll(async () => {
  await server?.stop();
});

describe('troupe serve: REST API', () => {
  it('publishes its OpenAPI document and answers errors as {error: {code, message}} with the right status', async () => {
    const doc = await getJson<{ openapi: string; paths: Record<string, unknown> }>('/api/openapi.json');
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/api/tasks/{id}/events');

    const missing = await fetch(api('/api/tasks/T-NOPE00'));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'not_found', message: 'no task T-NOPE00' } });
    const noInput = await post('/api/run', {});
    expect(noInput.status).toBe(400);
    expect(((await noInput.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    const badJson = await fetch(api('/api/run'), {
      method: 'POST',
      body: '{',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    const noPipeline = await post('/api/run', { input: 'x', pipeline: 'nope' });
    expect(noPipeline.status).toBe(404);
    const noRoute = await fetch(api('/api/nothing'));
    expect(noRoute.status).toBe(404);
  });

  it('a param from POST /api/run is data: it never runs as shell text in a command gate', async () => {
    const ended = async (branch: string) => {
      const started = await post('/api/run', { input: 'x', pipeline: 'branch', params: { branch } });
      expect(started.status).toBe(202);
      const { task_id: id } = (await started.json()) as { task_id: string };
      return waitFor(async () => {
        const t = await getJson<{ status: string }>(`/api/tasks/${id}`);
        return ['completed', 'failed'].includes(t.status) ? t.status : undefined;
      });
    };
    const pwned = `${dir}/pwn_param_api`;
    expect(await ended(`main; touch ${pwned} #`)).toBe('failed');
    expect((await import('node:fs')).existsSync(pwned)).toBe(false);
    expect(await ended('main')).toBe('completed');
  });

  it('takes a task size with the run, and refuses one that is not S, M, L or XL', async () => {
    const started = await post('/api/run', { input: 'a haiku', script: 'write-script.yaml', size: 'L' });
    expect(started.status).toBe(202);
    const { task_id: id } = (await started.json()) as { task_id: string };
    expect(eventLog(dir, id).find((e) => e.type === 'task_sized')?.data).toMatchObject({
      size: 'L',
      by: 'api',
    });
    const bad = await post('/api/run', { input: 'x', size: 'huge' });
    expect(bad.status).toBe(400);
  });

  it('runs a scripted pipeline in the background and streams it to the end; Last-Event-ID replays exactly what was missed', async () => {
    const started = await post('/api/run', { input: 'a haiku', script: slowScript });
    expect(started.status).toBe(202);
    const {
      task_id: id,
      status,
      agent_id,
    } = (await started.json()) as { task_id: string; status: string; agent_id: string };
    expect([status, agent_id]).toEqual(['started', 'writer']);

    // a browser that drops after the first stage starts, then comes back with Last-Event-ID
    const first = await readSse(api(`/api/tasks/${id}/events`), {
      until: (f) => f.event === 'stage_started',
    });
    const lastId = first.frames.filter((f) => f.id !== null).at(-1)!.id!;
    const rest = await readSse(api(`/api/tasks/${id}/events`), { lastEventId: lastId });
    const frames = [...first.frames, ...rest.frames];

    const seqs = frames.filter((f) => f.id !== null).map((f) => Number(f.id));
    const log = eventLog(dir, id);
    expect(seqs).toEqual(log.map((e) => e.seq)); // nothing lost, nothing twice
    expect(frames.filter((f) => f.id !== null).map((f) => f.event)).toEqual(log.map((e) => e.type));
    // aqm's names, for aqm's front ends
    const aqm = frames.filter((f) => f.id === null).map((f) => f.event);
    expect(aqm).toEqual(['stage_start', 'stage_complete', 'stage_start', 'stage_complete', 'task_complete']);
    expect(frames.find((f) => f.event === 'stage_complete')!.data).toMatchObject({
      agent_id: 'writer',
      stage_number: 1,
      output_preview: 'first draft\nwith two lines\n',
    });

    // the task has ended and everything was sent: 204 stops EventSource from reconnecting
    const after = await fetch(api(`/api/tasks/${id}/events`), {
      headers: { 'Last-Event-ID': String(seqs.at(-1)) },
    });
    expect(after.status).toBe(204);

    const task = await getJson<{
      status: string;
      stages: { agent: string; output: string }[];
      graph: { nodes: unknown[] };
    }>(`/api/tasks/${id}`);
    expect(task.status).toBe('completed');
    expect(task.stages.map((s) => [s.agent, s.output])).toEqual([
      ['writer', 'first draft\nwith two lines\n'],
      ['editor', 'edited draft'],
    ]);
    expect(task.graph.nodes).toHaveLength(2);
    const context = await fetch(api(`/api/tasks/${id}/context`));
    expect(await context.text()).toContain('edited draft');
  });

  it('a person answers and approves over HTTP; the task carries on in the server', async () => {
    const started = await post('/api/run', {
      input: 'Refactor auth',
      pipeline: 'deploy',
      script: 'no-human.yaml',
    });
    const { task_id: id } = (await started.json()) as { task_id: string };
    const waiting = await waitFor(async () => {
      const list = await getJson<{ tasks: { id: string; waiting: unknown }[] }>('/api/tasks?waiting=true');
      return list.tasks.find((t) => t.id === id);
    });
    expect(waiting.waiting).toMatchObject({ kind: 'question', agent: 'developer' });

    expect((await post(`/api/tasks/${id}/approve`, {})).status).toBe(409); // not at a gate yet
    expect((await post(`/api/tasks/${id}/human-input`, { response: 'keep the API' })).status).toBe(202);
    await waitFor(async () =>
      (await getJson(`/api/tasks/${id}`)).status === 'awaiting_gate' ? true : undefined,
    );

    const reject = await post(`/api/tasks/${id}/reject`, {});
    expect(reject.status).toBe(400);
    // a state-changing request from another site is refused
    const forged = await post(`/api/tasks/${id}/approve`, {}, { Origin: 'http://evil.example' });
    expect(forged.status).toBe(403);

    const approve = await post(`/api/tasks/${id}/approve`, { reason: 'LGTM' });
    expect(approve.status).toBe(202);
    const done = await waitFor(async () => {
      const t = await getJson<{ status: string; stages: { gate: unknown }[] }>(`/api/tasks/${id}`);
      return t.status === 'completed' ? t : undefined;
    });
    expect(done.stages[1]!.gate).toMatchObject({ decision: 'approved', reason: 'LGTM', by: 'human' });
    expect((await post(`/api/tasks/${id}/cancel`, {})).status).toBe(409); // already ended
  });

  it('shows a task run by the CLI in another shell live on /api/events', async () => {
    const { last_seq } = await getJson<{ last_seq: number }>('/api/health');
    const stream = readSse(api(`/api/events?after=${last_seq}`), {
      until: (f) => f.event === 'task_completed',
    });
    const cli = await troupe(dir, ['run', 'from the shell', '-P', 'write', '--script', 'write-script.yaml']);
    expect(cli.code).toBe(0);
    const { frames } = await stream;
    const created = frames.find((f) => f.event === 'task_created')!.data as { input: string; taskId: string };
    expect(created.input).toBe('from the shell');
    expect((frames.at(-1)!.data as { taskId: string }).taskId).toBe(created.taskId);
  });

  it('lists tasks with filters and paging; pipelines with validation at the line; usage', async () => {
    const page = await getJson<{ tasks: unknown[]; next_offset: number | null }>('/api/tasks?limit=1');
    expect(page.tasks).toHaveLength(1);
    expect(page.next_offset).toBe(1);
    expect((await fetch(api('/api/tasks?status=bogus'))).status).toBe(400);
    const completed = await getJson<{ tasks: { status: string }[] }>('/api/tasks?status=completed');
    expect(completed.tasks.every((t) => t.status === 'completed')).toBe(true);

    const pipelines = await getJson<{ pipelines: { name: string }[]; default: string }>('/api/pipelines');
    expect(pipelines.pipelines.map((p) => p.name)).toEqual([
      'branch',
      'chunky',
      'deploy',
      'design',
      'team',
      'write',
    ]);
    expect(pipelines.default).toBe('write');

    const broken = writerEditorPipeline.replace('handoffs: [{ to: editor }]', 'handoffs: [{ to: editr }]');
    const check = (await (await post('/api/validate', { name: 'write', content: broken })).json()) as {
      valid: boolean;
      diagnostics: { line: number; message: string }[];
    };
    expect(check.valid).toBe(false);
    expect(check.diagnostics[0]).toMatchObject({ line: 5 });
    expect(check.diagnostics[0]!.message).toContain('editr');
    const refused = await fetch(api('/api/pipelines/write'), {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: broken }),
    });
    expect(refused.status).toBe(422);
    const created = await fetch(api('/api/pipelines/solo'), {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        content: 'agents:\n  - id: solo\n    runtime: claude\n    system_prompt: "{{ input }}"\n',
      }),
    });
    expect(created.status).toBe(201);
    const shown = await getJson<{ content: string; valid: boolean; graph: { nodes: { id: string }[] } }>(
      '/api/pipelines/solo',
    );
    expect(shown.valid).toBe(true);
    expect(shown.graph.nodes.map((n) => n.id)).toEqual(['solo']);

    const usage = await getJson<{ total: { output_tokens: number }; by_agent: Record<string, unknown> }>(
      '/api/usage',
    );
    expect(usage.total.output_tokens).toBeGreaterThan(0);
    expect(Object.keys(usage.by_agent)).toContain('writer');
  });
});

describe('troupe serve: sessions, chunks and the agent form', () => {
  const send = (method: string, path: string, body?: unknown) =>
    fetch(api(path), {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('shows a session round by round: each speaker, who voted to agree, and the outcome', async () => {
    const started = await post('/api/run', {
      input: 'How should we do auth?',
      pipeline: 'design',
      script: 'design-script.yaml',
    });
    const { task_id: id } = (await started.json()) as { task_id: string };
    type Detail = {
      status: string;
      stages: { n: number; agent: string; output: string }[];
      sessions: {
        session: string;
        participants: string[];
        rounds: {
          round: number;
          turns: { stage: number; agent: string; agreed: boolean }[];
          agreed: string[];
          consensus: boolean;
        }[];
        summary: { stage: number; agent: string } | null;
        outcome: string;
        output: string;
      }[];
    };
    const task = await waitFor(async () => {
      const t = await getJson<Detail>(`/api/tasks/${id}`);
      return t.status === 'completed' ? t : undefined;
    });
    expect(task.sessions).toHaveLength(1);
    const [session] = task.sessions;
    expect(session).toMatchObject({
      session: 'design_session',
      participants: ['architect', 'security'],
      outcome: 'consensus',
    });
    expect(session!.rounds.map((r) => [r.round, r.agreed, r.consensus])).toEqual([
      [1, [], false],
      [2, ['architect', 'security'], true],
    ]);
    expect(session!.rounds[1]!.turns.map((t) => [t.agent, t.agreed])).toEqual([
      ['architect', true],
      ['security', true],
    ]);
    // each turn is a stage: its output is the speaker's message
    const byN = new Map(task.stages.map((s) => [s.n, s]));
    expect(byN.get(session!.rounds[0]!.turns[1]!.stage)!.output).toContain(
      'Token revocation is the weak point',
    );
    expect(session!.summary!.agent).toBe('architect');
    expect(session!.output).toContain('Decision: short-lived JWT');
  });

  it('chunks: list, add, mark done and remove over REST, each change streamed (aqm chunk_update too)', async () => {
    const started = await post('/api/run', {
      input: 'a parser',
      pipeline: 'chunky',
      script: { agents: { planner: ['planned'] } },
    });
    const { task_id: id } = (await started.json()) as { task_id: string };
    await waitFor(async () =>
      (await getJson(`/api/tasks/${id}`)).status === 'awaiting_gate' ? true : undefined,
    );

    const board = await getJson<{
      enabled: boolean;
      chunks: { id: string; description: string; status: string }[];
    }>(`/api/tasks/${id}/chunks`);
    expect(board.enabled).toBe(true);
    expect(board.chunks.map((c) => [c.id, c.description, c.status])).toEqual([
      ['C-001', 'write the parser', 'pending'],
      ['C-002', 'write the tests', 'pending'],
    ]);

    const added = await post(`/api/tasks/${id}/chunks`, { description: 'document it' });
    expect(added.status).toBe(201);
    expect(((await added.json()) as { chunk: { id: string; created_by: string } }).chunk).toMatchObject({
      id: 'C-003',
      created_by: 'user',
    });
    expect((await post(`/api/tasks/${id}/chunks`, {})).status).toBe(400);
    const done = await send('PATCH', `/api/tasks/${id}/chunks/C-001`, { status: 'done' });
    expect(done.status).toBe(200);
    expect(((await done.json()) as { chunk: { status: string } }).chunk.status).toBe('done');
    expect((await send('PATCH', `/api/tasks/${id}/chunks/C-001`, { status: 'pending' })).status).toBe(400);
    expect((await send('PATCH', `/api/tasks/${id}/chunks/C-009`, { status: 'done' })).status).toBe(404);
    const removed = await send('DELETE', `/api/tasks/${id}/chunks/C-002`);
    expect(removed.status).toBe(200);
    expect((await send('DELETE', `/api/tasks/${id}/chunks/C-002`)).status).toBe(404);

    const detail = await getJson<{ chunks: { id: string; status: string }[] }>(`/api/tasks/${id}`);
    expect(detail.chunks.map((c) => [c.id, c.status])).toEqual([
      ['C-001', 'done'],
      ['C-003', 'pending'],
    ]);
    // the task's stream carries the changes, under troupe's names and aqm's chunk_update
    const { frames } = await readSse(api(`/api/tasks/${id}/events`), {
      until: (f) => f.event === 'chunk_removed',
    });
    expect(frames.filter((f) => f.event === 'chunk_update').map((f) => f.data)).toEqual([
      { task_id: id, action: 'add', chunk_id: 'C-003', description: 'document it' },
      { task_id: id, action: 'status', chunk_id: 'C-001', status: 'done' },
      { task_id: id, action: 'remove', chunk_id: 'C-002' },
    ]);
    // a pipeline without chunks refuses
    const plain = await post('/api/run', { input: 'x', pipeline: 'write', script: 'write-script.yaml' });
    const plainId = ((await plain.json()) as { task_id: string }).task_id;
    expect((await getJson<{ enabled: boolean }>(`/api/tasks/${plainId}/chunks`)).enabled).toBe(false);
    expect((await post(`/api/tasks/${plainId}/chunks`, { description: 'x' })).status).toBe(409);
    expect((await post(`/api/tasks/${id}/approve`, {})).status).toBe(202);
  });

  it('adds, edits and removes an agent in the YAML, keeping comments, and refuses a change that breaks the pipeline', async () => {
    const { readFileSync } = await import('node:fs');
    const file = `${dir}/.troupe/pipelines/team.yaml`;
    const listed = await getJson<{ id: string; handoffs?: unknown[] }[]>('/api/pipelines/team/agents');
    expect(listed.map((a) => a.id)).toEqual(['writer', 'editor']);

    const added = await post('/api/pipelines/team/agents', {
      id: 'reviewer',
      name: 'Reviewer',
      runtime: 'gemini',
      model: 'gemini-2.5-pro',
      system_prompt: 'Review: {{ input }}',
      handoffs: [{ to: 'writer', condition: 'on_reject' }],
      gate: { type: 'llm', prompt: 'Is it right?', max_retries: 2 },
      context_strategy: 'last_only',
      human_input: { enabled: true, mode: 'before' },
    });
    expect(added.status).toBe(201);
    const saved = (await added.json()) as { graph: { nodes: { id: string }[] } };
    expect(saved.graph.nodes.map((n) => n.id)).toEqual(['writer', 'editor', 'reviewer']);
    let text = readFileSync(file, 'utf8');
    expect(text).toContain('# the team: keep this comment');
    expect(text).toContain('- id: writer # the one who writes');
    expect(text).toContain('# the editor checks');
    expect(text).toContain('system_prompt: |\n      Write: {{ input }}');
    expect(text).toContain('human_input: before');
    expect((await post('/api/pipelines/team/agents', { id: 'reviewer', runtime: 'claude' })).status).toBe(
      409,
    );

    // edit: only the fields sent change; hand the editor on to the reviewer
    const edited = await send('PUT', '/api/pipelines/team/agents/editor', {
      handoffs: [{ to: 'reviewer' }],
      gate: { type: 'human' },
    });
    expect(edited.status).toBe(200);
    text = readFileSync(file, 'utf8');
    expect(text).toContain('# the editor checks');
    expect(text).toMatch(/id: editor[\s\S]*handoffs:\n\s+- to: reviewer[\s\S]*gate:\n\s+type: human/);
    const agents = await getJson<Record<string, unknown>[]>('/api/pipelines/team/agents');
    expect(agents[1]).toMatchObject({
      id: 'editor',
      system_prompt: 'Edit: {{ input }}',
      gate: { type: 'human' },
    });
    // removing a field
    expect((await send('PUT', '/api/pipelines/team/agents/reviewer', { model: null })).status).toBe(200);
    expect(readFileSync(file, 'utf8')).not.toContain('gemini-2.5-pro');

    // refused: a handoff to nobody, or removing an agent others hand off to; the file stays as it was
    const before = readFileSync(file, 'utf8');
    const broken = await send('PUT', '/api/pipelines/team/agents/writer', { handoffs: [{ to: 'nobody' }] });
    expect(broken.status).toBe(422);
    const error = ((await broken.json()) as { error: { code: string; diagnostics: { message: string }[] } })
      .error;
    expect(error.code).toBe('pipeline_invalid');
    expect(error.diagnostics.some((d) => d.message.includes('nobody'))).toBe(true);
    expect((await send('DELETE', '/api/pipelines/team/agents/reviewer')).status).toBe(422);
    expect((await post('/api/pipelines/team/agents', { id: 'x', runtime: 'nope' })).status).toBe(422);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect((await send('PUT', '/api/pipelines/team/agents/ghost', { name: 'x' })).status).toBe(404);

    // remove the editor's handoff, then the reviewer
    expect((await send('PUT', '/api/pipelines/team/agents/editor', { handoffs: null })).status).toBe(200);
    const gone = await send('DELETE', '/api/pipelines/team/agents/reviewer');
    expect(gone.status).toBe(200);
    expect((await getJson<{ id: string }[]>('/api/pipelines/team/agents')).map((a) => a.id)).toEqual([
      'writer',
      'editor',
    ]);
    expect(readFileSync(file, 'utf8')).toContain('# the team: keep this comment');
  });
});

describe('troupe serve: security and lifecycle', () => {
  it('with a token, every request needs it (header, ?token= or the cookie the page gets)', async () => {
    const d = project({ '.troupe/pipelines/write.yaml': writerEditorPipeline });
    const s = await serve(d, ['--token', 'sekrit-token-0123456789']);
    try {
      const url = (p: string) => new URL(p, s.url).toString();
      expect((await fetch(url('/api/tasks'))).status).toBe(401);
      expect((await fetch(url('/api/tasks'), { headers: { Authorization: 'Bearer wrong' } })).status).toBe(
        401,
      );
      expect(
        (await fetch(url('/api/tasks'), { headers: { Authorization: 'Bearer sekrit-token-0123456789' } }))
          .status,
      ).toBe(200);
      expect((await fetch(url('/api/events?token=sekrit-token-0123456789'))).status).toBe(200);
      const page = await fetch(url('/?token=sekrit-token-0123456789'), { redirect: 'manual' });
      expect(page.status).toBe(302);
      expect(page.headers.get('set-cookie')).toMatch(/HttpOnly/i);
      expect(s.stdout()).not.toContain('token: '); // given, so not printed
    } finally {
      await s.stop();
    }
  });

  it("by default, a token of the project's own, in a file only its user can read, and a link that opens the page once", async () => {
    const d = project({ '.troupe/pipelines/write.yaml': writerEditorPipeline });
    const state = mkdtempSync(join(tmpdir(), 'troupe-state-'));
    const s = await serve(d, [], { XDG_STATE_HOME: state }, { projectToken: true });
    try {
      const url = (p: string) => new URL(p, s.url).toString();
      await waitFor(() => (s.stdout().includes('dashboard:') ? true : undefined));
      // no token: refused, whoever asks (another user of the machine is in this position)
      expect((await fetch(url('/api/tasks'))).status).toBe(401);
      const file = /token: in (\S+)/.exec(s.stdout())?.[1];
      expect(file?.startsWith(join(state, 'troupe', 'tokens'))).toBe(true);
      expect(statSync(file!).mode & 0o777).toBe(0o600);
      expect(statSync(join(state, 'troupe', 'tokens')).mode & 0o777).toBe(0o700);
      const token = readFileSync(file!, 'utf8').trim();
      expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(32);
      // the token itself is never printed
      expect(s.stdout()).not.toContain(token);
      const auth = { headers: { Authorization: `Bearer ${token}` } };
      expect((await fetch(url('/api/tasks'), auth)).status).toBe(200);
      if (process.getuid?.() === 0) {
        // literally another user of the machine: `nobody` can neither read the token nor do without it
        const probe = `
          const fs = require('node:fs');
          let read = 'read';
          try { fs.readFileSync(${JSON.stringify(file)}); } catch (e) { read = e.code; }
          fetch(${JSON.stringify(url('/api/tasks'))}).then((r) => console.log(read, r.status));`;
        const asNobody = spawnSync(process.execPath, ['-e', probe], {
          uid: 65534,
          gid: 65534,
          encoding: 'utf8',
        });
        expect(asNobody.stdout.trim()).toBe('EACCES 401');
      }
      // the printed link opens the page once, with the token's cookie
      const link = /dashboard: (\S+)/.exec(s.stdout())![1]!;
      const first = await fetch(link, { redirect: 'manual' });
      expect(first.status).toBe(302);
      const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
      expect((await fetch(url('/api/tasks'), { headers: { Cookie: cookie } })).status).toBe(200);
      expect((await fetch(link, { redirect: 'manual' })).status).toBe(401);
    } finally {
      await s.stop();
    }
    // started again: the same token, from the same file
    const again = await serve(d, [], { XDG_STATE_HOME: state }, { projectToken: true });
    try {
      await waitFor(() => (again.stdout().includes('dashboard:') ? true : undefined));
      const file = /token: in (\S+)/.exec(again.stdout())![1]!;
      const token = readFileSync(file, 'utf8').trim();
      const answer = await fetch(new URL('/api/tasks', again.url), {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(answer.status).toBe(200);
    } finally {
      await again.stop();
    }
  });

  it('--no-token is for the loopback only', async () => {
    const d = project({ '.troupe/pipelines/write.yaml': writerEditorPipeline });
    const refused = await troupe(d, ['serve', '--no-token', '--host', '0.0.0.0', '--port', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--no-token is for the loopback only');
  });

  it('without a token, only requests addressed to the loopback are answered (no DNS rebinding)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL('/api/tasks', server.url);
      request(
        { host: u.hostname, port: u.port, path: u.pathname, headers: { Host: 'evil.example' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(403);
  });

  it('stops cleanly on SIGTERM and, started again, carries on the task it was running', async () => {
    const d = project({ '.troupe/pipelines/write.yaml': writerEditorPipeline });
    const first = await serve(d);
    const slow = { agents: { writer: [{ reply: 'slow draft', delay_ms: 3000 }], editor: ['edited'] } };
    const started = await fetch(new URL('/api/run', first.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ input: 'x', script: slow }),
    });
    const { task_id: id } = (await started.json()) as { task_id: string };
    await waitFor(() => (eventLog(d, id).some((e) => e.type === 'stage_started') ? true : undefined));
    expect(await first.stop('SIGTERM')).toBe(0);
    // it stopped the stage rather than waiting out its 3 s reply
    expect(eventLog(d, id).map((e) => e.type)).not.toContain('stage_completed');

    const second = await serve(d);
    try {
      const done = await waitFor(async () => {
        const t = (await (await fetch(new URL(`/api/tasks/${id}`, second.url))).json()) as { status: string };
        return t.status === 'completed' ? t : undefined;
      }, 15_000);
      expect(done.status).toBe('completed');
      expect(eventLog(d, id).map((e) => e.type)).toContain('stage_interrupted');
    } finally {
      await second.stop();
    }
  });
});
