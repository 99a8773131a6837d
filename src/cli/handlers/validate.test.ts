import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NotFoundError, UsageError } from '../../core/errors.js';
import { Exit } from '../exit-codes.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject } from './testing.js';
import { validate } from './validate.js';

const broken = 'agents:\n  - id: writer\n    runtime: scripted\n    handoffs: [{ to: nobody }]\n';
const flags = { param: [] };

describe('troupe validate', () => {
  it("discovers the project's pipeline and says it is valid", async () => {
    const io = capturedIo(scratchProject(SCRIPTED_PAIR));
    expect(await validate(undefined, flags, io)).toBe(Exit.ok);
    expect(io.stdout()).toBe('✓ valid: 2 agents (1 handoff)\n');
  });

  it('exits 2 with the error and where it is, as text and as JSON', async () => {
    const dir = scratchProject({ 'broken.yaml': broken });
    const text = capturedIo(dir);
    expect(await validate('broken.yaml', flags, text)).toBe(Exit.usage);
    expect(text.stdout()).toMatch(/broken\.yaml:4:\d+: .*nobody/);
    expect(text.stdout()).toMatch(/✗ 1 error, 0 warnings\n$/);
    const json = capturedIo(dir);
    expect(await validate(undefined, { ...flags, file: 'broken.yaml', json: true }, json)).toBe(Exit.usage);
    expect(JSON.parse(json.stdout())).toMatchObject({ valid: false, file: join(dir, 'broken.yaml') });
  });

  it('takes a directory to discover in, and a pipeline by name', async () => {
    const dir = scratchProject({
      'other/.troupe/pipelines/pair.yaml': SCRIPTED_PAIR['.troupe/pipelines/pair.yaml'],
    });
    expect(await validate('other', { ...flags, pipeline: 'pair' }, capturedIo(dir))).toBe(Exit.ok);
  });

  it('refuses PATH with --file, and a path that is not there', async () => {
    const io = capturedIo(scratchProject({ 'p.yaml': broken }));
    await expect(validate('p.yaml', { ...flags, file: 'p.yaml' }, io)).rejects.toThrow(UsageError);
    await expect(validate('nothere.yaml', flags, io)).rejects.toThrow(NotFoundError);
  });
});
