import { Hono } from 'hono';
import { loadProjectConfig, saveDefaultPipeline } from '../../pipeline/config.js';
import { resolvePipeline } from '../../pipeline/discover.js';
import { loadPipeline } from '../../pipeline/load.js';
import { validatePipelineFile } from '../../pipeline/validate.js';
import { addAgent, agentsInFile, removeAgent, updateAgent } from '../agent-edit.js';
import { jsonBody, optionalString, requiredString, type ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import {
  agentsJson,
  checkName,
  checkPipelineText,
  diagnosticsJson,
  findPipeline,
  newPipelineFile,
  pipelineEntries,
  pipelineGraph,
  readPipeline,
  writePipeline,
} from '../pipeline-files.js';
import { projectFile } from '../project-files.js';

/** Pipelines: list, show (YAML, graph, problems), save with validation, the default, validate text. */
export function pipelineRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get('/api/pipelines', (c) => {
    const entries = pipelineEntries(ctx.root);
    return c.json({
      pipelines: entries.map((p) => ({
        name: p.name,
        file: p.file,
        is_default: p.isDefault,
        agent_count: agentCount(readPipeline(p)),
      })),
      default: entries.find((p) => p.isDefault)?.name ?? null,
    });
  });

  app.get('/api/pipelines/:name', (c) => {
    const entry = findPipeline(ctx.root, c.req.param('name'));
    const result = validatePipelineFile(entry.file, { name: entry.name, within: ctx.root });
    return c.json({
      name: entry.name,
      file: entry.file,
      is_default: entry.isDefault,
      content: readPipeline(entry),
      valid: !result.diagnostics.some((d) => d.severity === 'error'),
      diagnostics: diagnosticsJson(result.diagnostics, ctx.root, entry.file),
      features: result.features,
      graph: result.pipeline ? pipelineGraph(result.pipeline) : null,
    });
  });

  app.get('/api/pipelines/:name/yaml', (c) => {
    const entry = findPipeline(ctx.root, c.req.param('name'));
    c.header('Content-Disposition', `inline; filename="${entry.name}.yaml"`);
    return c.body(readPipeline(entry), 200, { 'Content-Type': 'text/yaml; charset=utf-8' });
  });

  /** Saves a pipeline (new or existing) unless it has errors; warnings do not stop it. */
  app.put('/api/pipelines/:name', async (c) => {
    const name = c.req.param('name');
    checkName(name);
    const content = requiredString(await jsonBody(c), 'content');
    const existing = pipelineEntries(ctx.root).find((p) => p.name === name);
    const file = existing?.file ?? newPipelineFile(ctx.root, name);
    const check = checkPipelineText(ctx.root, content, file, name);
    const diagnostics = diagnosticsJson(check.diagnostics, ctx.root, file);
    if (!check.pipeline) {
      throw new ApiError(422, 'pipeline_invalid', firstError(diagnostics), { diagnostics });
    }
    writePipeline(file, content);
    return c.json(
      { name, file, created: !existing, diagnostics, graph: pipelineGraph(check.pipeline) },
      existing ? 200 : 201,
    );
  });

  /** The agents as written in the file: what the agent form fills in from. */
  app.get('/api/pipelines/:name/agents', (c) => {
    const entry = findPipeline(ctx.root, c.req.param('name'));
    return c.json(agentsInFile(readPipeline(entry)));
  });

  /** Adds an agent (the form's fields) at the end of `agents:`; 422 with diagnostics if that breaks the pipeline. */
  app.post('/api/pipelines/:name/agents', async (c) => {
    const entry = findPipeline(ctx.root, c.req.param('name'));
    const { text, id } = addAgent(readPipeline(entry), await jsonBody(c));
    return c.json(saveChecked(ctx.root, entry, text, id), 201);
  });

  /** Changes the fields present in the body (null or "" removes one); the rest of the file is kept. */
  app.put('/api/pipelines/:name/agents/:agent_id', async (c) => {
    const entry = findPipeline(ctx.root, c.req.param('name'));
    const { text, id } = updateAgent(readPipeline(entry), c.req.param('agent_id'), await jsonBody(c));
    return c.json(saveChecked(ctx.root, entry, text, id));
  });

  app.delete('/api/pipelines/:name/agents/:agent_id', (c) => {
    const entry = findPipeline(ctx.root, c.req.param('name'));
    const text = removeAgent(readPipeline(entry), c.req.param('agent_id'));
    return c.json({ ...saveChecked(ctx.root, entry, text, c.req.param('agent_id')), deleted: true });
  });

  app.post('/api/pipelines/default', async (c) => {
    const name = requiredString(await jsonBody(c), 'name');
    findPipeline(ctx.root, name);
    saveDefaultPipeline(ctx.root, name);
    return c.json({ default: name });
  });

  app.get('/api/agents', (c) => {
    const found = resolvePipeline(
      ctx.root,
      { pipeline: c.req.query('pipeline') },
      loadProjectConfig(ctx.root),
    );
    return c.json(
      agentsJson(
        loadPipeline(projectFile(ctx.root, found.file, 'pipeline'), { name: found.name, within: ctx.root }),
      ),
    );
  });

  /** Checks pipeline text without saving it: what the editor shows as you type. */
  app.post('/api/validate', async (c) => {
    const body = await jsonBody(c);
    const content = optionalString(body, 'content', 'yaml_content');
    const name = optionalString(body, 'name') ?? 'pipeline';
    checkName(name);
    const existing = pipelineEntries(ctx.root).find((p) => p.name === name);
    const file = existing?.file ?? newPipelineFile(ctx.root, name);
    const text = content ?? (existing ? readPipeline(existing) : '');
    const check = checkPipelineText(ctx.root, text, file, name);
    const diagnostics = diagnosticsJson(check.diagnostics, ctx.root, file);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const warnings = diagnostics.filter((d) => d.severity === 'warning');
    return c.json({
      valid: errors.length === 0 && !(body.strict === true && warnings.length > 0),
      diagnostics,
      errors: errors.map(aqmIssue),
      warnings: warnings.map(aqmIssue),
      summary: { agent_count: check.pipeline?.agents.length ?? 0 },
      graph: check.pipeline ? pipelineGraph(check.pipeline) : null,
    });
  });

  return app;
}

/** Saves the edited text unless it makes the pipeline invalid (422 with the diagnostics, nothing written). */
function saveChecked(root: string, entry: { name: string; file: string }, text: string, id: string) {
  const check = checkPipelineText(root, text, entry.file, entry.name);
  const diagnostics = diagnosticsJson(check.diagnostics, root, entry.file);
  if (!check.pipeline) {
    throw new ApiError(422, 'pipeline_invalid', firstError(diagnostics), { diagnostics, content: text });
  }
  writePipeline(entry.file, text);
  return { name: entry.name, agent_id: id, content: text, diagnostics, graph: pipelineGraph(check.pipeline) };
}

/** aqm's count: the "- id:" lines. */
function agentCount(text: string): number {
  return text.match(/^\s*-\s+id\s*:/gm)?.length ?? 0;
}

function aqmIssue(d: { line: number; col: number; message: string; hint?: string }) {
  return { path: `${d.line}:${d.col}`, message: d.message, fix: d.hint ?? null };
}

function firstError(diagnostics: { severity: string; line: number; col: number; message: string }[]): string {
  const first = diagnostics.find((d) => d.severity === 'error');
  const more = diagnostics.filter((d) => d.severity === 'error').length - 1;
  return first
    ? `${first.line}:${first.col}: ${first.message}${more > 0 ? ` (and ${more} more)` : ''}`
    : 'the pipeline is invalid';
}
