import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DecisionLog } from '../scheduler/decision-lines.js';

/**
 * `.troupe/decisions.jsonl`: the decision log for people, one JSON object a line — each choice
 * the scheduler made (a routed tier, a fallback) when it is made, and each routed stage's outcome
 * when its task ends. The event store stays the source of truth (`troupe decisions` reads it);
 * lines are appended whole, so several processes can share the file.
 */

export function decisionLogFile(root: string): string {
  return join(root, '.troupe', 'decisions.jsonl');
}

export function fileDecisionLog(root: string): DecisionLog {
  const file = decisionLogFile(root);
  return (line) => {
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
}
