/**
 * The API's OpenAPI 3.1 document, written as data. A test checks that every route the app
 * serves is here (and nothing here is missing from the app).
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema) => ({ 'application/json': { schema } });
const ok = (description: string, schema: Schema, status = '200') => ({
  [status]: { description, content: json(schema) },
});
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [String(s), { description: ERROR_TEXT[s] ?? 'error', content: json(ref('Error')) }]),
  );
const ERROR_TEXT: Record<number, string> = {
  400: 'bad request (missing or malformed field)',
  401: 'token missing or wrong',
  403: 'not from this origin, or not addressed to the loopback',
  404: 'no such task or pipeline',
  409: 'the task is not in a state that allows this (or: an agent with that id exists)',
  422: 'the pipeline or script is invalid (agent edits: `diagnostics` of the result, nothing saved)',
};
const body = (schema: Schema, required = true) => ({ required, content: json(schema) });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, example: 'T-1A2B3C' };
const cidParam = { name: 'cid', in: 'path', required: true, schema: { type: 'string' }, example: 'C-001' };
const agentParam = { name: 'agent_id', in: 'path', required: true, schema: { type: 'string' } };
const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
});
const str = { type: 'string' };
const int = { type: 'integer' };
const accepted = ok('accepted: the task runs in the background', obj({ id: str, status: str }), '202');
const sse = (description: string) => ({
  '200': {
    description: `${description} Each event is sent under troupe's type with \`id: <seq>\` (its data is the stored event), preceded by aqm's name for the events aqm has (stage_start, stage_output, stage_complete, gate_waiting, human_input_request, pipeline_resuming, task_complete, task_failed, task_cancelled). \`: keepalive\` comments every 15 s.`,
    content: { 'text/event-stream': { schema: str } },
  },
});
const lastEventId = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  schema: str,
  description: 'resume after this seq (browsers send it when they reconnect)',
};
const after = {
  name: 'after',
  in: 'query',
  required: false,
  schema: int,
  description: 'resume after this seq',
};

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'troupe',
    version: '1',
    description:
      'Run teams of AI agents. Errors are `{error: {code, message}}`. When the server has a token, send it as `Authorization: Bearer <token>` (or `?token=` for EventSource).',
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer' },
      query: { type: 'apiKey', in: 'query', name: 'token' },
    },
    schemas: {
      Error: obj({ error: obj({ code: str, message: str, hint: str }, ['code', 'message']) }, ['error']),
      Usage: obj({
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int,
        cost_usd: { type: 'number' },
      }),
      Waiting: {
        oneOf: [
          { type: 'null' },
          obj({
            kind: { enum: ['gate', 'question'] },
            agent: str,
            stage: int,
            questions: { type: 'array', items: str },
          }),
        ],
      },
      TaskRow: obj({
        id: str,
        status: ref('Status'),
        pipeline: str,
        input: str,
        current_agent: str,
        running_agents: { type: 'array', items: str },
        created: str,
        updated: str,
        stage_count: int,
        usage: ref('Usage'),
        waiting: ref('Waiting'),
        error: str,
        parent_task_id: str,
      }),
      Status: {
        enum: [
          'pending',
          'running',
          'waiting',
          'awaiting_gate',
          'awaiting_human_input',
          'completed',
          'failed',
          'cancelled',
        ],
      },
      Stage: obj({
        n: int,
        agent: str,
        status: str,
        input: str,
        output: str,
        gate: obj({ decision: str, reason: str, by: str }),
        usage: ref('Usage'),
        attempt: int,
        duration_ms: int,
        error: obj({ kind: str, message: str }),
        warnings: { type: 'array', items: str },
        turn: obj({ round: int, summary: { type: 'boolean' } }),
        started: str,
        finished: str,
        route: obj({
          tier: str,
          runtime: str,
          model: str,
          effort: str,
          recommended: obj({ tier: str, reason: str }),
        }),
      }),
      Graph: obj({
        nodes: { type: 'array', items: obj({ id: str, name: str, type: str, runtime: str, gate: str }) },
        edges: { type: 'array', items: obj({ from: str, to: str, condition: str, kind: str }) },
      }),
      TaskDetail: obj({
        id: str,
        status: ref('Status'),
        pipeline: str,
        input: str,
        created: str,
        updated: str,
        /** `parent` is the CLI's name (`status --json`); `parent_task_id` the list's. */
        parent: str,
        parent_task_id: str,
        start_agent: str,
        cancel_reason: str,
        stages: { type: 'array', items: ref('Stage') },
        waiting: ref('Waiting'),
        error: str,
        usage: ref('Usage'),
        running_agents: { type: 'array', items: str },
        graph: ref('Graph'),
        transcript: str,
        sessions: { type: 'array', items: ref('Session') },
        chunks: { type: 'array', items: ref('Chunk') },
        chunks_enabled: { type: 'boolean' },
        last_seq: int,
        size: obj({ size: { enum: ['S', 'M', 'L', 'XL'] }, by: str }),
        spec: obj({ stage: int, agent: str, spec: { type: 'object' } }),
        workspace: obj({
          isolation: { enum: ['worktree', 'none'] },
          why: str,
          path: str,
          branch: str,
          base: str,
          merged: str,
          unmerged: str,
        }),
      }),
      Chunk: obj({
        id: str,
        description: str,
        status: { enum: ['pending', 'in_progress', 'done'] },
        created_by: str,
        completed_by: { type: ['string', 'null'] },
        created_at: str,
        updated_at: str,
      }),
      ChunkBoard: obj({
        enabled: { type: 'boolean', description: "false: the task's pipeline has no `chunks:` block" },
        chunks: { type: 'array', items: ref('Chunk') },
        total: int,
        done: int,
      }),
      Session: obj({
        activation: str,
        session: str,
        participants: { type: 'array', items: str },
        topic: str,
        rounds: {
          type: 'array',
          items: obj({
            round: int,
            turns: {
              type: 'array',
              items: obj({ stage: int, agent: str, agreed: { type: ['boolean', 'null'] } }),
            },
            agreed: {
              type: ['array', 'null'],
              items: str,
              description: 'who voted to agree (null while the round runs)',
            },
            consensus: { type: ['boolean', 'null'] },
          }),
        },
        summary: obj({ stage: int, agent: str }),
        outcome: { enum: ['consensus', 'no_consensus', null] },
        stage: int,
        output: str,
      }),
      AgentRequest: obj({
        id: str,
        name: str,
        runtime: { enum: ['claude', 'gemini', 'codex', 'openai', 'command', 'scripted'] },
        model: str,
        system_prompt: str,
        handoffs: { type: 'array', items: obj({ to: str, condition: str, task: str, payload: str }, ['to']) },
        gate: obj({ type: { enum: ['llm', 'human', 'command'] }, prompt: str, max_retries: int }),
        mcp: { type: 'array', items: { type: 'object' } },
        context_strategy: { enum: ['none', 'last_only', 'own', 'shared', 'both'] },
        human_input: {
          oneOf: [
            { enum: ['before', 'on_demand', 'both'] },
            { type: 'boolean' },
            obj({ enabled: { type: 'boolean' }, mode: str, prompt: str }),
            { type: 'null' },
          ],
        },
      }),
      AgentSaved: obj({
        name: str,
        agent_id: str,
        content: { type: 'string', description: 'the pipeline file as saved' },
        diagnostics: { type: 'array', items: ref('Diagnostic') },
        graph: ref('Graph'),
      }),
      Diagnostic: obj({
        severity: { enum: ['error', 'warning'] },
        file: { type: ['string', 'null'], description: 'null: the pipeline itself; else an imported file' },
        line: int,
        col: int,
        message: str,
        hint: str,
      }),
    },
  },
  paths: {
    '/api/health': {
      get: {
        summary: 'the server is up',
        responses: ok('ok', obj({ ok: { type: 'boolean' }, version: str, last_seq: int })),
      },
    },
    '/api/openapi.json': {
      get: { summary: 'this document', responses: ok('OpenAPI 3.1', { type: 'object' }) },
    },
    '/api/run': {
      post: {
        summary: 'start a run of a pipeline; it runs in the background',
        requestBody: body(
          obj(
            {
              input: { type: 'string', description: 'what to do (aqm: description)' },
              pipeline: { type: 'string', description: 'pipeline name; default: the project default' },
              agent: { type: 'string', description: 'start at this agent (aqm: agent_id)' },
              size: {
                enum: ['S', 'M', 'L', 'XL'],
                description: 'the task size; agents with `spec: required` need a spec from M',
              },
              params: { type: 'object', additionalProperties: str },
              script: {
                description:
                  'run offline on the scripted runtime: a script file (relative to the project) or the script itself',
                oneOf: [str, { type: 'object' }],
              },
            },
            ['input'],
          ),
        ),
        responses: {
          ...ok('started', obj({ task_id: str, status: { const: 'started' }, agent_id: str }), '202'),
          ...errors(400, 404, 422),
        },
      },
    },
    '/api/fix': {
      post: {
        summary: "start a follow-up task carrying a task's context",
        requestBody: body(
          obj({ parent_task_id: str, description: str, agent: str, script: {} }, [
            'parent_task_id',
            'description',
          ]),
        ),
        responses: {
          ...ok('started', obj({ task_id: str, status: str, parent_task_id: str }), '202'),
          ...errors(400, 404),
        },
      },
    },
    '/api/tasks': {
      get: {
        summary: 'tasks, newest first',
        parameters: [
          { name: 'status', in: 'query', schema: str, description: 'comma list of statuses' },
          {
            name: 'waiting',
            in: 'query',
            schema: { enum: ['true'] },
            description: 'only tasks waiting for a person',
          },
          { name: 'pipeline', in: 'query', schema: str },
          { name: 'limit', in: 'query', schema: { ...int, default: 50, maximum: 500 } },
          { name: 'offset', in: 'query', schema: { ...int, default: 0 } },
        ],
        responses: {
          ...ok(
            'a page of tasks',
            obj({
              tasks: { type: 'array', items: ref('TaskRow') },
              limit: int,
              offset: int,
              next_offset: { type: ['integer', 'null'] },
            }),
          ),
          ...errors(400),
        },
      },
    },
    '/api/tasks/{id}': {
      get: {
        summary: 'a task in full',
        parameters: [idParam],
        responses: { ...ok('the task', ref('TaskDetail')), ...errors(404) },
      },
    },
    '/api/tasks/{id}/context': {
      get: {
        summary: "the task's context.md",
        parameters: [idParam],
        responses: {
          '200': { description: 'markdown', content: { 'text/plain': { schema: str } } },
          ...errors(404),
        },
      },
    },
    '/api/tasks/{id}/events': {
      get: {
        summary:
          "one task's events: its whole log, then live; the stream ends after the task ends (204 once nothing is left)",
        parameters: [idParam, lastEventId, after],
        responses: {
          ...sse('Server-Sent Events.'),
          '204': { description: 'the task has ended and everything was sent' },
          ...errors(404),
        },
      },
    },
    '/api/events': {
      get: {
        summary: 'the events of all tasks, live (from now, or after Last-Event-ID / ?after=)',
        parameters: [lastEventId, after],
        responses: sse('Server-Sent Events.'),
      },
    },
    '/api/tasks/{id}/approve': {
      post: {
        summary: 'approve the output waiting at a human gate; the task carries on',
        parameters: [idParam],
        requestBody: body(obj({ reason: str }), false),
        responses: { ...accepted, ...errors(404, 409) },
      },
    },
    '/api/tasks/{id}/reject': {
      post: {
        summary: 'reject the output waiting at a human gate, with a reason the agent gets',
        parameters: [idParam],
        requestBody: body(obj({ reason: str }, ['reason'])),
        responses: { ...accepted, ...errors(400, 404, 409) },
      },
    },
    '/api/tasks/{id}/human-input': {
      post: {
        summary: 'answer the question the task waits on',
        parameters: [idParam],
        requestBody: body(
          obj({ response: { type: 'string', description: 'the answer (also: answer)' } }, ['response']),
        ),
        responses: { ...accepted, ...errors(400, 404, 409) },
      },
    },
    '/api/tasks/{id}/cancel': {
      post: {
        summary: 'cancel a task that has not ended',
        parameters: [idParam],
        requestBody: body(obj({ reason: str }), false),
        responses: { ...ok('cancelled', obj({ id: str, status: str })), ...errors(404, 409) },
      },
    },
    '/api/tasks/{id}/restart': {
      post: {
        summary: 'set aside everything from a stage on and run the task again from there',
        parameters: [idParam],
        requestBody: body(obj({ from_stage: int }), false),
        responses: {
          ...ok('restarted', obj({ id: str, status: str, from_stage: int }), '202'),
          ...errors(400, 404, 409),
        },
      },
    },
    '/api/tasks/{id}/chunks': {
      get: {
        summary: "the task's chunks",
        parameters: [idParam],
        responses: { ...ok('the board', ref('ChunkBoard')), ...errors(404) },
      },
      post: {
        summary: 'add a chunk (created_by "user"); a running task sees it on its next turn',
        parameters: [idParam],
        requestBody: body(obj({ description: str }, ['description'])),
        responses: {
          ...ok('added', { allOf: [ref('ChunkBoard'), obj({ chunk: ref('Chunk') })] }, '201'),
          ...errors(400, 404, 409),
        },
      },
    },
    '/api/tasks/{id}/chunks/{cid}': {
      patch: {
        summary: 'mark a chunk done',
        parameters: [idParam, cidParam],
        requestBody: body(obj({ status: { const: 'done' } }, ['status'])),
        responses: {
          ...ok('updated', { allOf: [ref('ChunkBoard'), obj({ chunk: ref('Chunk') })] }),
          ...errors(400, 404, 409),
        },
      },
      delete: {
        summary: 'remove a chunk',
        parameters: [idParam, cidParam],
        responses: {
          ...ok('removed', { allOf: [ref('ChunkBoard'), obj({ deleted: str })] }),
          ...errors(404, 409),
        },
      },
    },
    '/api/pipelines/{name}/agents': {
      get: {
        summary: 'the agents as written in the pipeline file (each mapping as JSON)',
        parameters: [nameParam],
        responses: { ...ok('agents', { type: 'array', items: { type: 'object' } }), ...errors(404) },
      },
      post: {
        summary:
          'add an agent at the end of `agents:`; the rest of the file (comments too) is kept; refused with 422 and `diagnostics` when the result is invalid',
        parameters: [nameParam],
        requestBody: body({ allOf: [ref('AgentRequest'), { required: ['id'] }] }),
        responses: { ...ok('added', ref('AgentSaved'), '201'), ...errors(400, 404, 409, 422) },
      },
    },
    '/api/pipelines/{name}/agents/{agent_id}': {
      put: {
        summary:
          'change an agent: each field present is set (null or "" removes it), the others and the rest of the file are kept; a new `id` renames it; 422 with `diagnostics` when the result is invalid',
        parameters: [nameParam, agentParam],
        requestBody: body(ref('AgentRequest')),
        responses: { ...ok('saved', ref('AgentSaved')), ...errors(400, 404, 409, 422) },
      },
      delete: {
        summary: 'remove an agent; refused with 422 and `diagnostics` when others still hand off to it',
        parameters: [nameParam, agentParam],
        responses: {
          ...ok('removed', { allOf: [ref('AgentSaved'), obj({ deleted: { type: 'boolean' } })] }),
          ...errors(404, 422),
        },
      },
    },
    '/api/pipelines': {
      get: {
        summary: "the project's pipelines",
        responses: ok(
          'pipelines',
          obj({
            pipelines: {
              type: 'array',
              items: obj({ name: str, file: str, is_default: { type: 'boolean' }, agent_count: int }),
            },
            default: { type: ['string', 'null'] },
          }),
        ),
      },
    },
    '/api/pipelines/{name}': {
      get: {
        summary: 'a pipeline: its YAML, its graph and its problems',
        parameters: [nameParam],
        responses: {
          ...ok(
            'the pipeline',
            obj({
              name: str,
              file: str,
              is_default: { type: 'boolean' },
              content: str,
              valid: { type: 'boolean' },
              diagnostics: { type: 'array', items: ref('Diagnostic') },
              features: { type: 'array', items: str },
              graph: ref('Graph'),
            }),
          ),
          ...errors(404),
        },
      },
      put: {
        summary: 'save a pipeline (new or existing); refused with its errors when invalid',
        parameters: [nameParam],
        requestBody: body(obj({ content: str }, ['content'])),
        responses: {
          ...ok(
            'saved',
            obj({
              name: str,
              file: str,
              created: { type: 'boolean' },
              diagnostics: { type: 'array', items: ref('Diagnostic') },
              graph: ref('Graph'),
            }),
          ),
          '201': { description: 'created' },
          ...errors(400, 422),
        },
      },
    },
    '/api/pipelines/{name}/yaml': {
      get: {
        summary: "a pipeline's YAML",
        parameters: [nameParam],
        responses: {
          '200': { description: 'YAML', content: { 'text/yaml': { schema: str } } },
          ...errors(404),
        },
      },
    },
    '/api/pipelines/default': {
      post: {
        summary: 'make a pipeline the default (default_pipeline in .troupe/config.yaml)',
        requestBody: body(obj({ name: str }, ['name'])),
        responses: { ...ok('set', obj({ default: str })), ...errors(400, 404) },
      },
    },
    '/api/agents': {
      get: {
        summary: "a pipeline's agents (aqm's shape)",
        parameters: [{ name: 'pipeline', in: 'query', schema: str }],
        responses: { ...ok('agents', { type: 'array', items: { type: 'object' } }), ...errors(404, 422) },
      },
    },
    '/api/validate': {
      post: {
        summary: 'check pipeline text without saving it',
        requestBody: body(
          obj({
            content: { type: 'string', description: 'YAML (also: yaml_content)' },
            name: str,
            strict: { type: 'boolean' },
          }),
        ),
        responses: {
          ...ok(
            'the problems, each at its line',
            obj({
              valid: { type: 'boolean' },
              diagnostics: { type: 'array', items: ref('Diagnostic') },
              errors: { type: 'array', items: obj({ path: str, message: str, fix: str }) },
              warnings: { type: 'array', items: obj({ path: str, message: str, fix: str }) },
              summary: obj({ agent_count: int }),
              graph: ref('Graph'),
            }),
          ),
          ...errors(400),
        },
      },
    },
    '/api/usage': {
      get: {
        summary: 'tokens and cost: in total, per pipeline, per agent (the latest 1000 tasks)',
        responses: ok(
          'usage',
          obj({
            tasks: int,
            total: ref('Usage'),
            by_pipeline: { type: 'object', additionalProperties: ref('Usage') },
            by_agent: { type: 'object', additionalProperties: ref('Usage') },
          }),
        ),
      },
    },
  },
} as const;
