import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { CLI_RUNTIMES, spellList } from '../../core/runtimes.js';
import type { CliFound, Team } from '../../pipeline/team.js';
import { action } from '../action.js';

interface InitOptions {
  name: string;
  runtime?: string;
  runtimes?: string;
  template: string;
  fromAqm?: boolean;
  force?: boolean;
  yes?: boolean;
  json?: boolean;
}

interface CliStatus extends CliFound {
  status: string;
  detail: string;
  fix: string | null;
}

export const DEFAULT_TEMPLATE = 'dev-review-deploy';

export function registerInit(program: Command): void {
  program
    .command('init')
    .description(
      'set up .troupe/ here: finds the agent CLIs of this machine and proposes a team that uses them (optional: every command creates .troupe/ on first use)',
    )
    .option('-n, --name <pipeline>', 'pipeline name', 'default')
    .option(
      '--runtimes <list>',
      'the CLIs of the team, e.g. claude,gemini: the first writes, the second reviews',
    )
    .option('-r, --runtime <runtime>', 'one runtime for every agent (the same as --runtimes with one name)')
    .option(
      '-t, --template <template>',
      'the built-in template to start from (troupe pipeline create --list-templates)',
      DEFAULT_TEMPLATE,
    )
    .option('--from-aqm', "convert this project's .aqm/ (pipelines, params, config) into .troupe/")
    .option('--force', 'overwrite what is already in .troupe/')
    .option('-y, --yes', 'do not ask anything (the default when not on a terminal)')
    .option('--json', 'print what was found and written as JSON')
    .action(
      action(async (options: InitOptions) => {
        if (options.fromAqm) {
          const other = ['runtime', 'runtimes'].filter((k) => options[k as keyof InitOptions] !== undefined);
          if (other.length || options.name !== 'default' || options.template !== DEFAULT_TEMPLATE)
            throw new UsageError('--from-aqm converts what .aqm/ has: it takes only --force and --json');
          return fromAqm(options);
        }
        return initHere(options);
      }),
    );
}

async function initHere(options: InitOptions): Promise<number> {
  const { checkPipelineName, interactive, parseRuntimes, printJson } = await import('../options.js');
  const { findTemplate } = await import('../../pipeline/templates.js');
  const { proposeTeam } = await import('../../pipeline/team.js');
  const { initProject } = await import('../../app/init-project.js');
  if (options.runtime !== undefined && options.runtimes !== undefined)
    throw new UsageError('give --runtime or --runtimes, not both');
  const asked = options.runtimes ?? options.runtime;
  let runtimes =
    asked === undefined ? [] : parseRuntimes(asked, options.runtimes ? '--runtimes' : '--runtime');
  const clis = asked === undefined ? await findClis() : [];
  let team = proposeTeam(clis, runtimes);
  let { name, template } = options;
  if (!options.json) process.stdout.write(describeMachine(clis, team));
  if (interactive(options)) {
    ({ name, template, runtimes } = await wizard(name, template, team));
    team = proposeTeam(clis, runtimes);
  }
  checkPipelineName(name);
  const root = process.cwd();
  const written = initProject({
    root,
    name,
    template: findTemplate(template),
    team,
    ...(options.force ? { force: true } : {}),
  });
  // an aqm project was probably meant to be converted rather than started over
  const aqm = existsSync(path.join(root, '.aqm'))
    ? 'this folder has an aqm project: `troupe init --from-aqm` converts its .aqm/ (pipelines, params, config)'
    : null;
  const next =
    team.writer === 'scripted'
      ? `troupe run "your task"   # offline, scripted replies; install ${spellList(CLI_RUNTIMES)}, then troupe init --force`
      : 'troupe run "your task"';
  if (options.json) {
    printJson({ clis, team, template, name, written, next, ...(aqm ? { note: aqm } : {}) });
  } else {
    for (const w of written) process.stdout.write(`created ${w.file} (${w.what})\n`);
    if (aqm) process.stdout.write(`note: ${aqm}\n`);
    process.stdout.write(`next: ${next}\n`);
  }
  return 0;
}

/** troupe doctor's checks of the three CLIs: installed, and able to run headless here. */
async function findClis(): Promise<CliStatus[]> {
  const { runDoctor } = await import('../../runtimes/doctor-checks.js');
  const report = await runDoctor({ cwd: process.cwd() });
  return report.clis.map((c) => ({
    runtime: c.runtime,
    installed: c.installed,
    ready: c.status === 'ok',
    status: c.status,
    detail: c.detail,
    fix: c.fix,
  }));
}

function describeMachine(clis: CliStatus[], team: Team): string {
  const lines = clis.map((c) => {
    const mark = c.ready ? '✓' : c.installed ? '!' : '·';
    const fix = !c.ready && c.installed && c.fix ? ` (${c.fix})` : '';
    return `${mark} ${c.runtime}: ${c.ready ? 'can run headless here' : c.detail}${fix}`;
  });
  const who = team.writer === team.reviewer ? team.writer : `${team.writer} writes, ${team.reviewer} reviews`;
  lines.push(`team: ${who} (${team.reason})`);
  return `${lines.join('\n')}\n`;
}

async function wizard(
  name: string,
  template: string,
  team: Team,
): Promise<{ name: string; template: string; runtimes: Array<import('../options.js').TeamRuntime> }> {
  const { ask, parseRuntimes } = await import('../options.js');
  const { listTemplates } = await import('../../pipeline/templates.js');
  const proposed = [...new Set([team.writer, team.reviewer])].join(',');
  const names = listTemplates().map((t) => t.name);
  return {
    name: (await ask(`pipeline name (${name}): `)) || name,
    template: (await ask(`template [${names.join('/')}] (${template}): `)) || template,
    runtimes: parseRuntimes(
      (await ask(`runtimes, the writer first (${proposed}): `)) || proposed,
      'runtimes',
    ),
  };
}

async function fromAqm(options: InitOptions): Promise<number> {
  const { printJson } = await import('../options.js');
  const { convertAqmProject } = await import('../../app/aqm-import.js');
  const root = process.cwd();
  const report = convertAqmProject(root, { ...(options.force ? { force: true } : {}) });
  if (options.json) {
    printJson(report);
    return 0;
  }
  const out: string[] = ['converted .aqm/ into .troupe/ (.aqm/ is left as it was):'];
  for (const w of report.written) out.push(`  wrote ${w.file}  (${w.what})`);
  if (report.changed.length) out.push('changed on the way:', ...report.changed.map((c) => `  ${c}`));
  if (report.skipped.length) {
    out.push('not carried over:');
    for (const s of report.skipped) out.push(`  ${s.what}: ${s.reason}`);
  }
  if (report.differences.length)
    out.push(
      'behaves differently in troupe (docs/aqm-compatibility.md):',
      ...report.differences.map((d) => `  ${d}`),
    );
  out.push(`next: ${report.next}`);
  process.stdout.write(`${out.join('\n').replaceAll(`${root}${path.sep}`, '')}\n`);
  return 0;
}
