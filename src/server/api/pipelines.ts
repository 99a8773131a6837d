import { z } from 'zod';
import { GATE_TYPES } from '../../core/pipeline-vocabulary.js';
import { json, named, nonBlank, route, withAliases } from './define.js';

/** Pipelines and their agents: list, show, save, edit one agent, validate text. */

export const GraphNode = named(
  'GraphNode',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    type: z.enum(['agent', 'session']),
    runtime: z.string().nullable(),
    model: z.string().nullable(),
    gate: z.enum(GATE_TYPES).nullable(),
    human_input: z.string().nullable(),
    participants: z.array(z.string()),
  }),
);

export const GraphEdge = named(
  'GraphEdge',
  z.strictObject({
    from: z.string(),
    to: z.string(),
    condition: z.string(),
    kind: z.enum(['handoff', 'participant']),
  }),
);

/** The pipeline as the dashboard draws it: agents and sessions, handoffs and participants. */
export const Graph = named('Graph', z.strictObject({ nodes: z.array(GraphNode), edges: z.array(GraphEdge) }));
export type GraphNode = z.infer<typeof GraphNode>;
export type GraphEdge = z.infer<typeof GraphEdge>;
export type Graph = z.infer<typeof Graph>;

export const Diagnostic = named(
  'Diagnostic',
  z.strictObject({
    severity: z.enum(['error', 'warning']),
    file: z.string().nullable().describe('null: the pipeline itself; else an imported file'),
    line: z.int(),
    col: z.int(),
    message: z.string(),
    hint: z.string().optional(),
  }),
);

export const PipelineSummary = named(
  'PipelineSummary',
  z.strictObject({ name: z.string(), file: z.string(), is_default: z.boolean(), agent_count: z.int() }),
);

export const PipelineDetail = named(
  'PipelineDetail',
  PipelineSummary.omit({ agent_count: true }).extend({
    content: z.string(),
    valid: z.boolean(),
    diagnostics: z.array(Diagnostic),
    features: z.array(z.string()),
    graph: Graph.nullable(),
  }),
);

/**
 * The fields of the agent form (aqm's AgentRequest, plus model). Only their JSON types are
 * checked here: what they mean is the pipeline validator's (422 with `diagnostics`). null or ""
 * removes a field.
 */
export const AgentFields = named(
  'AgentFields',
  z
    .object({
      id: nonBlank.describe('a new id renames the agent'),
      name: z.string().nullable(),
      runtime: z.string().nullable(),
      model: z.string().nullable(),
      system_prompt: z.string().nullable(),
      handoffs: z
        .array(
          z.looseObject({
            to: z.union([z.string(), z.array(z.string())]),
            condition: z.string().nullish(),
            task: z.string().nullish(),
            payload: z.string().nullish(),
          }),
        )
        .nullable(),
      gate: z
        .looseObject({
          type: z.string().nullish(),
          prompt: z.string().nullish(),
          max_retries: z.union([z.int(), z.string()]).nullish(),
        })
        .nullable(),
      mcp: z.array(z.unknown()).nullable(),
      context_strategy: z.string().nullable(),
      human_input: z
        .union([
          z.string(),
          z.boolean(),
          z.looseObject({
            enabled: z.boolean().nullish(),
            mode: z.string().nullish(),
            prompt: z.string().nullish(),
          }),
        ])
        .nullable(),
    })
    .partial(),
);
export type AgentFields = z.infer<typeof AgentFields>;

export const AgentSaved = named(
  'AgentSaved',
  z.strictObject({
    name: z.string(),
    agent_id: z.string(),
    content: z.string().describe('the pipeline file as saved'),
    diagnostics: z.array(Diagnostic),
    graph: Graph,
  }),
);

/** An agent in aqm's `GET /api/agents` shape. */
export const AqmAgent = z.strictObject({
  id: z.string(),
  name: z.string(),
  type: z.enum(['agent', 'session']),
  runtime: z.string().nullable(),
  model: z.string().nullable(),
  gate: z.strictObject({ type: z.string(), prompt: z.string().nullable(), max_retries: z.int() }).nullable(),
  mcp: z.array(z.strictObject({ server: z.string() })),
  handoffs: z.array(z.strictObject({ to: z.string(), condition: z.string(), task: z.string() })),
  context_strategy: z.string(),
  human_input: z.strictObject({ enabled: z.boolean(), mode: z.string() }).nullable(),
  participants: z.array(z.string()),
});

