import type { PipelineNode } from '../core/pipeline.js';
import { didYouMean } from './closest.js';
import { type CompiledPipeline, locate } from './compiled.js';
import type { DiagnosticSink } from './diagnostics.js';
import { referencedVariables, templateProblems, templateSyntaxError } from './lang/template.js';
import type { Path } from './yaml-source.js';

/** What each kind of template is rendered with (engine/template.ts callers). */
const PROMPT_VARIABLES = [
  'input',
  'context',
  'output',
  'reject_reason',
  'gate_result',
  'branches',
  'params',
  'chunks',
  'inbox',
  'spec',
];
const PAYLOAD_VARIABLES = ['output', 'input', 'reject_reason', 'gate_result', 'branches', 'params'];
const GATE_VARIABLES = ['output', 'input', 'params', 'spec'];

/**
 * A template that does not parse, or would fail to render whatever its input (an unknown filter,
 * a key the sandbox refuses), is an error (better at load than after four paid stages); a
 * variable the template will never be given is a warning, since it renders as "".
 */
export function checkTemplates(compiled: CompiledPipeline, sink: DiagnosticSink): void {
  const participants = new Set(
    compiled.pipeline.agents.flatMap((n) => (n.type === 'session' ? n.participants : [])),
  );
  for (const node of compiled.pipeline.agents) {
    const check = (template: string, path: Path, what: string, available: string[]) => {
      const at = locate(compiled, node.id, ...path);
      const syntaxError = templateSyntaxError(template);
      if (syntaxError) {
        sink.error(
          at,
          `template syntax error in ${what}: ${syntaxError}`,
          'check that every `{{` has its `}}` and every `{% if %}`/`{% for %}` its end tag',
        );
        return;
      }
      for (const problem of templateProblems(template)) {
        sink.error(at, `template error in ${what}: ${problem.message}`, problem.hint);
      }
      for (const name of referencedVariables(template)) {
        if (available.includes(name)) continue;
        sink.warning(
          at,
          `\`${name}\` is not a variable of ${what} (it renders empty)`,
          didYouMean(name, available) ?? `available: ${available.join(', ')}`,
        );
      }
    };
    check(
      node.system_prompt,
      ['system_prompt'],
      `the system_prompt of \`${node.id}\``,
      promptVariables(node, participants),
    );
    node.handoffs.forEach((h, i) => {
      check(h.payload, ['handoffs', i, 'payload'], `a handoff payload of \`${node.id}\``, PAYLOAD_VARIABLES);
    });
    if (node.type === 'agent' && node.gate) {
      check(node.gate.prompt, ['gate', 'prompt'], `the gate prompt of \`${node.id}\``, GATE_VARIABLES);
    }
  }
}

function promptVariables(node: PipelineNode, participants: ReadonlySet<string>): string[] {
  return node.type === 'session' || participants.has(node.id)
    ? [...PROMPT_VARIABLES, 'transcript']
    : PROMPT_VARIABLES;
}
