import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerCommands } from '../src/cli/commands/index.js';
import { repoRoot } from './support/troupe.js';

/**
 * docs/aqm-compatibility.md, "aqm's commands, one by one", cannot drift: every command of aqm's
 * README (its "CLI Reference", as written there) has a row, and each row's troupe command is one
 * troupe registers, with those options. What each command does is tested where it is built.
 */

/** aqm's README, "CLI Reference", every command line as written there. */
const AQM_README_COMMANDS = [
  'aqm init',
  'aqm validate',
  'aqm validate --strict',
  'aqm agents',
  'aqm run "Add JWT auth"',
  'aqm run "Fix bug" --agent bug_fixer',
  'aqm run "Build API" --pipeline backend',
  'aqm run "Task" --param model=opus',
  'aqm list',
  'aqm status T-ABC123',
  'aqm cancel T-ABC123',
  'aqm fix T-ABC123 "Fix the color"',
  'aqm restart T-ABC123',
  'aqm restart T-ABC123 --from-stage 2',
  'aqm approve T-ABC123',
  'aqm reject T-ABC123 -r "Needs tests"',
  'aqm human-input T-ABC123 "response"',
  'aqm chunks list T-ABC123',
  'aqm chunks done T-ABC123 C-001',
  'aqm pipeline list',
  'aqm pipeline create review --ai',
  'aqm pipeline default review',
  'aqm search "code review"',
  'aqm pull code-review-pipeline',
  'aqm pull code-review@1.0.0',
  'aqm pipeline versions code-review',
  'aqm publish --name my-pipeline',
  'aqm publish --version 2.0.0',
  'aqm serve',
];

interface Row {
  aqm: string;
  troupe: string;
  verdict: string;
  why: string;
}

function parityRows(): Row[] {
  const text = readFileSync(join(repoRoot, 'docs', 'aqm-compatibility.md'), 'utf8');
  const section = text.split("## aqm's commands, one by one")[1]?.split('\n## ')[0];
  if (!section) throw new Error('docs/aqm-compatibility.md has no section "aqm\'s commands, one by one"');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `aqm'))
    .map((line) => {
      const [aqm, troupe, verdict, why] = line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim());
      const code = (cell: string | undefined) => /^`([^`]+)`/.exec(cell ?? '')?.[1] ?? '';
      return { aqm: code(aqm), troupe: code(troupe), verdict: verdict ?? '', why: why ?? '' };
    });
}

/** Words as a shell splits them (double quotes only, as the README writes them). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

/** The registered command a line names, and the options it uses that the command does not have. */
function resolve(program: Command, line: string): { path: string[]; unknown: string[] } {
  const [, ...rest] = words(line);
  let command = program;
  const path: string[] = [];
  let i = 0;
  for (; i < rest.length; i++) {
    const sub = command.commands.find((c) => c.name() === rest[i] || c.aliases().includes(rest[i]!));
    if (!sub) break;
    command = sub;
    path.push(sub.name());
  }
  const known = new Set(command.options.flatMap((o) => [o.long, o.short].filter(Boolean) as string[]));
  const unknown = rest.slice(i).filter((w) => w.startsWith('-') && !known.has(w.split('=')[0]!));
  return { path, unknown };
}

describe("aqm's commands in troupe (docs/aqm-compatibility.md)", () => {
  const rows = parityRows();
  const program = new Command();
  registerCommands(program);

  it("has one row for each command of aqm's README, and nothing else", () => {
    expect(rows.map((r) => r.aqm)).toEqual(AQM_README_COMMANDS);
  });

  it.each(rows.map((r) => [r.aqm, r] as const))('%s: troupe has the command and its options', (_aqm, row) => {
    expect(row.troupe).toMatch(/^troupe /);
    const { path, unknown } = resolve(program, row.troupe);
    const aqmPath = resolve(program, row.aqm.replace(/^aqm /, 'troupe ')).path;
    expect(path.length, `${row.troupe}: no such troupe command`).toBeGreaterThan(0);
    expect(unknown, `${row.troupe}: options troupe does not have`).toEqual([]);
    expect(['works', 'works (better)', 'differs']).toContain(row.verdict);
    if (row.verdict === 'differs') expect(row.why, `${row.aqm}: say why it differs`).not.toBe('');
    // where troupe spells it as aqm does, the row says so; else it must say why it differs
    if (row.troupe !== row.aqm.replace(/^aqm /, 'troupe ') || aqmPath.join(' ') !== path.join(' '))
      expect(row.why, `${row.aqm}: say how troupe's spelling differs`).not.toBe('');
  });
});
