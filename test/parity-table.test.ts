import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { amqSpelling } from '../src/cli/amq-spelling.js';
import { bin, repoRoot } from './support/troupe.js';

// docs/parity.md cannot drift: every troupe command it names exists in the built CLI, every AMQ
// command runs through `troupe amq` onto that same command, and every command the seeds' command
// references list has a row.

interface Row {
  seed: string;
  seedCommand: string;
  troupe: string | undefined;
  status: string;
  line: number;
}

function rows(): Row[] {
  const text = readFileSync(join(repoRoot, 'docs', 'parity.md'), 'utf8');
  return text.split('\n').flatMap((line, i) => {
    const cells = line.split(' | ').map((c) => c.replace(/^\| ?| ?\|$/g, '').trim());
    if (cells[0] !== 'AMQ' && cells[0] !== 'aqm') return [];
    const code = (cell: string) => /^`([^`]+)`$/.exec(cell)?.[1];
    return [
      {
        seed: cells[0],
        seedCommand: code(cells[1]!) ?? cells[1]!,
        troupe: cells[2] === '—' ? undefined : (code(cells[2]!) ?? `not code: ${cells[2]}`),
        status: cells[3]!,
        line: i + 1,
      },
    ];
  });
}

/** The command words of a command line: after the program, up to the first flag, value or placeholder. */
function commandWords(command: string): string[] {
  const words: string[] = [];
  for (const w of command.split(/\s+/).slice(1)) {
    if (!/^[a-z][a-z0-9-]*$/.test(w)) break;
    words.push(w);
  }
  return words;
}

/** What `troupe <words> --help` prints as its command path ('' for troupe itself), or why not. */
/** What `troupe <words> --help` prints as its command path ('' for troupe itself), or why not. */
async function helpPath(words: string[]): Promise<string> {
  const r = await execa(process.execPath, [bin, ...words, '--help'], { reject: false });
  if (r.exitCode !== 0) return `exit ${r.exitCode}: ${String(r.stderr).trim()}`;
  const usage = /^Usage: troupe((?: [a-z][a-z0-9-]*)*)/.exec(String(r.stdout));
  return usage ? usage[1]!.trim() : `no usage line: ${String(r.stdout).slice(0, 80)}`;
}

/** Each distinct command's help path, four at a time (each is a node start). */
async function helpPaths(commands: string[][]): Promise<Map<string, string>> {
  const keys = [...new Set(commands.map((w) => w.join(' ')))];
  const out = new Map<string, string>();
  for (let i = 0; i < keys.length; i += 4) {
    const batch = keys.slice(i, i + 4);
    const paths = await Promise.all(batch.map((k) => helpPath(k ? k.split(' ') : [])));
    for (const [j, k] of batch.entries()) out.set(k, paths[j]!);
  }
  return out;
}

// The seeds' command references (AMQ's "Command Reference" table, aqm's command list).
const AMQ_REFERENCE = [
  'init',
  'send',
  'list',
  'read',
  'drain',
  'reply',
  'thread',
  'trace',
  'watch',
  'monitor',
  'receipts',
  'setup',
  'launch',
  'coop init',
  'coop exec',
  'session create',
  'session list',
  'session resume',
  'swarm list',
  'swarm join',
  'swarm tasks',
  'swarm bridge',
  'integration symphony init',
  'integration symphony emit',
  'integration kanban bridge',
  'presence set',
  'presence list',
  'route explain',
  'who',
  'doctor',
  'doctor --ops',
  'wake check',
  'wake repair',
  'wake recover-owner',
  'wake retire',
  'cleanup',
  'dlq',
  'upgrade',
  'env',
  'shell-setup',
];
const AQM_REFERENCE = [
  'init',
  'validate',
  'validate --strict',
  'agents',
  'run',
  'list',
  'status',
  'cancel',
  'fix',
  'restart',
  'approve',
  'reject',
  'human-input',
  'chunks list',
  'chunks done',
  'pipeline list',
  'pipeline create',
  'pipeline default',
  'search',
  'pull',
  'pipeline versions',
  'publish',
  'serve',
];

describe('docs/parity.md', () => {
  const table = rows();

  it('has a row for every command of the seeds’ command references, each with a known status', () => {
    for (const [seed, reference] of [
      ['AMQ', AMQ_REFERENCE],
      ['aqm', AQM_REFERENCE],
    ] as const) {
      const commands = table.filter((r) => r.seed === seed).map((r) => r.seedCommand);
      for (const c of reference)
        expect(
          commands.some(
            (s) => s === `${seed.toLowerCase()} ${c}` || s.startsWith(`${seed.toLowerCase()} ${c} `),
          ),
          `${seed} ${c}`,
        ).toBe(true);
    }
    for (const r of table) {
      expect(['works', 'differs', 'missing'], `line ${r.line}`).toContain(r.status);
      expect(r.troupe === undefined, `line ${r.line}: a missing row has no troupe command, others one`).toBe(
        r.status === 'missing',
      );
    }
  });

  it('every troupe command in it exists in the built CLI (--help exits 0 and names that command)', async () => {
    const named = table.filter((r) => r.troupe !== undefined);
    const paths = await helpPaths(named.map((r) => commandWords(r.troupe!)));
    const broken = named.flatMap((r) => {
      if (!r.troupe!.startsWith('troupe ')) return [`line ${r.line}: ${r.troupe}`];
      const words = commandWords(r.troupe!).join(' ');
      const path = paths.get(words);
      return path === words ? [] : [`line ${r.line}: ${r.troupe} → ${path}`];
    });
    expect(broken).toEqual([]);
  }, 120_000);

  it('every AMQ command that troupe has runs as AMQ spells it, through `troupe amq`, on that same command', () => {
    const broken = table
      .filter((r) => r.seed === 'AMQ' && r.troupe !== undefined)
      .flatMap((r) => {
        const seedWords = commandWords(r.seedCommand);
        const spelled = amqSpelling(seedWords.length ? seedWords : r.seedCommand.split(/\s+/).slice(1, 2));
        if (spelled.kind !== 'run') return [`line ${r.line}: ${r.seedCommand} → ${spelled.kind}`];
        const mapped = spelled.argv.filter((w) => /^[a-z][a-z0-9-]*$/.test(w));
        const words = commandWords(r.troupe!);
        return words.every((w, i) => mapped[i] === w)
          ? []
          : [`line ${r.line}: ${r.seedCommand} → ${mapped.join(' ')}`];
      });
    expect(broken).toEqual([]);
    // and through the binary itself: `troupe amq <seed words> --help` names the troupe command
    const send = spawnSync(process.execPath, [bin, 'amq', 'wake', 'check', '--help'], { encoding: 'utf8' });
    expect(send.status).toBe(0);
    expect(send.stdout).toMatch(/^Usage: troupe wake check /);
  });
});
