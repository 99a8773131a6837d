import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, stringify } from 'yaml';
import { NotFoundError, UsageError } from '../core/errors.js';
import type { Pipeline } from '../core/pipeline.js';
import { isConditionKeyword } from '../core/pipeline-vocabulary.js';
import { parseProjectConfig } from '../pipeline/config.js';
import { formatDiagnostic } from '../pipeline/diagnostics.js';
import { validatePipelineText } from '../pipeline/validate.js';
import { type WrittenFile, writeStateGitignore } from './init-project.js';

/**
 * `troupe init --from-aqm`: an aqm project's `.aqm/` (pipelines, params, config) copied into
 * `.troupe/`, in place, `.aqm/` left as it was. troupe reads aqm's dialect unchanged, so a
 * pipeline is copied as written, except aqm's deprecated `claude_code_flags`; each is validated
 * first, and one troupe cannot use is left out with the reason. What aqm's config holds that
 * troupe has no use for, and what will behave differently, is reported.
 */

export interface AqmConversion {
  written: WrittenFile[];
  /** Edits made on the way: `file:line:col: what`. */
  changed: string[];
  /** aqm files and settings not carried over, with the reason. */
  skipped: Array<{ what: string; reason: string }>;
  /** What will run differently under troupe than it did under aqm. */
  differences: string[];
  next: string;
}

/** aqm 1.3.1's config settings (core/config.py); troupe has each of them. */
const AQM_SETTINGS = [
  'default_pipeline',
  'pipeline.max_stages',
  'gate.model',
  'gate.timeout',
  'gate.system_prompt',
  'timeouts.claude',
  'timeouts.gemini',
  'timeouts.codex',
];

export function convertAqmProject(root: string, options: { force?: boolean } = {}): AqmConversion {
  const aqm = path.join(root, '.aqm');
  if (!statSync(aqm, { throwIfNoEntry: false })?.isDirectory())
    throw new NotFoundError(`no .aqm/ in ${root}`, { hint: "run it in the aqm project's folder" });
  const report: AqmConversion = {
    written: [],
    changed: [],
    skipped: [],
    differences: [],
    next: 'troupe validate && troupe run "your task"',
  };
  const files: Array<{ from: string; to: string; text: string }> = [];
  const pipelines = pipelineSources(root, report);
  for (const source of pipelines) {
    const converted = convertPipeline(root, source.from, source.to, report);
    if (converted) {
      files.push({ ...source, text: converted.text });
      report.differences.push(...differences(source.to, converted.pipeline));
    }
  }
  for (const [from, to] of [
    ['.aqm/params.yaml', '.troupe/params.yaml'],
    ['.aqm/pipelines/params.yaml', '.troupe/pipelines/params.yaml'],
  ] as const) {
    if (existsSync(path.join(root, from))) files.push({ from, to, text: read(root, from) });
  }
  if (existsSync(path.join(aqm, 'params.yaml')) && files.some((f) => f.from.startsWith('.aqm/pipelines/')))
    report.differences.push(
      '.troupe/params.yaml: aqm never read .aqm/params.yaml for the pipelines in .aqm/pipelines/ (it looked in .aqm/.aqm/); troupe does, so its values now apply to them',
    );
  const config = convertConfig(root, report) ?? {};
  const legacy = files.some((f) => f.from === '.aqm/agents.yaml');
  // troupe would take .aqm/agents.yaml before .troupe/pipelines/default.yaml: name the copy
  if (legacy && !config.default_pipeline) config.default_pipeline = 'default';
  if (Object.keys(config).length > 0)
    files.push({
      from: existsSync(path.join(aqm, 'config.yaml')) ? '.aqm/config.yaml' : '.aqm/agents.yaml (its default)',
      to: '.troupe/config.yaml',
      text: `# carried over from .aqm/ by \`troupe init --from-aqm\`\n${stringify(config)}`,
    });
  const history = ['queue.db', 'tasks'].filter((f) => existsSync(path.join(aqm, f)));
  if (history.length)
    report.skipped.push({
      what: history.map((f) => `.aqm/${f}`).join(', '),
      reason: "aqm's task queue: troupe keeps its own event log (.troupe/troupe.db) and starts with no tasks",
    });
  const taken = files.filter((f) => existsSync(path.join(root, f.to))).map((f) => f.to);
  if (taken.length && !options.force)
    throw new UsageError(`already in .troupe/: ${taken.join(', ')}; nothing was written`, {
      hint: 'pass --force to overwrite them',
    });
  for (const f of files) {
    mkdirSync(path.dirname(path.join(root, f.to)), { recursive: true });
    writeFileSync(path.join(root, f.to), f.text);
    report.written.push({ file: f.to, what: `from ${f.from}` });
  }
  report.written.push(...writeStateGitignore(root));
  return report;
}

