import { printable } from '../core/printable.js';
import type { PieceView, PlanView } from './plan-view.js';
import { formatCost, formatTokens } from './task-view.js';

const WIDTH = 80;
/** Piece ids longer than this start their facts on the next line. */
const ID_COLUMN = 14;
const MAX_FILES_SHOWN = 5;

/**
 * `troupe status`'s lines for a plan (none without one): a heading with the round and how many
 * pieces are where, the plan's warnings, then each piece, shallowest first, its facts wrapped to
 * 80 columns under its id: status, what it waits on, the stages that worked on it, the verdict,
 * the tier, what it used and its diff; its branch, files written outside its paths and why it
 * failed on lines of their own.
 */
export function planLines(plan: PlanView | null): string[] {
  if (!plan) return [];
  const out = [`  plan: round ${plan.round} by ${plan.planner}, ${pieceCounts(plan.pieces)}`];
  for (const warning of plan.warnings) out.push(`    ⚠ ${firstLine(warning)}`);
  const ordered = [...plan.pieces].sort((a, b) => a.level - b.level);
  const column = Math.min(ID_COLUMN, Math.max(...ordered.map((p) => p.id.length)));
  for (const piece of ordered) {
    const indent = ' '.repeat(4 + column + 2);
    const head = `    ${piece.id.padEnd(column)}  `;
    const facts = pieceFacts(piece, plan);
    out.push(
      ...(piece.id.length > column
        ? [`    ${piece.id}`, ...wrap(indent, facts, indent)]
        : wrap(head, facts, indent)),
    );
    if (piece.branch) out.push(`${indent}${piece.branch}`);
    if (piece.outside.length > 0) out.push(`${indent}⚠ wrote outside its paths: ${fileList(piece.outside)}`);
    if (piece.failure) out.push(`${indent}failed: ${firstLine(piece.failure.reason)}`);
  }
  return out;
}

function pieceCounts(pieces: readonly PieceView[]): string {
  const counts = new Map<string, number>();
  for (const p of pieces) counts.set(p.status, (counts.get(p.status) ?? 0) + 1);
  const each = [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
  return `${pieces.length} piece${pieces.length === 1 ? '' : 's'} (${each})`;
}

function pieceFacts(piece: PieceView, plan: PlanView): string[] {
  const facts: string[] = [piece.status];
  if (piece.depends_on.length > 0) facts.push(`after ${piece.depends_on.join(', ')}`);
  if (piece.stages.length > 0)
    facts.push(`${plan.pipeline ?? plan.worker ?? 'stages'} [${piece.stages.join(',')}]`);
  if (piece.verdict) {
    const reason = piece.verdict.decision === 'rejected' ? verdictReason(piece.verdict.reason) : '';
    facts.push(`${piece.verdict.decision} by ${plan.verifier ?? piece.verdict.by}${reason}`);
  }
  if (piece.tier) facts.push(`tier ${piece.tier.tier} (${piece.tier.model ?? piece.tier.runtime})`);
  if (piece.stages.length > 0) {
    const cost = formatCost(piece.usage);
    facts.push(`${formatTokens(piece.usage)}${cost ? ` ${cost}` : ''}`);
  }
  if (piece.diff) {
    const { files, insertions, deletions } = piece.diff;
    facts.push(
      files === 0 ? 'no changes' : `${files} file${files === 1 ? '' : 's'} +${insertions} -${deletions}`,
    );
  }
  return facts;
}

function verdictReason(reason: string): string {
  const line = firstLine(reason);
  if (!line) return '';
  return ` (${line.length > 40 ? `${line.slice(0, 39)}…` : line})`;
}

/** The first line of text from agents and planners, safe to print. */
function firstLine(text: string): string {
  return printable(text.split('\n', 1)[0] ?? '');
}

function fileList(files: readonly string[]): string {
  // file names are the agent's: nothing in them may drive the terminal
  const shown = files.slice(0, MAX_FILES_SHOWN).map(printable).join(', ');
  return files.length > MAX_FILES_SHOWN ? `${shown} and ${files.length - MAX_FILES_SHOWN} more` : shown;
}

/** `facts` joined with ` · ` after `first`, a new line (after `indent`) where one would pass 80 columns. */
function wrap(first: string, facts: readonly string[], indent: string): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const fact of facts) {
    const joined = empty ? `${line}${fact}` : `${line} · ${fact}`;
    if (!empty && joined.length > WIDTH) {
      lines.push(line);
      line = `${indent}${fact}`;
    } else line = joined;
    empty = false;
  }
  lines.push(line);
  return lines;
}
