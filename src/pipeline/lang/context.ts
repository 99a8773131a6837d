import type { ContextStrategy } from '../../core/pipeline-vocabulary.js';

/**
 * The shared context files in aqm's format (context.md, agent_<id>.md) and the five context
 * strategies that decide what of them an agent sees. Times come in as strings.
 */

export interface ContextStage {
  n: number;
  agent: string;
  taskName: string;
  status: string;
  input: string;
  output: string;
  /** ISO 8601, seconds, UTC. */
  at: string;
  rejectReason?: string;
}

export interface HumanExchange {
  agent: string;
  questions: string[];
  answer: string;
  at: string;
}

/** Every section of context.md and agent_<id>.md ends with this. */
const SECTION_END = '\n\n---\n\n';

export function formatStageSection(s: ContextStage): string {
  const reason = s.rejectReason ? `**reject_reason**: ${s.rejectReason}\n` : '';
  return (
    `## [stage ${s.n}] ${s.agent} — ${s.taskName}\n` +
    `**Status**: ${s.status} | ${s.at}\n${reason}` +
    `\n### Input\n${s.input}\n\n### Output\n${s.output}${SECTION_END}`
  );
}

export function formatHumanSection(h: HumanExchange): string {
  const questions = h.questions.map((q) => `- ${q}`).join('\n');
  return (
    `## [human input] for ${h.agent}\n**Time**: ${h.at}\n\n` +
    `### Question\n${questions}\n\n### User Response\n${h.answer}${SECTION_END}`
  );
}

/** A section of agent_<id>.md: the agent's report, not its narration. */
export function formatAgentNotesSection(n: number, at: string, output: string): string {
  return `## [stage ${n}]\n**Time**: ${at}\n\n${extractReport(output)}${SECTION_END}`;
}

/** The bodies of the fenced code blocks, joined by blank lines; the whole output if none has any. */
export function extractReport(output: string): string {
  const bodies = [...output.matchAll(/^ {0,3}```[^\n]*\n([\s\S]*?)^ {0,3}```/gm)]
    .map((m) => (m[1] ?? '').trim())
    .filter((body) => body !== '');
  return bodies.length > 0 ? bodies.join('\n\n') : output;
}

/**
 * What an agent reading the shared context is told: context.md, led by the task's input until a
 * stage has recorded it (in the first stage, context.md holds at most a human exchange).
 */
export function contextWithInput(contextMd: string, input: string): string {
  if (/^## \[stage \d+\]/m.test(contextMd)) return contextMd;
  const rest = contextMd.trim() || '(no stage has finished yet: this is the first)';
  return `## [task input]\n${input}${SECTION_END}${rest}`;
}

/** Claude CLI's tool-progress lines (▶ ⎿ ✓ ✗) dropped, blank-line runs collapsed, trimmed. */
export function stripCliArtifacts(output: string): string {
  const kept = output.split('\n').filter((line) => !/^(▶|⎿|✓|✗) /.test(line.trimStart()));
  return kept
    .join('\n')
    .replace(/\n(?:[ \t]*\n)+/g, '\n\n')
    .trim();
}

/** What `{{ context }}` holds for an agent, given its strategy and context_window. */
export function readForStrategy(
  strategy: ContextStrategy,
  window: number,
  contextMd: string,
  ownNotes: string,
  agentId: string,
): string {
  switch (strategy) {
    case 'none':
      return '';
    case 'last_only':
      // aqm splits on every `---` and returns the last fragment; troupe returns the last section.
      return splitSections(contextMd).at(-1) ?? '';
    case 'own':
      return ownNotes;
    case 'shared':
      return readSmart(contextMd, window);
    case 'both': {
      const shared = readSmart(contextMd, window);
      return ownNotes ? `${shared}\n\n[notes:${agentId}]\n${ownNotes}` : shared;
    }
  }
}

/**
 * context.md with all but the last `window` sections reduced to one line each. No LLM: a
 * one-line preview per older section, as aqm.
 */
export function readSmart(contextMd: string, window: number): string {
  if (window <= 0 || contextMd === '') return contextMd;
  const sections = splitSections(contextMd);
  if (sections.length <= window) return contextMd;
  const older = sections.slice(0, -window).map(historyLine);
  return ['[history]', ...older, '', '[recent]', sections.slice(-window).join('\n---\n')].join('\n');
}

/**
 * The sections of a context file, trimmed, without their `---` lines. aqm splits on any `---`
 * line, so an output containing one (a markdown rule, YAML front matter) broke sectioning;
 * troupe splits only where a section ends and the next one's header starts.
 */
export function splitSections(text: string): string[] {
  return text
    .split(/\n---\n\n(?=## \[(?:stage \d+\]|human input\] for ))/)
    .map((section) => section.replace(/\n---\s*$/, '').trim())
    .filter((section) => section !== '');
}

function historyLine(section: string): string {
  const header = /^## (\[[^\]\n]+\])(?: for)? (\S+)/.exec(section);
  const tag = header?.[1] ?? '[section]';
  const agent = header?.[2] ?? '?';
  if (tag === '[human input]')
    return `- ${tag} ${agent}(answered): ${preview(after(section, '### User Response\n'))}`;
  const status = /\*\*Status\*\*: (\S+)/.exec(section)?.[1] ?? '';
  return `- ${tag} ${agent}(${status}): ${preview(after(section, '### Output\n'))}`;
}

function after(section: string, heading: string): string | null {
  const at = section.indexOf(heading);
  return at === -1 ? null : section.slice(at + heading.length).trim();
}

const PREVIEW_LENGTH = 120;

/**
 * aqm: the first line that is not bold or a heading, cut to 120 characters; `…` when the whole
 * text (not the line) is longer. A fenced output previews as "```".
 */
function preview(text: string | null): string {
  if (text === null) return '(no output)';
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('**') && !l.startsWith('#'));
  const cut = (line ?? text).slice(0, PREVIEW_LENGTH);
  return text.length > PREVIEW_LENGTH ? `${cut}…` : cut;
}
