/**
 * What a command handler reads and writes besides its arguments: the directory it runs in and its
 * two output streams. The binary passes the process's own; a handler's unit test passes
 * `capturedIo` (handlers/testing.ts) and reads back what the command printed.
 */
export interface CommandIo {
  cwd: string;
  out(text: string): void;
  err(text: string): void;
}

export function processIo(): CommandIo {
  return {
    cwd: process.cwd(),
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
  };
}

/** A command's data as JSON on its stdout, as every `--json` prints it. */
export function writeJson(io: CommandIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
