/**
 * How deep JSON from someone else may nest: the 100 levels the pipeline's YAML allows. JSON.parse
 * takes any depth, but JSON.stringify, zod and troupe's own walkers recurse, so a value nested
 * thousands of levels deep (a few KiB of `[[[[…`) must be refused before any of them sees it.
 */
export const MAX_JSON_DEPTH = 100;

/** Whether `value` nests objects or arrays more than `max` levels deep (iterative: any depth is safe). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[object, number]> = [];
  if (value !== null && typeof value === 'object') pending.push([value, 1]);
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (depth > max) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}
