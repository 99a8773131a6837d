import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../core/runtime.js';
import { commandRuntime } from './command.js';
import { baseRequest, collect, failureOf, fakeCli, runtimeContract } from './contract.js';

// the command runtime runs any argv; here, the fake claude in its text mode and a few shells
const COMMANDS: Record<string, string[]> = {
  success: [fakeCli('claude')],
  fails: ['sh', '-c', 'echo partial; echo "tests failed: 3" >&2; exit 2'],
  missing: ['/nonexistent/formatter'],
  hang: [fakeCli('claude')],
  argv: [
    process.execPath,
    '-e',
    'console.log(JSON.stringify({argv: process.argv.slice(1), stdin: ""}))',
    '--',
    'fixed-arg',
  ],
};

// the contract's requests carry no command: each scenario brings its argv
const make = (scenario: string, env: Record<string, string> = {}): Runtime => {
  const runtime = commandRuntime({
    env: { FAKE_CLI_SCENARIO: scenario === 'success' ? 'success-text' : scenario, ...env },
  });
  return {
    name: runtime.name,
    run: (request) => runtime.run({ ...request, runtimeOptions: { command: COMMANDS[scenario]! } }),
  };
};

runtimeContract('command', make, {
  success: { scenario: 'success', text: 'hi from mock' },
  failures: [
    { scenario: 'fails', kind: 'crashed' },
    { scenario: 'missing', kind: 'missing_cli' },
  ],
  hang: { scenario: 'hang', pids: true },
  rawLog: true,
});

describe('command runtime', () => {
  it('runs the argv without a shell and gives it the prompt in a file and the environment', async () => {
    const events = await collect(
      commandRuntime(),
      baseRequest({
        runtimeOptions: {
          command: [
            process.execPath,
            '-e',
            'const fs=require("fs");console.log(fs.readFileSync(process.env.TROUPE_PROMPT_FILE,"utf8")+"|"+process.env.TROUPE_PROMPT+"|"+process.argv[1])',
            '$HOME',
          ],
        },
        prompt: 'the input',
      }),
    );
    expect(events.at(-1)).toMatchObject({ type: 'result', text: 'the input|the input|$HOME\n' });
  });

  it('fails with the tail of stderr and keeps stdout as partial output', async () => {
    const error = await failureOf(
      commandRuntime(),
      baseRequest({ runtimeOptions: { command: COMMANDS.fails! } }),
    );
    expect(error.kind).toBe('crashed');
    expect(error.message).toContain('exited with 2');
    expect(error.message).toContain('tests failed: 3');
    expect(error.options.partialOutput).toBe('partial\n');
  });

  it('keeps the output in the raw log', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-command-'));
    const rawLogPath = path.join(dir, '1.jsonl');
    await collect(
      commandRuntime(),
      baseRequest({ runtimeOptions: { command: ['echo', 'hello'] }, rawLogPath }),
    );
    expect(readFileSync(rawLogPath, 'utf8')).toContain('hello\n');
  });
});
