import { readFileSync } from 'node:fs';
import { messageOf, UsageError } from '../../../core/errors.js';
import { printable } from '../../../core/printable.js';
import type { CommandIo } from '../../command-io.js';

/** Every flag any `troupe bus` verb takes (commander camel-cases them). */
export interface BusFlags {
  root?: string;
  json?: boolean;
  me?: string;
  strict?: boolean;
  ignoreSessionPin?: boolean;
  agents?: string;
  force?: boolean;
  to?: string;
  subject?: string;
  kind?: string;
  priority?: string;
  labels?: string;
  label?: string[];
  thread?: string;
  body?: string;
  refs?: string;
  context?: string;
  session?: string;
  project?: string;
  allowSelf?: boolean;
  allowEmpty?: boolean;
  waitFor?: string;
  waitTimeout?: string;
  id?: string;
  new?: boolean;
  cur?: boolean;
  from?: string;
  limit?: string;
  offset?: string;
  includeBody?: boolean;
  msgId?: string;
  consumer?: string;
  stage?: string;
  timeout?: string;
  pollInterval?: string;
  all?: boolean;
  olderThan?: string;
  dryRun?: boolean;
  yes?: boolean;
  status?: string;
  note?: string;
  poll?: boolean;
  peek?: boolean;
  ops?: boolean;
  fixMailboxes?: boolean;
  fixWakeLocks?: boolean;
  jsonSchema?: string;
  tmpOlderThan?: string;
  wakeQuarantineOlderThan?: string;
  launchJournal?: boolean;
  preview?: boolean;
  apply?: string;
  defaultSession?: string;
  launcherPreference?: string;
  shell?: string;
  export?: boolean;
  sessionName?: boolean;
  wake?: boolean;
  claudeAlias?: string;
  codexAlias?: string;
  geminiAlias?: string;
  fromRoot?: string;
  fromSession?: string;
}

/** As every `--json` prints it, without the bigints a receipt's file stats carry. */
export function printJson(io: CommandIo, value: unknown): void {
  io.out(`${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? undefined : v), 2)}\n`);
}

/** A warning often quotes what it is about (a file's name, a parser's message): printed as one clean line. */
export function warn(io: CommandIo, message: string): void {
  io.err(`troupe: warning: ${printable(message)}\n`);
}

export function count(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} expects a whole number, got '${text}'`);
  return n;
}

export function splitList(text: string | undefined): string[] {
  return (text ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `--body`: literal text, `@file`, or `-` / `@-` / empty for stdin; stdin when not given. */
export function readBody(body: string | undefined): string {
  if (body === undefined || body === '' || body === '-' || body === '@-') {
    if (process.stdin.isTTY) throw new UsageError('no --body given and stdin is a terminal');
    return readFileSync(0, 'utf8');
  }
  if (body.startsWith('@')) return readFileSync(body.slice(1), 'utf8');
  return body;
}

/** `--context`: a JSON object, or `@file.json`. */
export function readContext(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  const json = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new UsageError(`--context is not JSON: ${messageOf(error)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError('--context must be a JSON object');
  return value as Record<string, unknown>;
}
