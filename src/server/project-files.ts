import { containedPath } from '../core/contained-path.js';
import { NotFoundError, ScriptError } from '../core/errors.js';
import type { Script } from '../core/script.js';
import { loadScript, type ScriptTarget } from '../runtimes/script.js';
import { ApiError } from './errors.js';

/**
 * Files named in a request: only inside the project (symlinks followed), and what is wrong with
 * one is said without its contents. The same refusal for every path outside, whether or not
 * something is there, so the API cannot be used to learn what exists on the machine.
 */
export function projectFile(root: string, given: string, what: string): string {
  const found = containedPath(root, given);
  if (found.kind === 'outside') {
    throw new ApiError(400, 'bad_request', `${what} must be a file inside the project: ${given}`, {
      hint: 'give a path relative to the project directory',
    });
  }
  if (found.kind === 'missing') throw new NotFoundError(`${what} not found: ${given}`);
  return found.path;
}

/** A scripted-runtime script file of the project, for `POST /api/run` and `/api/fix`. */
export function loadProjectScript(root: string, given: string, target?: ScriptTarget): Script {
  const file = projectFile(root, given, 'script');
  try {
    return loadScript(file, target);
  } catch (error) {
    // the CLI's message quotes the file (unknown keys, a bad regex); the API's says only where to look
    if (error instanceof ScriptError) {
      throw new ScriptError(`script ${given} is not a valid script`, {
        hint: `\`troupe run --script ${given} …\` in the project shows what is wrong with it`,
      });
    }
    if (error instanceof NotFoundError) throw new NotFoundError(`script not found: ${given}`);
    throw error;
  }
}
