import { type CompiledPipeline, locate } from './compiled.js';
import type { DiagnosticSink } from './diagnostics.js';
import { nodesById } from './lang/graph.js';

/**
 * `qa: strict` (project config): worker != tester is not enough, the tester must also be another
 * model — a verifier on the worker's runtime with the same model shares its blind spots. The
 * verifier judges with `gate.model`, else its own model, else config `gate.model`; null on both
 * sides means the runtime's default model, the same one.
 */
export function checkStrictQa(
  compiled: CompiledPipeline,
  sink: DiagnosticSink,
  configGateModel: string | null,
): void {
  for (const node of compiled.pipeline.agents) {
    if (node.type !== 'agent' || !node.gate?.verifier || node.gate.verifier === node.id) continue;
    const verifier = nodesById(compiled.pipeline).get(node.gate.verifier);
    if (verifier?.type !== 'agent') continue; // reported by check-references
    const model = node.gate.model ?? verifier.model ?? configGateModel;
    if (verifier.runtime !== node.runtime || model !== node.model) continue;
    sink.error(
      locate(compiled, node.id, 'gate', 'verifier'),
      `verifier \`${verifier.id}\` runs on the same runtime and model as \`${node.id}\` (${node.runtime}, ${model ?? 'default model'}); qa: strict needs cross-LLM verification`,
      'give the verifier another runtime (for example gemini) or another model',
    );
  }
}
