import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/errors.js';
import { pipelineCreate } from './pipeline-create.js';
import { testPipeline } from './test.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject } from './testing.js';

describe('troupe pipeline create', () => {
  it("a bare --ai (aqm's form) without a terminal says what to pass; an empty request is refused", async () => {
    const dir = scratchProject();
    await expect(pipelineCreate('blog', { ai: true }, capturedIo(dir))).rejects.toThrow(
      'pass it, troupe pipeline create blog --ai "what the team should do"',
    );
    await expect(pipelineCreate('blog', { ai: '  ' }, capturedIo(dir))).rejects.toThrow(UsageError);
    expect(existsSync(join(dir, '.troupe', 'pipelines', 'blog.yaml'))).toBe(false);
  });

  it('lists the built-in templates', async () => {
    const io = capturedIo(scratchProject());
    expect(await pipelineCreate(undefined, { listTemplates: true, json: true }, io)).toBe(0);
    expect((JSON.parse(io.stdout()) as Array<{ name: string }>).map((t) => t.name)).toContain(
      'fan-out-build',
    );
  });

  it("writes a template in a scripted project with the template's replies, which run it to the end", async () => {
    const dir = scratchProject(SCRIPTED_PAIR);
    const io = capturedIo(dir);
    expect(await pipelineCreate('fan', { template: 'fan-out-build' }, io)).toBe(0);
    const file = join(dir, '.troupe', 'pipelines', 'fan.yaml');
    expect(readFileSync(file, 'utf8')).toMatch(/runtime: scripted/);
    expect(existsSync(join(dir, '.troupe', 'scripts', 'fan.yaml'))).toBe(true);
    expect(io.stdout()).toContain(
      '\nsaved .troupe/pipelines/fan.yaml and its offline replies, .troupe/scripts/fan.yaml\n',
    );
    expect(await testPipeline({ pipeline: 'fan', input: 'build it', param: [] }, capturedIo(dir))).toBe(0);
    await expect(pipelineCreate('fan', { template: 'fan-out-build' }, capturedIo(dir))).rejects.toThrow(
      /already exists/,
    );
  });

  it('needs a name, and --ai or --template (one of them)', async () => {
    const io = capturedIo(scratchProject());
    await expect(pipelineCreate(undefined, {}, io)).rejects.toThrow(UsageError);
    await expect(pipelineCreate('x', {}, io)).rejects.toThrow(/one of them/);
    await expect(pipelineCreate('x', { ai: 'a team', template: 'fan-out-build' }, io)).rejects.toThrow(
      /one of them/,
    );
  });
});
