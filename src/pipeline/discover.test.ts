import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NotFoundError, UsageError } from '../core/errors.js';
import { findProjectRoot, listPipelines, resolvePipeline } from './discover.js';
import { removeTempDirs, tempDir } from './test-files.js';

afterEach(removeTempDirs);

const PIPE = 'agents:\n  - id: a\n    runtime: scripted\n';
const noDefault = { default_pipeline: null };

describe('findProjectRoot', () => {
  it.each(['.troupe', '.aqm'])('the nearest ancestor holding %s/', (dir) => {
    const root = tempDir({ [`${dir}/config.yaml`]: '', 'src/deep/file.ts': '' });
    expect(findProjectRoot(path.join(root, 'src', 'deep'))).toBe(root);
  });

  it('else the top of the git repository', () => {
    const root = tempDir({ 'src/deep/file.ts': '' });
    mkdirSync(path.join(root, '.git'));
    expect(findProjectRoot(path.join(root, 'src', 'deep'))).toBe(root);
  });

  it('prefers a project dir below the git top (a monorepo package)', () => {
    const root = tempDir({ 'pkg/.troupe/config.yaml': '', 'pkg/src/x.ts': '' });
    mkdirSync(path.join(root, '.git'));
    expect(findProjectRoot(path.join(root, 'pkg', 'src'))).toBe(path.join(root, 'pkg'));
  });

  it('else the directory itself', () => {
    const dir = tempDir({ 'sub/x': '' });
    expect(findProjectRoot(path.join(dir, 'sub'))).toBe(path.join(dir, 'sub'));
  });
});

describe('resolvePipeline', () => {
  it('--file first, relative to the working directory', () => {
    const root = tempDir({ 'x/team.yaml': PIPE, '.troupe/agents.yaml': PIPE });
    const file = path.join(root, 'x', 'team.yaml');
    expect(resolvePipeline(root, { file: path.relative(process.cwd(), file) }, noDefault)).toEqual({
      file,
      name: 'team',
    });
    expect(() => resolvePipeline(root, { file: path.join(root, 'nope.yaml') }, noDefault)).toThrow(
      NotFoundError,
    );
  });

  it("names a --file agents.yaml by its folder, unless it is the project's own", () => {
    const root = tempDir({ 'examples/dev-team/agents.yaml': PIPE, '.troupe/agents.yaml': PIPE });
    const other = tempDir({ '.aqm/agents.yaml': PIPE });
    const named = (file: string) => resolvePipeline(root, { file }, noDefault).name;
    expect(named(path.join(root, 'examples/dev-team/agents.yaml'))).toBe('dev-team');
    expect(named(path.join(other, '.aqm/agents.yaml'))).toBe(path.basename(other));
    expect(named(path.join(root, '.troupe/agents.yaml'))).toBe('agents'); // as --pipeline agents finds it
  });

  it('a name in .troupe/pipelines/, then .aqm/pipelines/', () => {
    const root = tempDir({
      '.troupe/pipelines/dev.yaml': PIPE,
      '.aqm/pipelines/dev.yaml': PIPE,
      '.aqm/pipelines/ops.yml': PIPE,
    });
    expect(resolvePipeline(root, { pipeline: 'dev' }, noDefault).file).toBe(
      path.join(root, '.troupe/pipelines/dev.yaml'),
    );
    expect(resolvePipeline(root, { pipeline: 'ops' }, noDefault)).toEqual({
      file: path.join(root, '.aqm/pipelines/ops.yml'),
      name: 'ops',
    });
  });

  it('an unknown name says where it looked and what there is', () => {
    const root = tempDir({ '.troupe/pipelines/dev.yaml': PIPE });
    let error: NotFoundError | undefined;
    try {
      resolvePipeline(root, { pipeline: 'prod' }, noDefault);
    } catch (e) {
      error = e as NotFoundError;
    }
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error?.message).toBe('no pipeline named "prod"');
    expect(error?.hint).toContain('.troupe/pipelines/prod.yaml and .aqm/pipelines/prod.yaml');
    expect(error?.hint).toContain('available: dev');
  });

  it('refuses a name that is a path', () => {
    expect(() => resolvePipeline(tempDir(), { pipeline: '../x' }, noDefault)).toThrow(UsageError);
  });

  it('with no name: the configured default first', () => {
    const root = tempDir({ '.troupe/pipelines/dev.yaml': PIPE, '.troupe/agents.yaml': PIPE });
    expect(resolvePipeline(root, {}, { default_pipeline: 'dev' }).name).toBe('dev');
    expect(() => resolvePipeline(root, {}, { default_pipeline: 'gone' })).toThrow(
      /default_pipeline in config\.yaml/,
    );
  });

  it('then .troupe/agents.yaml, then .aqm/agents.yaml', () => {
    const both = tempDir({
      '.troupe/agents.yaml': PIPE,
      '.aqm/agents.yaml': PIPE,
      '.troupe/pipelines/default.yaml': PIPE,
    });
    expect(resolvePipeline(both, {}, noDefault).file).toBe(path.join(both, '.troupe/agents.yaml'));
    const aqm = tempDir({ '.aqm/agents.yaml': PIPE, '.troupe/pipelines/default.yaml': PIPE });
    expect(resolvePipeline(aqm, {}, noDefault)).toEqual({
      file: path.join(aqm, '.aqm/agents.yaml'),
      name: 'agents',
    });
  });

  it('then a pipeline named default, or the only one', () => {
    const many = tempDir({ '.troupe/pipelines/a.yaml': PIPE, '.aqm/pipelines/default.yaml': PIPE });
    expect(resolvePipeline(many, {}, noDefault).name).toBe('default');
    const one = tempDir({ '.aqm/pipelines/only.yaml': PIPE, '.aqm/pipelines/params.yaml': 'x: 1\n' });
    expect(resolvePipeline(one, {}, noDefault).name).toBe('only');
  });

  it('nothing, or several without a default, is NotFound with a hint', () => {
    expect(() => resolvePipeline(tempDir(), {}, noDefault)).toThrow(/no pipeline found/);
    const several = tempDir({ '.troupe/pipelines/a.yaml': PIPE, '.troupe/pipelines/b.yaml': PIPE });
    expect(() => resolvePipeline(several, {}, noDefault)).toThrow('several pipelines and no default: a, b');
  });
});

