/**
 * What one call to a model used: tokens and, where known, cost. Its own file because both the
 * runtimes' port (runtime.ts) and the task events (events.ts) speak of it.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cost_usd?: number;
  /** The cost is troupe's estimate from its price table, not the provider's figure. */
  cost_estimated?: boolean;
  /** Nothing was measured (a mailbox agent's reply): the zeros are not a count, and there is no cost. */
  unknown?: boolean;
}

/** Adds `add` into `total` (in place): tokens, cache reads, cost, and whether any cost was estimated. */
export function addUsage(total: Usage, add: Usage): Usage {
  total.input_tokens += add.input_tokens;
  total.output_tokens += add.output_tokens;
  if (add.cache_read_tokens) total.cache_read_tokens = (total.cache_read_tokens ?? 0) + add.cache_read_tokens;
  if (add.cost_usd !== undefined) total.cost_usd = (total.cost_usd ?? 0) + add.cost_usd;
  if (add.cost_estimated) total.cost_estimated = true;
  return total;
}
