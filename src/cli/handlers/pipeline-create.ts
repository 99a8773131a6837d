import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type AuthorRound, authorProjectPipeline, projectRuntimes } from '../../app/pipeline-author.js';
import { UsageError } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import { loadProjectConfig } from '../../pipeline/config.js';
import { type Diagnostic, formatDiagnostic } from '../../pipeline/diagnostics.js';
import { findProjectRoot } from '../../pipeline/discover.js';
import { findTemplate, listTemplates, templatePipeline } from '../../pipeline/templates.js';
import { configValidateOptions } from '../../pipeline/validate.js';
import { text as graph } from '../agent-graph.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { ask, checkPipelineName, interactive, parseRuntimes } from '../options.js';

export interface CreateFlags {
  /** The request; `true`: a bare `--ai` (aqm's form), the request is asked for on a terminal. */
  ai?: string | true;
  template?: string;
  listTemplates?: boolean;
  runtime?: string;
  script?: string;
  force?: boolean;
  yes?: boolean;
  json?: boolean;
}

/** `troupe pipeline create NAME --ai "…" | --template T`, and `--list-templates`. */
export async function pipelineCreate(
  name: string | undefined,
  flags: CreateFlags,
  io: CommandIo,
): Promise<number> {
  if (flags.listTemplates) {
    const all = listTemplates().map(({ name, description }) => ({ name, description }));
    if (flags.json) writeJson(io, all);
    else for (const t of all) io.out(`${t.name.padEnd(20)} ${t.description}\n`);
    return 0;
  }
  await createPipeline(name, flags, io);
  return 0;
}

async function createPipeline(name: string | undefined, flags: CreateFlags, io: CommandIo): Promise<void> {
  if (name === undefined) throw new UsageError('give the new pipeline a NAME (or --list-templates)');
  checkPipelineName(name);
  if ((flags.ai === undefined) === (flags.template === undefined))
    throw new UsageError('give --ai "what the team should do" or --template NAME (one of them)');
  if (flags.script && flags.ai === undefined) throw new UsageError('--script goes with --ai');
  const root = findProjectRoot(io.cwd);
  const file = path.join(root, '.troupe', 'pipelines', `${name}.yaml`);
  const refuseExisting = () => {
    if (existsSync(file) && !flags.force)
      throw new UsageError(`${path.relative(io.cwd, file) || file} already exists`, {
        hint: 'pass --force to overwrite it, or choose another name',
      });
  };
  refuseExisting(); // before an agent spends anything on it
  const request = flags.ai === undefined ? undefined : await aiRequest(name, flags.ai, io);
  const config = loadProjectConfig(root);
  const validate = { ...configValidateOptions(config), name };
  const runtime = flags.runtime === undefined ? undefined : parseRuntimes(flags.runtime, '--runtime')[0];
  let made: {
    yaml: string;
    pipeline: Pipeline;
    rounds?: Array<{ round: number; diagnostics: Diagnostic[] }>;
  };
  // a scripted project (no agent CLI): a template's team is scripted too, and brings its replies
  let templateScript: string | null = null;
  if (flags.template !== undefined) {
    const used = projectRuntimes(root, config);
    const teamRuntime =
      runtime ?? (used.length > 0 && used.every((r) => r === 'scripted') ? 'scripted' : undefined);
    const team = teamRuntime ? { writer: teamRuntime, reviewer: teamRuntime } : undefined;
    const template = findTemplate(flags.template);
    made = templatePipeline(template, file, { validate, ...(team ? { team } : {}) });
    if (teamRuntime === 'scripted') templateScript = template.script;
  } else {
    made = await authorProjectPipeline(root, config, {
      request: request!,
      file,
      ...(runtime ? { runtime } : {}),
      ...(flags.script ? { script: flags.script } : {}),
      validate,
      onRound: (round) => io.err(roundLines(round)),
    });
  }
  if (!flags.json) {
    io.out(`${made.yaml.trimEnd()}\n\n${graph(made.pipeline)}`);
  }
  const shown = path.relative(io.cwd, file) || file;
  const save = !interactive(flags) || /^(y(es)?)?$/i.test(await ask(`save it as ${shown}? [Y/n] `));
  if (save) {
    refuseExisting(); // the agent took a while: someone may have written it meanwhile
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, made.yaml);
  }
  const script = templateScript && save ? path.join(root, '.troupe', 'scripts', `${name}.yaml`) : null;
  if (script) {
    mkdirSync(path.dirname(script), { recursive: true });
    copyFileSync(templateScript!, script);
  }
  if (flags.json) {
    writeJson(io, {
      name,
      file,
      source: flags.template !== undefined ? `template:${flags.template}` : 'ai',
      rounds: (made.rounds ?? []).map((r) => ({ round: r.round, diagnostics: r.diagnostics })),
      yaml: made.yaml,
      saved: save,
      script,
    });
  } else if (save) {
    io.out(
      `\nsaved ${shown}${script ? ` and its offline replies, ${path.relative(io.cwd, script)}` : ''}\nnext: troupe run "your task" --pipeline ${name}\n`,
    );
  } else {
    io.out('\nnot saved\n');
  }
}

/**
 * What the team should do: `--ai "…"`, or for a bare `--ai` (aqm's form) a line asked for on the
 * terminal (the question on stderr, so stdout stays the pipeline). Without a terminal there is no
 * one to ask: the command says what to pass.
 */
async function aiRequest(name: string, given: string | true, io: CommandIo): Promise<string> {
  const usage = `troupe pipeline create ${name} --ai "what the team should do"`;
  if (given !== true) {
    if (given.trim()) return given;
    throw new UsageError(`--ai "" says nothing: pass the request, ${usage}`);
  }
  if (!process.stdin.isTTY)
    throw new UsageError(`--ai without a request, and no terminal to ask for it on: pass it, ${usage}`);
  io.err('Describe the pipeline: what should the team do? (one line)\n');
  const answer = await ask('> ');
  if (!answer) throw new UsageError(`no request given: pass it, ${usage}`);
  return answer;
}

/** How a round went, on stderr: its errors, and whether they went back to the agent. */
function roundLines(round: AuthorRound): string {
  const errors = round.diagnostics.filter((d) => d.severity === 'error');
  const counted = `${errors.length} error${errors.length === 1 ? '' : 's'}`;
  const head = `round ${round.round}: ${errors.length === 0 ? 'valid' : `${counted}${round.retrying ? ', sent back to the agent' : ''}`}`;
  const lines = errors.map((d) => `  ${formatDiagnostic(d).replace(/\n/g, '\n  ')}`);
  return `${[head, ...lines].join('\n')}\n`;
}
