import { Hono } from 'hono';
import { ScriptError } from '../../core/errors.js';
import type { Script } from '../../core/script.js';
import { loadProjectConfig } from '../../pipeline/config.js';
import { resolvePipeline } from '../../pipeline/discover.js';
import { loadPipeline } from '../../pipeline/load.js';
import { parseScript, type ScriptTarget } from '../../runtimes/script.js';
import { type FixRequest, type RunRequest, runApi } from '../api/run.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';
import { loadProjectScript, projectFile } from '../project-files.js';
import { mustExist } from './tasks.js';

/** Start work: a run of a pipeline, or a follow-up fix of a finished task. Both run in the background. */
export function runRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  handle(app, runApi.run, ({ body, reply }) => {
    const { input, agent, size } = body;
    const found = resolvePipeline(ctx.root, { pipeline: body.pipeline }, loadProjectConfig(ctx.root));
    const pipeline = loadPipeline(projectFile(ctx.root, found.file, 'pipeline'), {
      params: body.params ?? {},
      name: found.name,
      within: ctx.root,
    });
    const id = ctx.tasks.start({
      pipeline,
      ...(size ? { size: { size, by: 'api' } } : {}),
      input,
      ...(agent ? { agent } : {}),
      // checked against the pipeline before anything runs, as `troupe run --script` does
      script: scriptFrom(ctx, body, { pipeline, ...(agent ? { start: agent } : {}), warn: () => {} }),
      cwd: ctx.root,
    });
    ctx.runner.run(id);
    return reply(202, { task_id: id, status: 'started', agent_id: agent ?? pipeline.agents[0]?.id ?? null });
  });

  handle(app, runApi.fix, ({ body, reply }) => {
    const parent = mustExist(ctx, body.parent_task_id);
    const { description: request, agent } = body;
    const script = body.script === undefined ? undefined : scriptFrom(ctx, body);
    const id = ctx.tasks.fix(parent, request, {
      ...(agent ? { agent } : {}),
      ...(script !== undefined ? { script } : {}),
    });
    ctx.runner.run(id);
    return reply(202, { task_id: id, status: 'started', parent_task_id: parent });
  });

  return app;
}

/** `script`: a path (relative to the project) or the script itself as an object. */
function scriptFrom(ctx: ServerContext, body: RunRequest | FixRequest, target?: ScriptTarget): Script | null {
  const script = body.script;
  if (script === undefined || script === null) return null;
  // the route's schema lets through a path or an object, nothing else
  if (typeof script === 'string') return loadProjectScript(ctx.root, script, target);
  const parsed = parseScript(JSON.stringify(script), '<inline script>', target);
  if (!loadProjectConfig(ctx.root).server.script_commands) refuseCommands(parsed);
  return parsed;
}

/** An inline script runs no command unless the project allows it (`server: {script_commands: true}`). */
function refuseCommands(script: Script): void {
  for (const [agent, entries] of Object.entries(script.agents)) {
    if (entries.some((entry) => typeof entry === 'object' && 'run' in entry && entry.run)) {
      throw new ScriptError(
        `<inline script>: agent '${agent}' has a \`run:\` command, and scripts sent to the API run none here`,
        {
          hint: 'put the script in a file of the project, or set `server: {script_commands: true}` in .troupe/config.yaml',
        },
      );
    }
  }
}
