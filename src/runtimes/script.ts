import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { messageOf, NotFoundError, ScriptError } from '../core/errors.js';
import { type Script, ScriptSchema } from '../core/script.js';

/**
 * The scripted runtime's script (`troupe run|test --script script.yaml`). A product feature:
 * people unit-test their pipelines offline against it. The contract is documented in
 * docs/scripted-runtime.md; keep both in step.
 */

export function loadScript(file: string): Script {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new NotFoundError(`script not found: ${file}`);
  }
  return parseScript(text, file);
}

export function parseScript(text: string, file: string): Script {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const first = doc.errors[0];
  if (first) {
    const pos = lineCounter.linePos(first.pos[0]);
    throw new ScriptError(`${file}:${pos.line}:${pos.col}: ${first.message.split('\n')[0]}`);
  }
  const parsed = ScriptSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const node = doc.getIn(issue.path as (string | number)[], true) as
      | { range?: [number, number] }
      | undefined;
    const pos = node?.range ? lineCounter.linePos(node.range[0]) : { line: 1, col: 1 };
    throw new ScriptError(
      `${file}:${pos.line}:${pos.col}: ${issue.path.join('.') || 'script'}: ${issue.message}`,
    );
  }
  for (const [agent, entries] of Object.entries(parsed.data.agents)) {
    for (const entry of entries) {
      if (typeof entry === 'object' && entry.when !== undefined) {
        try {
          new RegExp(entry.when);
        } catch (e) {
          throw new ScriptError(`${file}: agents.${agent}: invalid when regex: ${messageOf(e)}`);
        }
      }
    }
  }
  return parsed.data;
}
