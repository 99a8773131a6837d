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
