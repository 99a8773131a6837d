import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { displayPath, formatDiagnostic } from '../../pipeline/diagnostics.js';
import { validateWorkflowFile } from '../../pipeline/symphony/validate.js';
import { looksLikeWorkflow } from '../../pipeline/symphony/workflow.js';
import type { CommandIo } from '../command-io.js';
import { Exit } from '../exit-codes.js';

/** The file `troupe validate` was given, when it is a Symphony WORKFLOW.md (docs/trackers.md). */
export function symphonyWorkflowTarget(target: string | undefined, cwd: string): string | null {
  if (target === undefined) return null;
  const file = path.resolve(cwd, target);
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return null;
  if (path.basename(file) === 'WORKFLOW.md') return file;
  if (!/\.md$/i.test(file)) return null;
  return looksLikeWorkflow(file, readFileSync(file, 'utf8')) ? file : null;
}

/** `troupe validate WORKFLOW.md`: its settings and prompt checked, each problem at file:line:col. */
export function validateSymphony(
  file: string,
  flags: { strict?: boolean; json?: boolean },
  io: CommandIo,
): number {
  const result = validateWorkflowFile(file);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  const warnings = result.diagnostics.filter((d) => d.severity === 'warning');
  const valid = errors.length === 0 && !(flags.strict && warnings.length > 0);
  const tracker = result.workflow?.settings.tracker.kind ?? 'none';
  if (flags.json) {
    const strip = ({ severity: _, ...rest }: (typeof errors)[number]) => rest;
    const info = result.ignored.map((i) => ({ ...i.at, message: `${i.key}: ${i.why}` }));
    io.out(
      `${JSON.stringify({ valid, file, format: 'symphony', errors: errors.map(strip), warnings: warnings.map(strip), info, summary: { tracker } }, null, 2)}\n`,
    );
  } else {
    const lines = [...errors, ...warnings].map(formatDiagnostic);
    for (const i of result.ignored)
      lines.push(`${displayPath(i.at.file)}:${i.at.line}:${i.at.col}: info: ${i.key}: ${i.why}`);
    lines.push(
      valid
        ? `✓ valid Symphony workflow: 1 agent (codex), tracker ${tracker}${result.ignored.length ? `, ${plural(result.ignored.length, 'setting')} ignored` : ''}`
        : `✗ ${plural(errors.length, 'error')}, ${plural(warnings.length, 'warning')}${errors.length === 0 ? ' (--strict)' : ''}`,
    );
    io.out(`${lines.join('\n')}\n`);
  }
  return valid ? Exit.ok : Exit.usage;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
