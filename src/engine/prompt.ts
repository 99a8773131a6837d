import type { AgentNode } from '../pipeline/types.js';
import { chunksVariable } from './chunks.js';
import { readForStrategy } from './context.js';
import type { Activation, TaskState } from './task-state.js';
import { renderTemplate } from './template.js';

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
): string {
  if (!node.system_prompt.trim()) return input;
  const fallback = node.retry?.fallback_context_strategy;
  const strategy = attempt > 1 && fallback ? fallback : node.context_strategy;
  const context = readForStrategy(
    strategy,
    node.context_window,
    state.contextMd,
    state.agentNotes[node.id] ?? '',
    node.id,
  );
  return renderTemplate(
    node.system_prompt,
    {
      input,
      context,
      output: '',
      reject_reason: '',
      gate_result: '',
      branches: activation.branches,
      params: state.definition.params,
      chunks: chunksVariable(state.definition, state.chunks),
      transcript: '',
    },
    `${node.id}: system_prompt`,
  );
}

/** A participant's turn in a session: the topic, its context, and the transcript so far. */
export function turnPrompt(state: TaskState, node: AgentNode, topic: string): string {
  if (!node.system_prompt.trim()) return `${topic}\n\n${state.transcript}`;
  const context = readForStrategy(
    node.context_strategy,
    node.context_window,
    state.contextMd,
    state.agentNotes[node.id] ?? '',
    node.id,
  );
  return renderTemplate(
    node.system_prompt,
    {
      input: topic,
      context,
      output: '',
      reject_reason: '',
      gate_result: '',
      branches: [],
      params: state.definition.params,
      chunks: chunksVariable(state.definition, state.chunks),
      transcript: state.transcript,
    },
    `${node.id}: system_prompt`,
  );
}

/** The gate's own prompt: rendered with the output judged and the task's original request. */
export function gatePrompt(state: TaskState, node: AgentNode, output: string): string {
  const template = node.gate?.prompt ?? '';
  if (!template.trim()) return '';
  return renderTemplate(
    template,
    { output, input: state.input, params: state.definition.params },
    `${node.id}: gate prompt`,
  );
}
