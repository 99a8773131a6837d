import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/troupe.js';

/**
 * The figures the guides quote come from the benches: every ratio (`5.07×`) and time (`1.278 ms`)
 * in these pages must be one that a bench wrote into docs/benchmarks.md, so a page cannot keep a
 * figure the benches no longer give (issue #33: "4–4.7×" stayed after the bench said 5.07×).
 */
const PAGES = ['docs/distributed.md', 'docs/routing.md'];
const FIGURE = /\b\d+(?:\.\d+)?(?:–\d+(?:\.\d+)?)?(?:×| ms\b)/g;

const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

describe('figures in the guides', () => {
  const benchmarks = read('docs/benchmarks.md');
  it.each(PAGES)('%s quotes only figures the benches wrote', (page) => {
    const quoted = [...read(page).matchAll(FIGURE)].map((m) => m[0]);
    expect(quoted.filter((figure) => !benchmarks.includes(figure))).toEqual([]);
  });
});
