import { readFileSync } from 'node:fs';
import path from 'node:path';
import { containedPath } from '../core/contained-path.js';
import { messageOf } from '../core/errors.js';
import { type CompiledPipeline, locate } from './compiled.js';
import type { DiagnosticSink } from './diagnostics.js';
import { OUTSIDE_HINT } from './imports.js';
import { schemaProblem } from './lang/json-schema-check.js';
import { YamlSource } from './yaml-source.js';

/**
 * `output_schema:` of each agent: a file path is read (relative to the file the agent was written
 * in; JSON or YAML) and the schema put inline on the node, so a task carries it in its
 * definition; a missing file or a schema ajv cannot compile is an error where it was written.
 */
export function resolveOutputSchemas(
  compiled: CompiledPipeline,
  sink: DiagnosticSink,
  within?: string,
): void {
  for (const node of compiled.pipeline.agents) {
    const located = compiled.definitions.get(node.id);
    const raw = located?.raw.output_schema;
    if (node.type !== 'agent' || !located || raw === undefined || raw === null) continue;
    const at = locate(compiled, node.id, 'output_schema');
    let schema: unknown = raw;
    if (typeof raw === 'string') {
      const origin = located.inherited.output_schema ?? located.at;
      const file = path.resolve(path.dirname(origin.source.file), raw);
      if (within && containedPath(within, file).kind === 'outside') {
        sink.error(at, `output_schema file \`${raw}\` is outside the project`, OUTSIDE_HINT);
        continue;
      }
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        sink.error(
          at,
          code === 'ENOENT'
            ? `output_schema file \`${raw}\` does not exist (${file})`
            : `output_schema file \`${raw}\` cannot be read: ${code ?? messageOf(error)}`,
          'the path is relative to the pipeline file',
        );
        continue;
      }
      // the same limits as the pipeline's own YAML (aliases, nesting), errors at the schema file
      const source = YamlSource.parse(file, text, sink);
      if (!source) continue;
      schema = source.value();
    }
    const problem = schemaProblem(schema);
    if (problem) {
      sink.error(
        at,
        `output_schema of \`${node.id}\` is not a valid JSON Schema: ${problem}`,
        'see https://json-schema.org/understanding-json-schema/',
      );
      continue;
    }
    node.output_schema = schema as Record<string, unknown>;
  }
}
