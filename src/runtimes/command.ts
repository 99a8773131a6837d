import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Runtime, RuntimeError, type RuntimeEvent } from '../core/runtime.js';
import { type CliParser, type ResultEvent, runCli, stderrTail } from './cli-run.js';
import type { CliExit } from './process.js';

/**
 * An agent whose work is a command (`runtime: command`, `command: [argv…]`): a formatter, a
 * test run, a script. No shell: the argv runs as written, in the task's directory, with the
 * stage's prompt in TROUPE_PROMPT_FILE (and TROUPE_PROMPT when short). Its stdout is the output;
 * a non-zero exit fails the stage with the tail of its stderr.
 */
export function commandRuntime(options: { env?: Record<string, string | undefined> } = {}): Runtime {
  return {
    name: 'command',
    async *run(request) {
      const argv = request.runtimeOptions?.command ?? [];
      if (argv.length === 0 || !argv[0]) {
        throw new RuntimeError(
          'crashed',
          `agent '${request.agentId}' has runtime command but no \`command\``,
          {
            hint: 'add `command: [program, arg…]` to the agent',
          },
        );
      }
      const dir = await mkdtemp(path.join(os.tmpdir(), 'troupe-command-'));
      const promptFile = path.join(dir, 'prompt.txt');
      await writeFile(promptFile, request.prompt, { mode: 0o600 });
      yield* runCli({
        runtime: 'command',
        bin: argv[0],
        args: argv.slice(1),
        env: {
          ...options.env,
          TROUPE_AGENT: request.agentId,
          TROUPE_PROMPT_FILE: promptFile,
          ...(Buffer.byteLength(request.prompt) <= 64_000 ? { TROUPE_PROMPT: request.prompt } : {}),
        },
        request,
        parser: new CommandOutput(argv.join(' ')),
        install: 'check the `command:` of the agent',
        temp: [dir],
      });
    },
  };
}

class CommandOutput implements CliParser {
  private out = '';
  constructor(private readonly label: string) {}

  line(line: string): RuntimeEvent[] {
    const text = `${line}\n`;
    this.out += text;
    return [{ type: 'text', text }];
  }

  meta() {
    return {};
  }

  finish(exit: CliExit): ResultEvent | RuntimeError {
    if (exit.exitCode === 0) {
      return {
        type: 'result',
        text: this.out,
        usage: { input_tokens: 0, output_tokens: 0 },
        meta: { exit_code: 0 },
      };
    }
    const why = exit.signal ? `killed by ${exit.signal}` : `exited with ${exit.exitCode}`;
    const tail = stderrTail(exit.stderr, 20, 2000);
    return new RuntimeError(
      exit.exitCode === 127 ? 'missing_cli' : 'crashed',
      `\`${this.label}\` ${why}${tail ? `:\n${tail}` : ''}`,
      { meta: { ...(exit.exitCode !== null ? { exit_code: exit.exitCode } : {}) } },
    );
  }
}