describe('listPipelines', () => {
  it('finds a pipeline installed as a folder (troupe pull), never a staging folder or one without agents.yaml', () => {
    const root = tempDir({
      '.troupe/pipelines/review/agents.yaml': PIPE,
      '.troupe/pipelines/review/shared.yaml': PIPE,
      '.troupe/pipelines/dev.yaml': PIPE,
      '.troupe/pipelines/dev/agents.yaml': PIPE,
      '.troupe/pipelines/.staging-ops-1a2b/agents.yaml': PIPE,
      '.troupe/pipelines/notes/README.md': '',
    });
    expect(listPipelines(root).map((p) => [p.name, path.relative(root, p.file)])).toEqual([
      ['dev', path.join('.troupe', 'pipelines', 'dev.yaml')],
      ['review', path.join('.troupe', 'pipelines', 'review', 'agents.yaml')],
    ]);
    expect(resolvePipeline(root, { pipeline: 'review' }, noDefault).name).toBe('review');
  });

  it('lists both directories and agents.yaml, never params.yaml, marking the default', () => {
    const root = tempDir({
      '.troupe/pipelines/dev.yaml': PIPE,
      '.troupe/pipelines/params.yaml': 'x: 1\n',
      '.aqm/pipelines/dev.yaml': PIPE,
      '.aqm/pipelines/ops.yaml': PIPE,
      '.aqm/agents.yaml': PIPE,
      '.troupe/config.yaml': 'default_pipeline: ops\n',
    });
    expect(listPipelines(root)).toEqual([
      { name: 'agents', file: path.join(root, '.aqm/agents.yaml'), isDefault: false },
      { name: 'dev', file: path.join(root, '.troupe/pipelines/dev.yaml'), isDefault: false },
      { name: 'ops', file: path.join(root, '.aqm/pipelines/ops.yaml'), isDefault: true },
    ]);
  });

  it('is empty for a project without pipelines', () => {
    expect(listPipelines(tempDir())).toEqual([]);
  });
});
