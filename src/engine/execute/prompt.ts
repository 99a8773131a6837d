import type { AgentNode } from '../../core/pipeline.js';
import type { ContextStrategy } from '../../core/pipeline-vocabulary.js';
import { readForStrategy } from '../../pipeline/lang/context.js';
import { specVariable } from '../../pipeline/lang/spec.js';
import { referencedVariables, renderTemplate } from '../../pipeline/lang/template.js';
import type { Activation, TaskState } from '../fold/task-state.js';
import { branchesVariable } from '../plan/branches-variable.js';
import { chunksVariable } from '../plan/chunks.js';

/**
 * The prompt an agent gets: its system_prompt template rendered with the stage input and the
 * context its strategy allows (aqm: the rendered template is the prompt). An agent with no
 * template gets the input itself.
 */
export function stagePrompt(
  state: TaskState,
  node: AgentNode,
  activation: Activation,
  input: string,
  attempt: number,
  inbox = '',
): string {
  if (!node.system_prompt.trim()) return input;
  const fallback = node.retry?.fallback_context_strategy;
  const strategy = attempt > 1 && fallback ? fallback : node.context_strategy;
  return render(state, node, strategy, {
    input,
    branches: branchesVariable(activation.branches),
    transcript: '',
    inbox,
  });
}

/** A participant's turn in a session: the topic, its context, and the transcript so far. */
export function turnPrompt(state: TaskState, node: AgentNode, topic: string, inbox = ''): string {
  if (!node.system_prompt.trim()) return `${topic}\n\n${state.transcript}`;
  return render(state, node, node.context_strategy, {
    input: topic,
    branches: [],
    transcript: state.transcript,
    inbox,
  });
}

/**
 * Renders an agent's template. Context and chunks are only built when the template reads them:
 * building context means re-reading everything the task has done so far.
 */
function render(
  state: TaskState,
  node: AgentNode,
  strategy: ContextStrategy,
  vars: { input: string; branches: readonly unknown[]; transcript: string; inbox: string },
): string {
  const used = usedVariables(node.system_prompt);
  const context = used.has('context')
    ? readForStrategy(
        strategy,
        node.context_window,
        state.contextMd,
        state.agentNotes[node.id] ?? '',
        node.id,
      )
    : '';
  return renderTemplate(
    node.system_prompt,
    {
      ...vars,
      context,
      output: '',
      reject_reason: '',
      gate_result: '',
      params: state.definition.params,
      chunks: used.has('chunks') ? chunksVariable(state.definition, state.chunks) : '',
      spec: specVariable(state.spec?.spec ?? null),
    },
    `${node.id}: system_prompt`,
  );
}

const usedCache = new Map<string, Set<string>>();

/** Whether an agent's prompt reads a variable (`inbox` is drained from the bus only if so). */
export function readsVariable(node: AgentNode, name: string): boolean {
  return node.system_prompt.trim() !== '' && usedVariables(node.system_prompt).has(name);
}

function usedVariables(template: string): Set<string> {
  let used = usedCache.get(template);
  if (!used) {
    used = new Set(referencedVariables(template));
    usedCache.set(template, used);
  }
  return used;
}

/** The gate's own prompt: rendered with the output judged and the task's original request. */
export function gatePrompt(
  state: TaskState,
  node: AgentNode,
  output: string,
  piece: string | null = null,
): string {
  const template = node.gate?.prompt ?? '';
  if (!template.trim()) return '';
  return renderTemplate(
    template,
    {
      output,
      input: state.input,
      params: state.definition.params,
      spec: specVariable(state.spec?.spec ?? null),
      ...(piece ? { piece: state.plan?.pieces.get(piece) } : {}),
    },
    `${node.id}: gate prompt`,
  );
}
