import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { action } from '../action.js';

interface InitOptions {
  name: string;
  runtime: string;
  force?: boolean;
  yes?: boolean;
}

const RUNTIMES = ['claude', 'gemini', 'codex', 'openai', 'scripted'];

export function registerInit(program: Command): void {
  program
    .command('init')
    .description(
      'set up .troupe/ here with a starter pipeline (optional: every command creates .troupe/ on first use)',
    )
    .option('-n, --name <pipeline>', 'pipeline name', 'default')
    .option('-r, --runtime <runtime>', `runtime of the starter agents (${RUNTIMES.join(', ')})`, 'claude')
    .option('--force', 'overwrite an existing pipeline of that name')
    .option('-y, --yes', 'do not ask anything (the default when not on a terminal)')
    .action(
      action(async (options: InitOptions) => {
        const answers = process.stdin.isTTY && !options.yes ? await wizard(options) : options;
        if (!RUNTIMES.includes(answers.runtime)) {
          throw new UsageError(`unknown runtime '${answers.runtime}'`, {
            hint: `one of ${RUNTIMES.join(', ')}`,
          });
        }
        if (!/^[A-Za-z0-9_-]+$/.test(answers.name))
          throw new UsageError(`pipeline names are letters, digits, - and _`);
        const root = process.cwd();
        const dir = join(root, '.troupe', 'pipelines');
        const file = join(dir, `${answers.name}.yaml`);
        if (existsSync(file) && !options.force) {
          throw new UsageError(`${file} already exists`, { hint: 'pass --force to overwrite it' });
        }
        mkdirSync(dir, { recursive: true });
        writeFileSync(file, starterPipeline(answers.runtime));
        const ignore = join(root, '.troupe', '.gitignore');
        const writesIgnore = !existsSync(ignore);
        if (writesIgnore) writeFileSync(ignore, STATE_GITIGNORE);
        const { saveDefaultPipeline } = await import('../../pipeline/config.js');
        saveDefaultPipeline(root, answers.name);
        process.stdout.write(
          `created .troupe/pipelines/${answers.name}.yaml (default pipeline)\n${writesIgnore ? "created .troupe/.gitignore (keeps troupe's state out of git)\n" : ''}next: troupe validate && troupe run "your task"\n`,
        );
        return 0;
      }),
    );
}

async function wizard(options: InitOptions): Promise<InitOptions> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const name = (await rl.question(`pipeline name (${options.name}): `)).trim() || options.name;
    const runtime =
      (await rl.question(`runtime for the agents [${RUNTIMES.join('/')}] (${options.runtime}): `)).trim() ||
      options.runtime;
    return { ...options, name, runtime };
  } finally {
    rl.close();
  }
}

/**
 * troupe's state stays out of commits however the project is committed (inside a worktree task
 * troupe also excludes it in .git/info/exclude, docs/workspaces.md); what people write stays in.
 */
const STATE_GITIGNORE = `# troupe's state: task store, task files, worktrees, scratch checkouts (written by troupe init)
/*
!/.gitignore
!/pipelines/
!/config.yaml
!/params.yaml
!/pipelines.lock
`;

function starterPipeline(runtime: string): string {
  return `# A starter team: a planner hands a plan to an executor. Edit freely; \`troupe validate\` checks it.
apiVersion: troupe/v1
agents:
  - id: planner
    runtime: ${runtime}
    system_prompt: |
      You are a planner. Break this request into clear, ordered steps.
      Request: {{ input }}
    handoffs:
      - to: executor

  - id: executor
    runtime: ${runtime}
    context_strategy: last_only
    system_prompt: |
      You are an executor. Carry out this plan step by step and report what you did.
      Plan: {{ input }}
`;
}
