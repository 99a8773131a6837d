import { Hono } from 'hono';
import type { Script } from '../../core/script.js';
import { parseTaskSize, TASK_SIZES } from '../../core/spec.js';
import { loadProjectConfig } from '../../pipeline/config.js';
import { resolvePipeline } from '../../pipeline/discover.js';
import { loadPipeline } from '../../pipeline/load.js';
import { parseScript } from '../../runtimes/script.js';
import {
  type Body,
  jsonBody,
  optionalString,
  requiredString,
  type ServerContext,
  stringMap,
} from '../context.js';
import { badRequest } from '../errors.js';
import { loadProjectScript, projectFile } from '../project-files.js';
import { mustExist } from './tasks.js';

/** Start work: a run of a pipeline, or a follow-up fix of a finished task. Both run in the background. */
export function runRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.post('/api/run', async (c) => {
    const body = await jsonBody(c);
    const input = requiredString(body, 'input', 'description');
    const name = optionalString(body, 'pipeline');
    const found = resolvePipeline(ctx.root, { pipeline: name }, loadProjectConfig(ctx.root));
    const pipeline = loadPipeline(projectFile(ctx.root, found.file, 'pipeline'), {
      params: stringMap(body, 'params'),
      name: found.name,
      within: ctx.root,
    });
    const agent = optionalString(body, 'agent', 'agent_id');
    const sizeText = optionalString(body, 'size');
    const size = sizeText === undefined ? null : parseTaskSize(sizeText);
    if (sizeText !== undefined && !size) throw badRequest(`size is one of ${TASK_SIZES.join(', ')}`);
    const id = ctx.tasks.start({
      pipeline,
      ...(size ? { size: { size, by: 'api' } } : {}),
      input,
      ...(agent ? { agent } : {}),
      script: scriptFrom(ctx, body),
      cwd: ctx.root,
    });
    ctx.runner.run(id);
    return c.json({ task_id: id, status: 'started', agent_id: agent ?? pipeline.agents[0]?.id ?? null }, 202);
  });

  app.post('/api/fix', async (c) => {
    const body = await jsonBody(c);
    const parent = mustExist(ctx, requiredString(body, 'parent_task_id'));
    const request = requiredString(body, 'description', 'input');
    const agent = optionalString(body, 'agent', 'agent_id');
    const script = body.script === undefined ? undefined : scriptFrom(ctx, body);
    const id = ctx.tasks.fix(parent, request, {
      ...(agent ? { agent } : {}),
      ...(script !== undefined ? { script } : {}),
    });
    ctx.runner.run(id);
    return c.json({ task_id: id, status: 'started', parent_task_id: parent }, 202);
  });

  return app;
}

/** `script`: a path (relative to the project) or the script itself as an object. */
function scriptFrom(ctx: ServerContext, body: Body): Script | null {
  const script = body.script;
  if (script === undefined || script === null) return null;
  if (typeof script === 'string') return loadProjectScript(ctx.root, script);
  if (typeof script === 'object' && !Array.isArray(script))
    return parseScript(JSON.stringify(script), '<inline script>');
  throw badRequest('script must be a path or an object');
}
