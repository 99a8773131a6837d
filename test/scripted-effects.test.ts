import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, troupeJson } from './support/troupe.js';

describe('scripted agents that edit code', () => {
  it('write: and run: act in the working directory before the reply', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: dev\n    runtime: claude\n',
      's.yaml': `agents:
  dev:
    - reply: "added health.ts"
      write: {src/health.ts: "export const ok = true;\\n", stale.txt: null}
      run: [node, -e, "require('fs').writeFileSync('ran.txt', 'yes')"]
`,
      'stale.txt': 'old',
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(code).toBe(0);
    expect(json.stages[0]!.output).toBe('added health.ts');
    expect(readFileSync(join(dir, 'src', 'health.ts'), 'utf8')).toBe('export const ok = true;\n');
    expect(existsSync(join(dir, 'stale.txt'))).toBe(false);
    expect(readFileSync(join(dir, 'ran.txt'), 'utf8')).toBe('yes');
  });

  it('a path outside the working directory is refused and nothing is written', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: dev\n    runtime: claude\n',
      's.yaml': 'agents:\n  dev:\n    - reply: "sneaky"\n      write: {ok.txt: "x", ../escape.txt: "x"}\n',
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(code).toBe(1);
    expect(json.error).toMatch(/escape/);
    expect(existsSync(join(dir, 'ok.txt'))).toBe(false);
  });
});
