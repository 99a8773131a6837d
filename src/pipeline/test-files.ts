import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Diagnostic } from './diagnostics.js';
import { type ValidateOptions, type ValidationResult, validatePipelineFile } from './validate.js';

/** Helpers for the pipeline tests: temporary project trees and compact diagnostics. */

const made: string[] = [];

/** A temporary directory holding `files` (paths relative to it). */
export function tempDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'troupe-pipeline-'));
  made.push(dir);
  writeFiles(dir, files);
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
}

/** For afterEach. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** `file:line:col severity: message`, with the file as a base name. */
export function brief(d: Diagnostic): string {
  return `${path.basename(d.file)}:${d.line}:${d.col} ${d.severity}: ${d.message}`;
}

/**
 * Validates `yaml` written as agents.yaml in a fresh directory (beside `files`), with an empty
 * PATH so that no runtime CLI is found unless a test says otherwise.
 */
export function validateYaml(
  yaml: string,
  options: ValidateOptions & { files?: Record<string, string> } = {},
): ValidationResult & { dir: string; lines: string[] } {
  const { files = {}, ...rest } = options;
  const dir = tempDir({ ...files, 'agents.yaml': yaml });
  const result = validatePipelineFile(path.join(dir, 'agents.yaml'), { pathEnv: '', ...rest });
  return { ...result, dir, lines: result.diagnostics.map(brief) };
}
