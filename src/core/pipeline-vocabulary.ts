/**
 * The pipeline language's closed keywords (docs/pipelines.md), declared once: the schema accepts
 * them, validation checks against them, the engine types its pipeline with them, and the dashboard
 * offers them. `web/` may import `core/`, so no list here is kept by hand anywhere else.
 */

type NodeType = 'agent' | 'session';

/** A handoff condition's keywords; any other condition is an expression over the output's fields. */
export const CONDITION_KEYWORDS = [
  'always',
  'on_approve',
  'on_reject',
  'on_pass',
  'auto',
  'on_no_consensus',
] as const;
export type ConditionKeyword = (typeof CONDITION_KEYWORDS)[number];

/** The nodes each keyword can fire on: a gate's verdict belongs to an agent, consensus to a session. */
const CONDITION_NODES: Record<ConditionKeyword, readonly NodeType[]> = {
  always: ['agent', 'session'],
  on_approve: ['agent'],
  on_reject: ['agent'],
  on_pass: ['agent', 'session'],
  auto: ['agent', 'session'],
  on_no_consensus: ['session'],
};

export function isConditionKeyword(condition: string): condition is ConditionKeyword {
  return Object.hasOwn(CONDITION_NODES, condition);
}

/** Whether a keyword can fire on a node of this type (`on_approve` on a session never does). */
export function conditionApplies(keyword: ConditionKeyword, type: NodeType): boolean {
  return CONDITION_NODES[keyword].includes(type);
}

/** The keywords a node of this type can hand off on, in declaration order. */
export function conditionsFor(type: NodeType): ConditionKeyword[] {
  return CONDITION_KEYWORDS.filter((keyword) => conditionApplies(keyword, type));
}

/** How a gate judges: a model, a person, or a command's exit status. */
export const GATE_TYPES = ['llm', 'human', 'command'] as const;
export type GateType = (typeof GATE_TYPES)[number];

/** What an agent's prompt carries of the task so far (pipeline/lang/context.ts). */
export const CONTEXT_STRATEGIES = ['none', 'last_only', 'own', 'shared', 'both'] as const;
export type ContextStrategy = (typeof CONTEXT_STRATEGIES)[number];

/** When an agent asks a person: before it runs, when it asks, or both. */
export const HUMAN_INPUT_MODES = ['before', 'on_demand', 'both'] as const;
export type HumanInputMode = (typeof HUMAN_INPUT_MODES)[number];

/** How hard a model thinks; each runtime maps it to its own flag. `auto` (routing) is not one. */
export const EFFORTS = ['low', 'medium', 'high', 'max'] as const;
export type Effort = (typeof EFFORTS)[number];

/**
 * What an agent may do to the working directory: `read_only` looks, `edit` changes files,
 * `full` also runs anything without asking. Each CLI runtime maps it to its own flag.
 */
export const PERMISSIONS = ['read_only', 'edit', 'full'] as const;
export type Permissions = (typeof PERMISSIONS)[number];
