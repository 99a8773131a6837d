import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, priceFor, withCost } from './prices.js';

describe('prices', () => {
  it('matches a model by the longest key its name contains', () => {
    expect(priceFor('gpt-4o-mini-2024-07-18', DEFAULT_PRICES)).toMatchObject({ input: 0.15, output: 0.6 });
    expect(priceFor('claude-sonnet-4-6', DEFAULT_PRICES)).toMatchObject({ input: 3, output: 15 });
    expect(priceFor('llama3', DEFAULT_PRICES)).toBeNull();
    expect(priceFor(null, DEFAULT_PRICES)).toBeNull();
  });

  it('estimates a cost only when the runtime reported none, and says it is an estimate', () => {
    expect(withCost({ input_tokens: 1_000_000, output_tokens: 100_000 }, 'opus', DEFAULT_PRICES)).toEqual({
      input_tokens: 1_000_000,
      output_tokens: 100_000,
      cost_usd: 22.5,
      cost_estimated: true,
    });
    const reported = { input_tokens: 10, output_tokens: 10, cost_usd: 0.5 };
    expect(withCost(reported, 'opus', DEFAULT_PRICES)).toBe(reported);
  });

  it('prices tokens read from the cache at the cached rate, or at the input rate when the table has none', () => {
    const usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 1_000_000 };
    expect(withCost(usage, 'gpt-5', DEFAULT_PRICES).cost_usd).toBeCloseTo(0.125);
    expect(withCost(usage, 'local', { local: { input: 2, output: 4 } }).cost_usd).toBeCloseTo(2);
  });
});
