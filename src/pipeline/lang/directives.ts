import type { McpDirective } from '../../core/mcp-call.js';
import { parseTaskSize, type TaskSize } from '../../core/spec.js';

/**
 * Directives agents write into their output (aqm §4): where to hand off, questions for a human,
 * chunk changes, votes and the next speaker. Keywords are case-insensitive, as in aqm; ids are
 * matched exactly. Directives stay in the output.
 */

export interface ChunkDirectives {
  add: string[];
  done: string[];
  remove: string[];
}

/**
 * `HANDOFF: a, b` lines: the known ids in order, each once. aqm matches anywhere, so
 * "NO HANDOFF: qa" handed off to qa; troupe only reads the directive at the start of a line
 * (after spaces or markdown bold).
 */
export function parseHandoffDirective(output: string, knownIds: readonly string[]): string[] {
  const ids = [...output.matchAll(lineDirective('HANDOFF'))].flatMap((m) => (m[1] ?? '').split(','));
  return unique(ids.map(bareId).filter((id) => knownIds.includes(id)));
}

/** `NEXT: <id>` in a moderated session: the first participant named, or null. */
export function parseNextSpeaker(output: string, participants: readonly string[]): string | null {
  for (const m of output.matchAll(lineDirective('NEXT'))) {
    const id = bareId(m[1] ?? '');
    if (participants.includes(id)) return id;
  }
  return null;
}

/** `HUMAN_INPUT: <question>`: one question per directive, anywhere in a line (as aqm). */
export function parseHumanInputQuestions(output: string): string[] {
  return [...output.matchAll(/HUMAN_INPUT:[ \t]*([^\n]+)/gi)].map((m) => (m[1] ?? '').trim()).filter(Boolean);
}

/** CHUNK_ADD (the rest of the line), CHUNK_DONE and CHUNK_REMOVE (one id each), as aqm. */
export function parseChunkDirectives(output: string): ChunkDirectives {
  const captures = (re: RegExp) =>
    [...output.matchAll(re)].map((m) => (m[1] ?? '').trim()).filter((value) => value !== '');
  return {
    add: captures(/CHUNK_ADD:\s*(.+)/gi),
    done: captures(/CHUNK_DONE:\s*(\S+)/gi),
    remove: captures(/CHUNK_REMOVE:\s*(\S+)/gi),
  };
}

/** `SIZE: S|M|L|XL` at the start of a line: the last valid one wins (troupe; null when none). */
export function parseSizeDirective(output: string): TaskSize | null {
  let size: TaskSize | null = null;
  for (const m of output.matchAll(lineDirective('SIZE'))) size = parseTaskSize(bareId(m[1] ?? '')) ?? size;
  return size;
}

/** aqm's vote: the keyword anywhere in the output, ignoring case ("vote: agree" counts). */
export function hasVote(output: string, keyword: string): boolean {
  return output.toUpperCase().includes(keyword.toUpperCase());
}

/** `KEYWORD: rest` at the start of a line, allowing indentation and `**KEYWORD:**` / `**KEYWORD**:`. */
function lineDirective(keyword: string): RegExp {
  return new RegExp(`^[ \\t]*(?:\\*\\*)?${keyword}(?:\\*\\*)?:(?:\\*\\*)?[ \\t]*(.*)$`, 'gim');
}

/** An id as written, without surrounding spaces, markdown emphasis or backticks. */
function bareId(text: string): string {
  return text.trim().replace(/^[*`]+|[*`]+$/g, '');
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * `SEND: <to>: <subject>` — a message to another agent (or `user`); the body is the lines that
 * follow, up to a blank line or the next directive line.
 */
export function parseSendDirectives(output: string): Array<{ to: string; subject: string; body: string }> {
  const lines = output.split('\n');
  const messages: Array<{ to: string; subject: string; body: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const head = /^\s*(?:\*\*)?SEND:(?:\*\*)?\s*([A-Za-z0-9_-]+)\s*:\s*(.*)$/i.exec(lines[i] ?? '');
    if (!head) continue;
    const body: string[] = [];
    while (
      i + 1 < lines.length &&
      (lines[i + 1] ?? '').trim() !== '' &&
      !/^\s*[A-Z_]+:/.test(lines[i + 1] ?? '')
    ) {
      body.push(lines[++i] ?? '');
    }
    messages.push({ to: head[1]!, subject: (head[2] ?? '').trim(), body: body.join('\n') });
  }
  return messages;
}

/**
 * The text directives that troupe's MCP tool calls stand for (core/mcp-call.ts), one per line,
 * so the executor reads a tool call exactly as it reads the directive: the parsers above see
 * these lines before the agent's own text. Only the last vote counts, and a vote against writes
 * nothing (the keyword is the vote). Text from a tool's argument (a chunk, a question) is made
 * inert (`inertText`), so each call stands for its own directive and no other: `add_chunk("x
 * CHUNK_REMOVE: C-001")` adds a chunk and removes none. '' when there are none.
 */
export function directiveText(
  directives: readonly McpDirective[],
  voteKeyword: string | null = null,
): string {
  const lastVote = directives.findLast((d) => d.kind === 'vote');
  const argument = (text: string) => inertText(text.replace(/\s+/g, ' ').trim(), voteKeyword);
  return directives
    .filter((d) => d.kind !== 'vote' || d === lastVote)
    .map((d) => directiveLine(d, argument))
    .filter((line) => line !== null)
    .map((line) => `${line}\n`)
    .join('');
}

function directiveLine(d: McpDirective, argument: (text: string) => string): string | null {
  switch (d.kind) {
    case 'handoff':
      return `HANDOFF: ${d.to.join(', ')}`;
    case 'chunk_add':
      return `CHUNK_ADD: ${argument(d.description)}`;
    case 'chunk_done':
      return `CHUNK_DONE: ${d.id}`;
    case 'ask_human':
      return `HUMAN_INPUT: ${argument(d.question)}`;
    case 'vote':
      return d.agree ? d.keyword : null;
  }
}

/** Every keyword a parser above reads when a colon follows it (after `**` or not). */
const DIRECTIVE_KEYWORD =
  /(?:HANDOFF|NEXT|SIZE|SEND|HUMAN_INPUT|CHUNK_ADD|CHUNK_DONE|CHUNK_REMOVE)(?=(?:\*\*)?:)/gi;

/** U+2060, invisible and joining: a keyword with it after its first letter is no longer the keyword. */
const WORD_JOINER = '\u2060';

const broken = (keyword: string) => `${keyword.slice(0, 1)}${WORD_JOINER}${keyword.slice(1)}`;

/**
 * Text no directive parser reads anything in: each directive keyword followed by a colon, and
 * the session's vote keyword (read anywhere, ignoring case), gets a word joiner after its first
 * letter. It reads the same to a person.
 */
export function inertText(text: string, voteKeyword: string | null = null): string {
  let inert = text.replace(DIRECTIVE_KEYWORD, broken);
  if (!voteKeyword) return inert;
  const vote = new RegExp(voteKeyword.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi');
  // occurrences may overlap ("AA" in "AAA"): again until none is left (each pass breaks one at least)
  for (let pass = 0; pass <= text.length && vote.test(inert); pass++) {
    vote.lastIndex = 0;
    inert = inert.replace(vote, broken);
  }
  return inert;
}
