import { braceSpans, parseObject } from './conditions.js';

/** The LLM gate's request and the reading of its answer, as aqm's core/gate.py. */

export interface GateDecision {
  decision: 'approved' | 'rejected';
  reason: string;
}

export const DEFAULT_GATE_SYSTEM_PROMPT = `You are a quality gate evaluator. Evaluate the agent output below.

You must respond only in the following JSON format:
{"decision": "approved" or "rejected", "reason": "basis for the decision"}
`;

/** The gate's rendered prompt (when there is one) and a blank line, then the output judged. */
export function gateUserMessage(renderedPrompt: string, output: string): string {
  const message = `Agent output:\n${output}`;
  return renderedPrompt ? `${renderedPrompt}\n\n${message}` : message;
}

/**
 * The first balanced `{…}` if it is JSON with a decision; else the words in the text ("not
 * approve" before "approve(d)" before "reject(ed)"); else rejected as undecidable.
 */
export function parseGateDecision(text: string): GateDecision {
  const first = braceSpans(text).sort((a, b) => a.start - b.start)[0];
  const json = first ? parseObject(text.slice(first.start, first.end)) : null;
  const decision = String(json?.decision ?? '').toLowerCase();
  if (decision === 'approved' || decision === 'rejected')
    return { decision, reason: reasonText(json?.reason) };
  const lower = text.toLowerCase();
  const reason = text.trim();
  if (/\bnot\s+approve/.test(lower)) return { decision: 'rejected', reason };
  if (/\bapproved?\b/.test(lower)) return { decision: 'approved', reason };
  if (/\brejected?\b/.test(lower)) return { decision: 'rejected', reason };
  return { decision: 'rejected', reason: `Unable to determine: ${[...text].slice(0, 200).join('')}` };
}

function reasonText(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  return reason === undefined || reason === null ? '' : JSON.stringify(reason);
}
