import type { Usage } from '../core/usage.js';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Input read from the provider's prompt cache (cheaper); the input price when not given. */
  cached_input?: number;
}

/**
 * Estimates for the common models, from their providers' published list prices (late 2025);
 * a model is matched by the longest key its name contains. Override or extend with `prices:`
 * in .troupe/config.yaml. A cost the runtime reports itself is always used instead.
 */
export const DEFAULT_PRICES: Record<string, Price> = {
  opus: { input: 15, output: 75, cached_input: 1.5 },
  sonnet: { input: 3, output: 15, cached_input: 0.3 },
  haiku: { input: 0.8, output: 4, cached_input: 0.08 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 },
  'gpt-5': { input: 1.25, output: 10, cached_input: 0.125 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cached_input: 0.31 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.075 },
};

export function priceFor(model: string | null, prices: Record<string, Price>): Price | null {
  if (!model) return null;
  const name = model.toLowerCase();
  const key = Object.keys(prices)
    .filter((k) => name.includes(k.toLowerCase()))
    .sort((a, b) => b.length - a.length)[0];
  return key ? prices[key]! : null;
}

/** The usage with a cost: the runtime's own, else an estimate from the price table (marked so). */
export function withCost(usage: Usage, model: string | null, prices: Record<string, Price>): Usage {
  if (usage.cost_usd !== undefined) return usage;
  const price = priceFor(model, prices);
  if (!price) return usage;
  const cached = (usage.cache_read_tokens ?? 0) * (price.cached_input ?? price.input);
  const cost = (usage.input_tokens * price.input + cached + usage.output_tokens * price.output) / 1_000_000;
  return { ...usage, cost_usd: cost, cost_estimated: true };
}
