import { readFileSync } from 'node:fs';
import { openProject } from '../../app/project.js';
import { saveDefaultPipeline } from '../../pipeline/config.js';
import { listPipelines, resolvePipeline } from '../../pipeline/discover.js';
import { type CommandIo, writeJson } from '../command-io.js';

/** `troupe pipeline list`: the project's pipelines, the default one starred. */
export async function listProjectPipelines(options: { json?: boolean }, io: CommandIo): Promise<number> {
  const project = openProject(io.cwd);
  const list = listPipelines(project.root, project.config);
  if (options.json) writeJson(io, list);
  else if (list.length === 0) io.out('no pipelines; create one with `troupe init`\n');
  else for (const p of list) io.out(`${p.isDefault ? '*' : ' '} ${p.name.padEnd(20)} ${p.file}\n`);
  return 0;
}

/** `troupe pipeline show [name]`: a pipeline's YAML as written. */
export async function showPipeline(name: string | undefined, io: CommandIo): Promise<number> {
  const project = openProject(io.cwd);
  const found = resolvePipeline(project.root, { pipeline: name }, project.config);
  io.out(readFileSync(found.file, 'utf8'));
  return 0;
}

/** `troupe pipeline default [name]`: prints the default pipeline, or makes `name` it. */
export async function defaultPipeline(name: string | undefined, io: CommandIo): Promise<number> {
  const project = openProject(io.cwd);
  if (name) {
    resolvePipeline(project.root, { pipeline: name }, project.config);
    saveDefaultPipeline(project.root, name);
    io.out(`default pipeline: ${name}\n`);
  } else {
    io.out(`${resolvePipeline(project.root, {}, project.config).name}\n`);
  }
  return 0;
}
