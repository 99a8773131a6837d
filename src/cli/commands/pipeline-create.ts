import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { AuthorRound } from '../../app/pipeline-author.js';
import { UsageError } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import { type Diagnostic, formatDiagnostic } from '../../pipeline/diagnostics.js';
import { action } from '../action.js';

interface CreateFlags {
  ai?: string;
  template?: string;
  listTemplates?: boolean;
  runtime?: string;
  script?: string;
  force?: boolean;
  yes?: boolean;
  json?: boolean;
}

/** `troupe pipeline create NAME --ai "…" | --template T`, and `--list-templates`. */
export function registerPipelineCreate(pipeline: Command): void {
  pipeline
    .command('create')
    .description('write a new pipeline: by an agent from your words (--ai), or from a built-in template')
    .argument('[name]', 'saved as .troupe/pipelines/<name>.yaml')
    .option('--ai <request>', 'what the team should do: an agent writes the pipeline, troupe validates it')
    .option('-t, --template <template>', 'start from a built-in template (see --list-templates)')
    .option('--list-templates', 'list the built-in templates')
    .option(
      '-r, --runtime <runtime>',
      "--ai: the runtime of the agent that writes it (default: the project's, else claude); --template: put every agent on it",
    )
    .option('--script <file>', '--ai: scripted replies for the writing agent (`agents.author`), offline')
    .option('--force', 'overwrite an existing pipeline of that name')
    .option('-y, --yes', 'save without asking (the default when not on a terminal)')
    .option('--json', 'print {name, file, source, rounds, yaml, saved} as JSON')
    .action(
      action(async (name: string | undefined, flags: CreateFlags) => {
        const { printJson } = await import('../options.js');
        if (flags.listTemplates) {
          const { listTemplates } = await import('../../pipeline/templates.js');
          const all = listTemplates().map(({ name, description }) => ({ name, description }));
          if (flags.json) printJson(all);
          else for (const t of all) process.stdout.write(`${t.name.padEnd(20)} ${t.description}\n`);
          return 0;
        }
        await createPipeline(name, flags);
        return 0;
      }),
    );
}

async function createPipeline(name: string | undefined, flags: CreateFlags): Promise<void> {
  const { checkPipelineName, interactive, ask, printJson, parseRuntimes } = await import('../options.js');
  const { findProjectRoot } = await import('../../pipeline/discover.js');
  const { configValidateOptions } = await import('../../pipeline/validate.js');
  const { loadProjectConfig } = await import('../../pipeline/config.js');
  if (name === undefined) throw new UsageError('give the new pipeline a NAME (or --list-templates)');
  checkPipelineName(name);
  if ((flags.ai === undefined) === (flags.template === undefined))
    throw new UsageError('give --ai "what the team should do" or --template NAME (one of them)');
  if (flags.script && flags.ai === undefined) throw new UsageError('--script goes with --ai');
  const root = findProjectRoot(process.cwd());
  const file = path.join(root, '.troupe', 'pipelines', `${name}.yaml`);
  const refuseExisting = () => {
    if (existsSync(file) && !flags.force)
      throw new UsageError(`${path.relative(process.cwd(), file) || file} already exists`, {
        hint: 'pass --force to overwrite it, or choose another name',
      });
  };
  refuseExisting(); // before an agent spends anything on it
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
    const { findTemplate, templatePipeline } = await import('../../pipeline/templates.js');
    const { projectRuntimes } = await import('../../app/pipeline-author.js');
    const used = projectRuntimes(root, config);
    const teamRuntime =
      runtime ?? (used.length > 0 && used.every((r) => r === 'scripted') ? 'scripted' : undefined);
    const team = teamRuntime ? { writer: teamRuntime, reviewer: teamRuntime } : undefined;
    const template = findTemplate(flags.template);
    made = templatePipeline(template, file, { validate, ...(team ? { team } : {}) });
    if (teamRuntime === 'scripted') templateScript = template.script;
  } else {
    const { authorProjectPipeline } = await import('../../app/pipeline-author.js');
    made = await authorProjectPipeline(root, config, {
      request: flags.ai!,
      file,
      ...(runtime ? { runtime } : {}),
      ...(flags.script ? { script: flags.script } : {}),
      validate,
      onRound: (round) => process.stderr.write(roundLines(round)),
    });
  }
  if (!flags.json) {
    const { text: graph } = await import('../agent-graph.js');
    process.stdout.write(`${made.yaml.trimEnd()}\n\n${graph(made.pipeline)}`);
  }
  const shown = path.relative(process.cwd(), file) || file;
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
    printJson({
      name,
      file,
      source: flags.template !== undefined ? `template:${flags.template}` : 'ai',
      rounds: (made.rounds ?? []).map((r) => ({ round: r.round, diagnostics: r.diagnostics })),
      yaml: made.yaml,
      saved: save,
      script,
    });
  } else if (save) {
    process.stdout.write(
      `\nsaved ${shown}${script ? ` and its offline replies, ${path.relative(process.cwd(), script)}` : ''}\nnext: troupe run "your task" --pipeline ${name}\n`,
    );
  } else {
    process.stdout.write('\nnot saved\n');
  }
}

/** How a round went, on stderr: its errors, and whether they went back to the agent. */
function roundLines(round: AuthorRound): string {
  const errors = round.diagnostics.filter((d) => d.severity === 'error');
  const counted = `${errors.length} error${errors.length === 1 ? '' : 's'}`;
  const head = `round ${round.round}: ${errors.length === 0 ? 'valid' : `${counted}${round.retrying ? ', sent back to the agent' : ''}`}`;
  const lines = errors.map((d) => `  ${formatDiagnostic(d).replace(/\n/g, '\n  ')}`);
  return `${[head, ...lines].join('\n')}\n`;
}
