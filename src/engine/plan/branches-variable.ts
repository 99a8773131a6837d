import type { Branch } from '../fold/task-state.js';

/**
 * `{{ branches }}` in a join's templates: the list of branches, for `{% for b in branches %}`,
 * that prints as readable text — each branch's agent, stage and output — when written on its own
 * (a plain array would print `[object Object],[object Object]`). Both nunjucks and the simple
 * renderer print a value with its toString.
 */
export function branchesVariable(branches: readonly Branch[]): readonly Branch[] {
  if (branches.length === 0) return branches;
  const items = branches.map((branch) =>
    withText({ ...branch }, `## from ${branch.agent} (stage ${branch.stage})\n\n${branch.output}`),
  );
  return withText(items, items.map(String).join('\n\n'));
}

function withText<T extends object>(value: T, text: string): T {
  return Object.defineProperty(value, 'toString', { value: () => text, enumerable: false });
}
