import { existsSync } from 'node:fs';
import path from 'node:path';
import { convertAqmProject } from '../../app/aqm-import.js';
import { initProject } from '../../app/init-project.js';
import { convertSymphonyWorkflow } from '../../app/symphony-import.js';
import { UsageError } from '../../core/errors.js';
import { CLI_RUNTIMES, spellList } from '../../core/runtimes.js';
import { type CliFound, proposeTeam, type Team } from '../../pipeline/team.js';
import { findTemplate, listTemplates } from '../../pipeline/templates.js';
import { runDoctor } from '../../runtimes/doctor-checks.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { DEFAULT_TEMPLATE } from '../commands/init.js';
import { ask, checkPipelineName, interactive, parseRuntimes, type TeamRuntime } from '../options.js';

export interface InitOptions {
  name: string;
  runtime?: string;
  runtimes?: string;
  template: string;
  fromAqm?: boolean;
  /** `--from-symphony [WORKFLOW.md]`: true when given without a path. */
  fromSymphony?: string | boolean;
  force?: boolean;
  yes?: boolean;
  json?: boolean;
}

interface CliStatus extends CliFound {
  status: string;
  detail: string;
  fix: string | null;
}

/** `troupe init`: a team for the CLIs of this machine (or `--from-aqm`, this project's .aqm/ converted; `--from-symphony`, a WORKFLOW.md). */
export async function init(options: InitOptions, io: CommandIo): Promise<number> {
  if (options.fromSymphony !== undefined && options.fromSymphony !== false) {
    const other = ['runtime', 'runtimes'].filter((k) => options[k as keyof InitOptions] !== undefined);
    if (other.length || options.fromAqm || options.template !== DEFAULT_TEMPLATE)
      throw new UsageError(
        '--from-symphony converts a WORKFLOW.md: it takes only --name, --force and --json',
      );
    return fromSymphony(options, io);
  }
  if (options.fromAqm) {
    const other = ['runtime', 'runtimes'].filter((k) => options[k as keyof InitOptions] !== undefined);
    if (other.length || options.name !== 'default' || options.template !== DEFAULT_TEMPLATE)
      throw new UsageError('--from-aqm converts what .aqm/ has: it takes only --force and --json');
    return fromAqm(options, io);
  }
  return initHere(options, io);
}

async function initHere(options: InitOptions, io: CommandIo): Promise<number> {
  if (options.runtime !== undefined && options.runtimes !== undefined)
    throw new UsageError('give --runtime or --runtimes, not both');
  const asked = options.runtimes ?? options.runtime;
  let runtimes =
    asked === undefined ? [] : parseRuntimes(asked, options.runtimes ? '--runtimes' : '--runtime');
  const clis = asked === undefined ? await findClis(io.cwd) : [];
  let team = proposeTeam(clis, runtimes);
  let { name, template } = options;
  if (!options.json) io.out(describeMachine(clis, team));
  if (interactive(options)) {
    ({ name, template, runtimes } = await wizard(name, template, team));
    team = proposeTeam(clis, runtimes);
  }
  checkPipelineName(name);
  const root = io.cwd;
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
    writeJson(io, { clis, team, template, name, written, next, ...(aqm ? { note: aqm } : {}) });
  } else {
    for (const w of written) io.out(`created ${w.file} (${w.what})\n`);
    if (aqm) io.out(`note: ${aqm}\n`);
    io.out(`next: ${next}\n`);
  }
  return 0;
}

/** troupe doctor's checks of the three CLIs: installed, and able to run headless here. */
async function findClis(cwd: string): Promise<CliStatus[]> {
  const report = await runDoctor({ cwd });
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
): Promise<{ name: string; template: string; runtimes: TeamRuntime[] }> {
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

async function fromAqm(options: InitOptions, io: CommandIo): Promise<number> {
  const root = io.cwd;
  const report = convertAqmProject(root, { ...(options.force ? { force: true } : {}) });
  if (options.json) {
    writeJson(io, report);
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
  io.out(`${out.join('\n').replaceAll(`${root}${path.sep}`, '')}\n`);
  return 0;
}

async function fromSymphony(options: InitOptions, io: CommandIo): Promise<number> {
  checkPipelineName(options.name);
  const file = typeof options.fromSymphony === 'string' ? options.fromSymphony : undefined;
  const report = convertSymphonyWorkflow(io.cwd, file, {
    name: options.name,
    ...(options.force ? { force: true } : {}),
  });
  if (options.json) {
    writeJson(io, report);
    return 0;
  }
  const out: string[] = [`converted ${file ?? 'WORKFLOW.md'} (it is left as it was):`];
  for (const w of report.written) out.push(`  wrote ${w.file}  (${w.what})`);
  const section = (kind: string, title: string) => {
    const items = report.mapping.filter((m) => m.kind === kind);
    if (items.length) out.push(title, ...items.map((m) => `  ${m.what}`));
  };
  section('same', 'carried over as it is:');
  section('differs', 'differs in troupe (docs/trackers.md):');
  section('unsupported', 'not supported yet:');
  out.push(`next: ${report.next}`);
  io.out(`${out.join('\n')}\n`);
  return 0;
}
