import { TooLargeError } from '../core/errors.js';
import { jsonBytesOver } from './json-size.js';

/**
 * The most a task's input (its description) may hold, in UTF-8 bytes: 256 KiB, about 64k
 * tokens, already more than most models take in one prompt. The input is stored with the task
 * and goes into every prompt that says `{{ input }}`, so a bigger one only costs memory and disk.
 */
export const MAX_TASK_INPUT_BYTES = 256 * 1024;

export function checkTaskInput(text: string, what = 'the task input'): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_TASK_INPUT_BYTES) return;
  throw new TooLargeError(`${what} is ${bytes} bytes, over the ${sizeText(MAX_TASK_INPUT_BYTES)} limit`, {
    hint: 'put the material in a file in the project and say in the input where it is',
  });
}

/** `256 KiB`, `1 MiB`, `1.5 MiB`: a size as a limit's message says it. */
export function sizeText(bytes: number): string {
  const [unit, size] = bytes >= 1024 * 1024 ? ['MiB', bytes / (1024 * 1024)] : ['KiB', bytes / 1024];
  return `${Number(size.toFixed(1))} ${unit}`;
}

/**
 * The most a task's definition (its pipeline, or its script) may take as JSON: 16 MiB. Every task
 * stores a copy in its `task_created` event and every process that folds the task reads it back;
 * YAML aliases are already capped where the files are read, so this catches what slips past.
 */
export const MAX_TASK_DEFINITION_BYTES = 16 * 1024 * 1024;

export function checkTaskDefinition(definition: unknown, what: string): void {
  if (!jsonBytesOver(definition, MAX_TASK_DEFINITION_BYTES)) return;
  throw new TooLargeError(`${what} is over the ${sizeText(MAX_TASK_DEFINITION_BYTES)} a task may store`, {
    hint: 'split the pipeline, or shorten what repeats in it (each `*alias` of YAML repeats its whole anchor)',
  });
}