const AqmIssue = z.strictObject({ path: z.string(), message: z.string(), fix: z.string().nullable() });

export const Validation = named(
  'Validation',
  z.strictObject({
    valid: z.boolean(),
    diagnostics: z.array(Diagnostic),
    errors: z.array(AqmIssue),
    warnings: z.array(AqmIssue),
    summary: z.strictObject({ agent_count: z.int() }),
    graph: Graph.nullable(),
  }),
);

export const PipelineSaved = z.strictObject({
  name: z.string(),
  file: z.string(),
  created: z.boolean(),
  diagnostics: z.array(Diagnostic),
  graph: Graph,
});

const name = z.object({ name: z.string() });
const agent = z.object({ name: z.string(), agent_id: z.string() });

export const pipelineApi = {
  list: route({
    method: 'get',
    path: '/api/pipelines',
    summary: "the project's pipelines",
    responses: {
      200: json(
        'pipelines',
        z.strictObject({ pipelines: z.array(PipelineSummary), default: z.string().nullable() }),
      ),
    },
  }),
  show: route({
    method: 'get',
    path: '/api/pipelines/:name',
    summary: 'a pipeline: its YAML, its graph and its problems',
    params: name,
    responses: { 200: json('the pipeline', PipelineDetail) },
    errors: [404],
  }),
  yaml: route({
    method: 'get',
    path: '/api/pipelines/:name/yaml',
    summary: "a pipeline's YAML",
    params: name,
    responses: { 200: { description: 'YAML', content: 'text/yaml' } },
    errors: [404],
  }),
  save: route({
    method: 'put',
    path: '/api/pipelines/:name',
    summary: 'save a pipeline (new or existing); refused with its errors when invalid',
    params: name,
    body: z.object({ content: nonBlank }),
    responses: {
      200: json('saved', PipelineSaved),
      201: json('created', PipelineSaved),
    },
    errors: [400, 422],
  }),
  agents: route({
    method: 'get',
    path: '/api/pipelines/:name/agents',
    summary: 'the agents as written in the pipeline file (each mapping as JSON)',
    params: name,
    responses: { 200: json('agents', z.array(z.record(z.string(), z.unknown()))) },
    errors: [404],
  }),
  addAgent: route({
    method: 'post',
    path: '/api/pipelines/:name/agents',
    summary:
      'add an agent at the end of `agents:`; the rest of the file (comments too) is kept; refused with 422 and `diagnostics` when the result is invalid',
    params: name,
    body: AgentFields.required({ id: true }),
    responses: { 201: json('added', AgentSaved) },
    errors: [400, 404, 409, 422],
  }),
  updateAgent: route({
    method: 'put',
    path: '/api/pipelines/:name/agents/:agent_id',
    summary:
      'change an agent: each field present is set (null or "" removes it), the others and the rest of the file are kept; a new `id` renames it; 422 with `diagnostics` when the result is invalid',
    params: agent,
    body: AgentFields,
    responses: { 200: json('saved', AgentSaved) },
    errors: [400, 404, 409, 422],
  }),
  removeAgent: route({
    method: 'delete',
    path: '/api/pipelines/:name/agents/:agent_id',
    summary: 'remove an agent; refused with 422 and `diagnostics` when others still hand off to it',
    params: agent,
    responses: { 200: json('removed', AgentSaved.extend({ deleted: z.literal(true) })) },
    errors: [404, 422],
  }),
  setDefault: route({
    method: 'post',
    path: '/api/pipelines/default',
    summary: 'make a pipeline the default (default_pipeline in .troupe/config.yaml)',
    body: z.object({ name: nonBlank }),
    responses: { 200: json('set', z.strictObject({ default: z.string() })) },
    errors: [400, 404],
  }),
  aqmAgents: route({
    method: 'get',
    path: '/api/agents',
    summary: "a pipeline's agents (aqm's shape)",
    query: z.object({ pipeline: z.string().optional().describe('default: the project default') }),
    responses: { 200: json('agents', z.array(AqmAgent)) },
    errors: [404, 422],
  }),
  validate: route({
    method: 'post',
    path: '/api/validate',
    summary: 'check pipeline text without saving it',
    body: withAliases(
      { yaml_content: 'content' },
      z.object({
        content: z.string().optional().describe("YAML (also: yaml_content); default: the file's"),
        name: z.string().optional(),
        strict: z.boolean().optional().describe('warnings make it invalid too'),
      }),
    ),
    responses: { 200: json('the problems, each at its line', Validation) },
    errors: [400],
  }),
};
