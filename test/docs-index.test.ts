import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/troupe.js';

/** The README's Docs section lists every page in docs/, and every page it lists is there. */
describe("the README's docs index", () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Docs\n'),
    readme.indexOf('\n## ', readme.indexOf('## Docs\n') + 1),
  );
  const listed = [...section.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]!);

  it('names every page of docs/', () => {
    const pages = readdirSync(join(repoRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    expect([...listed].sort()).toEqual(pages.sort());
  });

  it('links only pages that exist', () => {
    expect(listed.filter((page) => !existsSync(join(repoRoot, page)))).toEqual([]);
  });
});
