import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import { DiagnosticSink, toPipelineError } from '../pipeline/diagnostics.js';
import { checkSchema } from '../pipeline/schema-issues.js';
import { YamlSource } from '../pipeline/yaml-source.js';
import { PIPELINE_NAME } from './reference.js';

/**
 * `.troupe/pipelines.lock`: what `troupe pull` installed, each pipeline with its version, the
 * registry it came from and the sha256 of every file. YAML in a fixed order (names sorted, files
 * sorted), so a change shows as a small diff; commit it.
 */
export interface LockEntry {
  version: string;
  registry: string;
  hash: string;
  files: Record<string, string>;
}

export type Lock = Record<string, LockEntry>;

const HASH = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'a sha256:<64 hex digits> hash');
const LockSchema = z.strictObject({
  lockfile: z.literal(1),
  pipelines: z
    .record(
      // a locked name becomes a folder under .troupe/pipelines/: `../x` or `..` must not
      z
        .string()
        .regex(PIPELINE_NAME, 'a pipeline name: letters, digits, ., _ and -, not starting with a dot'),
      z.strictObject({
        version: z.string().min(1),
        registry: z.string().min(1),
        hash: HASH,
        files: z.record(z.string().regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'a file name'), HASH),
      }),
    )
    .nullish(),
});

const HEADER =
  '# Written by `troupe pull`: the pipelines installed in .troupe/pipelines/ and the sha256 of each file.\n' +
  '# `troupe pull` with no name installs exactly this. Commit it.\n';

export function lockFile(root: string): string {
  return path.join(root, '.troupe', 'pipelines.lock');
}

/** The lock, or undefined when there is none; a broken one is a located error. */
export function readLock(root: string): Lock | undefined {
  const file = lockFile(root);
  if (!existsSync(file)) return undefined;
  const sink = new DiagnosticSink();
  const source = YamlSource.parse(file, readFileSync(file, 'utf8'), sink);
  const raw = source && checkSchema(LockSchema, source.value() ?? {}, source, [], sink);
  if (!raw) throw toPipelineError(sink.errors());
  return raw.pipelines ?? {};
}

export function lockText(lock: Lock): string {
  const pipelines: Record<string, LockEntry> = {};
  for (const name of Object.keys(lock).sort()) {
    const { version, registry, hash, files } = lock[name]!;
    const sorted = Object.fromEntries(
      Object.keys(files)
        .sort()
        .map((f) => [f, files[f]!]),
    );
    pipelines[name] = { version, registry, hash, files: sorted };
  }
  return HEADER + stringify({ lockfile: 1, pipelines }, { lineWidth: 0 });
}

export function writeLock(root: string, lock: Lock): void {
  writeFileAtomic(lockFile(root), lockText(lock));
}

/** Written beside, then renamed over: a reader sees the old file or the new one, never half. */
export function writeFileAtomic(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
}
