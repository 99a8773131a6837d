import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { UsageError } from '../core/errors.js';

/**
 * The files a pipeline consists of: its own, the files it imports (and they import) and the
 * `output_schema` files its agents name, each relative to the pipeline's folder, which they must
 * all be inside (a published pipeline is complete on its own). The pipeline has been validated,
 * so every path here exists.
 */
export function pipelineFiles(main: string): Map<string, string> {
  const folder = path.dirname(main);
  const found = new Map<string, string>();
  const visit = (file: string, isMain: boolean) => {
    const rel = path.relative(folder, file).split(path.sep).join('/');
    if (!isMain && (rel.startsWith('../') || path.isAbsolute(rel))) {
      throw new UsageError(`${path.relative(process.cwd(), main)} uses ${file}, outside its folder`, {
        hint: 'a published pipeline takes only the files in its own folder: move the file beside it',
      });
    }
    const key = isMain ? 'agents.yaml' : rel;
    if (found.has(key)) return;
    found.set(key, file);
    if (!/\.ya?ml$/.test(file)) return;
    const document = parse(readFileSync(file, 'utf8')) as unknown;
    const agents = Array.isArray(document) ? document : isRecord(document) ? document.agents : [];
    const imports = isRecord(document) && Array.isArray(document.imports) ? document.imports : [];
    const near = (p: string) => path.resolve(path.dirname(file), p);
    for (const spec of imports)
      if (isRecord(spec) && typeof spec.from === 'string') visit(near(spec.from), false);
    for (const agent of Array.isArray(agents) ? agents : []) {
      if (isRecord(agent) && typeof agent.output_schema === 'string') visit(near(agent.output_schema), false);
    }
  };
  visit(path.resolve(main), true);
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
