import { isMap, isScalar, parseDocument, Scalar } from 'yaml';
import { StateError } from '../../core/errors.js';
import { SYMPHONY_EVENTS } from './symphony.js';

/**
 * `integration symphony init` (AMQ's): WORKFLOW.md's hooks each get a managed fragment that runs
 * `… integration symphony emit --event <hook>`, between AMQ's own markers, so `amq` and troupe
 * recognise each other's fragment and a second run changes nothing. Unlike AMQ, which rewrites
 * the whole frontmatter through its YAML library, the frontmatter is edited in place: comments,
 * key order and formatting outside the hooks stay as they were.
 */

export const MANAGED_BEGIN = '# BEGIN AMQ MANAGED';
export const MANAGED_END = '# END AMQ MANAGED';

export interface SymphonyInitResult {
  workflow_path: string;
  /** The fragments were added where there were none. */
  created: boolean;
  /** Existing fragments were rewritten (`--force`). */
  updated: boolean;
  already_ok: boolean;
  check_only: boolean;
  /** Every hook already holds a managed fragment. */
  hooks_found: boolean;
}

const hasFragment = (hook: string) => hook.includes(MANAGED_BEGIN) && hook.includes(MANAGED_END);

/** The hook's script with the fragment put in: replacing the managed block, or after what is there. */
export function injectFragment(existing: string, fragment: string): string {
  if (existing === '') return `${fragment}\n`;
  if (hasFragment(existing)) {
    const begin = existing.indexOf(MANAGED_BEGIN);
    const end = existing.indexOf(MANAGED_END) + MANAGED_END.length;
    return existing.slice(0, begin) + fragment + existing.slice(end);
  }
  return `${existing.replace(/\n+$/, '')}\n${fragment}\n`;
}

/**
 * Patches a WORKFLOW.md's text. `hookLine(event)` is the command a hook runs. Returns the new
 * text (undefined when nothing is to be written) and what was found and done.
 */
export function patchWorkflow(
  text: string,
  path: string,
  hookLine: (event: string) => string,
  options: { check?: boolean; force?: boolean } = {},
): { text?: string; result: SymphonyInitResult } {
  const split = splitFrontmatter(text, path);
  const doc = parseDocument(split.front);
  if (doc.errors.length > 0)
    throw new StateError(`${path}: the frontmatter is not valid YAML: ${doc.errors[0]!.message}`);
  if (doc.contents !== null && !isMap(doc.contents))
    throw new StateError(`${path}: the frontmatter must be a YAML map`);
  const hook = (event: string): string => {
    const value = doc.getIn(['hooks', event]);
    return typeof value === 'string' ? value : '';
  };
  const found = SYMPHONY_EVENTS.every((e) => hasFragment(hook(e)));
  const result: SymphonyInitResult = {
    workflow_path: path,
    created: false,
    updated: false,
    already_ok: false,
    check_only: options.check === true,
    hooks_found: found,
  };
  if (options.check) return { result };
  if (found && !options.force) return { result: { ...result, already_ok: true } };
  for (const event of SYMPHONY_EVENTS) {
    const script = injectFragment(hook(event), `${MANAGED_BEGIN}\n${hookLine(event)}\n${MANAGED_END}`);
    const node = new Scalar(script);
    node.type = 'BLOCK_LITERAL';
    const current = doc.getIn(['hooks', event], true);
    if (isScalar(current)) node.comment = current.comment ?? null;
    doc.setIn(['hooks', event], node);
  }
  const front = doc.toString();
  return {
    text: `---\n${front}---\n${split.body}`,
    result: { ...result, ...(found ? { updated: true } : { created: true }) },
  };
}

/** `---\n<yaml>\n---\n<body>`; a file without frontmatter gets one, its text kept as the body. */
function splitFrontmatter(text: string, path: string): { front: string; body: string } {
  const normalized = text.replace(/\r\n/g, '\n');
  if (!normalized.startsWith('---\n')) return { front: '', body: normalized.length ? `\n${normalized}` : '' };
  const rest = normalized.slice(4);
  if (rest.startsWith('---\n')) return { front: '', body: rest.slice(4) };
  const end = rest.indexOf('\n---\n');
  if (end >= 0) return { front: rest.slice(0, end + 1), body: rest.slice(end + 5) };
  if (rest.endsWith('\n---')) return { front: rest.slice(0, -3), body: '' };
  throw new StateError(`${path}: the frontmatter has no closing ---`);
}
