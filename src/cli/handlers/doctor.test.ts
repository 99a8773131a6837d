import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Exit } from '../exit-codes.js';
import { doctor } from './doctor.js';
import { capturedIo, GATED_PIPELINE, scratchProject } from './testing.js';

describe('troupe doctor', () => {
  // none of the three CLIs is installed on this "machine"
  beforeEach(() => {
    for (const cli of ['CLAUDE', 'GEMINI', 'CODEX']) vi.stubEnv(`TROUPE_${cli}_BIN`, '/nonexistent/cli');
  });
  afterEach(() => void vi.unstubAllEnvs());

  it('without a pipeline checks the CLIs only, and says so', async () => {
    const io = capturedIo(scratchProject());
    expect(await doctor({}, io)).toBe(Exit.ok);
    expect(io.stdout()).toContain('· no pipeline checked: ');
    expect(io.stdout().trimEnd().split('\n').at(-1)).toBe('· ready to run headless here: none of the three');
  });

  it('fails when a runtime the pipeline uses is missing, with the fix', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const io = capturedIo(root);
    expect(await doctor({ file: join(root, '.troupe', 'p.yaml') }, io)).toBe(Exit.failed);
    expect(io.stdout()).toMatch(/^✗ claude: missing_cli /m);
    expect(io.stdout()).toMatch(/^ {2}fix: /m);
    expect(io.stdout()).toMatch(/^· gemini: missing_cli .* — not used by the pipeline$/m);
    expect(io.stdout().trimEnd().split('\n').at(-1)).toBe('✗ not ready: see the fixes above');
  });

  it('prints the report as JSON, with why no pipeline was checked', async () => {
    const io = capturedIo(scratchProject());
    await doctor({ json: true }, io);
    const report = JSON.parse(io.stdout());
    expect(report).toMatchObject({ pipeline: false, ok: true, no_pipeline: expect.any(String) });
    expect(report.clis.map((c: { runtime: string }) => c.runtime)).toEqual(['claude', 'gemini', 'codex']);
  });
});
