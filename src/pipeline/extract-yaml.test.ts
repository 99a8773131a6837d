import { describe, expect, it } from 'vitest';
import { extractYaml } from './extract-yaml.js';

describe('extractYaml', () => {
  it('takes a ```yaml block, dropping the prose around it', () => {
    expect(extractYaml('Here it is:\n\n```yaml\nagents:\n  - id: a\n```\nEnjoy.')).toBe(
      'agents:\n  - id: a\n',
    );
  });

  it('prefers the last block that holds agents: over fragments shown before it', () => {
    const reply = '```yaml\ngate: {type: llm}\n```\n\nThe whole file:\n```yml\nagents: []\n```\n';
    expect(extractYaml(reply)).toBe('agents: []\n');
  });

  it('ignores blocks in other languages, and takes an unlabelled or ~~~ block', () => {
    expect(extractYaml('```sh\ntroupe run x\n```\n```\nagents: [1]\n```')).toBe('agents: [1]\n');
    expect(extractYaml('~~~yaml\nagents: [2]\n~~~')).toBe('agents: [2]\n');
  });

  it('keeps nested fences of a longer fence', () => {
    expect(extractYaml('````yaml\nagents:\n  - system_prompt: |\n      ```\n      x\n      ```\n````')).toBe(
      'agents:\n  - system_prompt: |\n      ```\n      x\n      ```\n',
    );
  });

  it('without a fence, the whole reply from its first top-level key or comment', () => {
    expect(extractYaml('Sure! Here is the pipeline.\napiVersion: troupe/v1\nagents: []')).toBe(
      'apiVersion: troupe/v1\nagents: []\n',
    );
    expect(extractYaml('# a team\nagents: []\n')).toBe('# a team\nagents: []\n');
    expect(extractYaml('no yaml at all')).toBe('no yaml at all\n');
  });
});
