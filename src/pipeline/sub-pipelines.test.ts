import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPipelineText } from './load.js';
import { removeTempDirs, tempDir, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const SUB =
  'agents:\n  - id: coder\n    runtime: scripted\n    handoffs: [{ to: writer }]\n  - id: writer\n    runtime: scripted\n';
const planner = (pipeline: string) =>
  `agents:\n  - id: planner\n    runtime: scripted\n    plan: { pipeline: ${pipeline}, verifier: tester }\n  - id: tester\n    runtime: scripted\n`;

describe('plan.pipeline', () => {
  it("brings the sub-pipeline's agents after the pipeline's own: its first starts each piece", () => {
    const result = validateYaml(planner('./pieces/build-doc.yaml'), {
      files: { 'pieces/build-doc.yaml': SUB },
    });
    expect(result.lines).toEqual([]);
    expect(result.pipeline?.agents.map((a) => a.id)).toEqual(['planner', 'tester', 'coder', 'writer']);
    const plan = result.pipeline?.agents[0]?.type === 'agent' ? result.pipeline.agents[0].plan : null;
    expect(plan).toMatchObject({
      worker: 'coder',
      pipeline: {
        name: './pieces/build-doc.yaml',
        file: path.join(result.dir, 'pieces/build-doc.yaml'),
        agents: ['coder', 'writer'],
      },
    });
  });

  it('a pipeline sent through the API names only files inside the project, links followed', () => {
    const project = tempDir({ '.troupe/pipelines/.keep': '' });
    const outside = tempDir({ 'build-doc.yaml': SUB });
    symlinkSync(path.join(outside, 'build-doc.yaml'), path.join(project, '.troupe/pipelines/linked.yaml'));
    for (const named of [path.join(outside, 'build-doc.yaml'), '../build-doc.yaml', 'linked']) {
      expect(() =>
        loadPipelineText(planner(named), path.join(project, 'p.yaml'), { within: project }),
      ).toThrow(`cannot use pipeline "${named}": it is outside the project`);
    }
    // the same names are the owner's to use from the command line
    expect(loadPipelineText(planner('linked'), path.join(project, 'p.yaml')).agents).toHaveLength(4);
  });
});