/** `.aqm/pipelines/*.yaml`, and the legacy `.aqm/agents.yaml` as `default` (what aqm did with it). */
function pipelineSources(root: string, report: AqmConversion): Array<{ from: string; to: string }> {
  const dir = path.join(root, '.aqm', 'pipelines');
  const named = existsSync(dir)
    ? readdirSync(dir)
        .sort()
        .filter((f) => /\.ya?ml$/.test(f) && !/^params\.ya?ml$/.test(f))
        .map((f) => ({
          from: `.aqm/pipelines/${f}`,
          to: `.troupe/pipelines/${f.replace(/\.yml$/, '.yaml')}`,
        }))
    : [];
  if (existsSync(path.join(root, '.aqm', 'agents.yaml'))) {
    if (named.some((p) => p.to === '.troupe/pipelines/default.yaml'))
      report.skipped.push({
        what: '.aqm/agents.yaml',
        reason:
          'aqm copies it to pipelines/default.yaml only when that is missing, so .aqm/pipelines/default.yaml was used instead',
      });
    else named.push({ from: '.aqm/agents.yaml', to: '.troupe/pipelines/default.yaml' });
  }
  return named;
}

/** The pipeline as troupe will keep it, validated where it will be; null (reported) when troupe cannot use it. */
function convertPipeline(
  root: string,
  from: string,
  to: string,
  report: AqmConversion,
): { text: string; pipeline: Pipeline } | null {
  const changed: string[] = [];
  const text = renameDeprecatedFlags(read(root, from), (line, col, what) =>
    changed.push(`${to}:${line}:${col}: ${what}`),
  );
  const checked = validatePipelineText(text, path.join(root, to), { name: path.basename(to, '.yaml') });
  if (checked.pipeline) {
    report.changed.push(...changed);
    return { text, pipeline: checked.pipeline };
  }
  const errors = checked.diagnostics.filter((d) => d.severity === 'error');
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  report.skipped.push({
    what: from,
    reason: `troupe cannot use it: ${formatDiagnostic({ ...errors[0]!, file: path.join(root, from) }).split('\n')[0]}${more}`,
  });
  return null;
}

/** aqm's `claude_code_flags` becomes `cli_flags` (aqm's own migration; with both, cli_flags wins and the old key goes). */
function renameDeprecatedFlags(
  text: string,
  changed: (line: number, col: number, what: string) => void,
): string {
  const doc = parseDocument(text);
  const agents = doc.get('agents', true);
  const edits: Array<{ start: number; end: number; value: string; what: string }> = [];
  for (const agent of isSeq(agents) ? agents.items : []) {
    if (!isMap(agent)) continue;
    const pair = agent.items.find((p) => isScalar(p.key) && p.key.value === 'claude_code_flags');
    if (!pair || !isScalar(pair.key) || !pair.key.range) continue;
    if (agent.has('cli_flags')) {
      // the whole `claude_code_flags: …` entry goes: from its key to the end of its value's line
      const end =
        (pair.value as { range?: [number, number, number] } | null)?.range?.[2] ?? pair.key.range[1];
      const lineEnd = text.indexOf('\n', end - 1);
      const start = text.lastIndexOf('\n', pair.key.range[0]) + 1;
      edits.push({
        start,
        end: lineEnd === -1 ? text.length : lineEnd + 1,
        value: '',
        what: 'removed claude_code_flags (cli_flags is set, and wins in aqm too)',
      });
    } else {
      edits.push({
        start: pair.key.range[0],
        end: pair.key.range[1],
        value: 'cli_flags',
        what: "claude_code_flags → cli_flags (aqm's deprecated name)",
      });
    }
  }
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    const before = out.slice(0, edit.start);
    const line = before.split('\n').length;
    changed(line, edit.start - before.lastIndexOf('\n'), edit.what);
    out = before + edit.value + out.slice(edit.end);
  }
  return out;
}

/** Where a pipeline that ran under aqm will run differently under troupe. */
function differences(file: string, pipeline: Pipeline): string[] {
  const out: string[] = [];
  for (const agent of pipeline.agents) {
    const at = `${file}:${agent.source.line}:${agent.source.col}`;
    for (const h of agent.handoffs) {
      if (!isConditionKeyword(h.condition))
        out.push(
          `${at}: \`${agent.id}\` hands off on \`${h.condition}\`: aqm looked for the value as a word anywhere in the output; troupe compares the named field of the output`,
        );
    }
    if (agent.type === 'agent' && agent.gate && !agent.handoffs.some((h) => h.condition === 'on_reject'))
      out.push(
        `${at}: \`${agent.id}\`'s gate has no on_reject handoff: aqm completed the task on a rejection; troupe runs \`${agent.id}\` again with the reason${agent.gate.type === 'human' ? '' : ', up to max_retries'}`,
      );
  }
  return out;
}

/** `.aqm/config.yaml`'s settings that troupe can take; null when there is no usable file. */
function convertConfig(root: string, report: AqmConversion): Record<string, unknown> | null {
  const from = '.aqm/config.yaml';
  if (!existsSync(path.join(root, from))) return null;
  const doc = parseDocument(read(root, from));
  if (doc.errors.length > 0) {
    report.skipped.push({
      what: from,
      reason: `not valid YAML (aqm fell back to its defaults): ${doc.errors[0]!.message.split('\n')[0]}`,
    });
    return null;
  }
  const kept: Record<string, unknown> = {};
  for (const [key, value] of leaves(doc.toJS() ?? {})) {
    const setting = `${from}: \`${key}\``;
    if (!AQM_SETTINGS.includes(key)) {
      report.skipped.push({
        what: setting,
        reason: 'not an aqm setting (aqm ignored it), and troupe refuses keys it does not know',
      });
      continue;
    }
    const one = nest(key, value);
    try {
      parseProjectConfig(stringify(one), path.join(root, '.troupe', 'config.yaml'));
      Object.assign(kept, merge(kept, one));
    } catch (error) {
      report.skipped.push({
        what: setting,
        reason: `troupe cannot use its value: ${(error as Error).message}`,
      });
    }
  }
  return kept;
}

function leaves(value: unknown, prefix = ''): Array<[string, unknown]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [[prefix, value]];
  return Object.entries(value).flatMap(([k, v]) =>
    // a known setting whose value is a mapping is still one setting (its value is wrong)
    AQM_SETTINGS.includes(prefix ? `${prefix}.${k}` : k)
      ? [[prefix ? `${prefix}.${k}` : k, v] as [string, unknown]]
      : leaves(v, prefix ? `${prefix}.${k}` : k),
  );
}

function nest(key: string, value: unknown): Record<string, unknown> {
  return key.split('.').reduceRight<unknown>((inner, part) => ({ [part]: inner }), value) as Record<
    string,
    unknown
  >;
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const existing = out[k];
    out[k] =
      existing && typeof existing === 'object' && v && typeof v === 'object'
        ? merge(existing as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

function read(root: string, file: string): string {
  return readFileSync(path.join(root, file), 'utf8');
}
