import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseDocument } from 'yaml';
import { DiagnosticSink } from './diagnostics.js';
import { compilePipeline, loadPipelineText } from './load.js';
import { aliasExpansion, MAX_ALIAS_EXPANSION_BYTES } from './yaml-alias-size.js';
import { MAX_DEPTH, YamlSource } from './yaml-source.js';

afterEach(() => vi.restoreAllMocks());

function parse(text: string) {
  const sink = new DiagnosticSink();
  const source = YamlSource.parse('/p/agents.yaml', text, sink);
  return { source, lines: sink.list().map((d) => `${d.line}:${d.col} ${d.severity}: ${d.message}`) };
}

const agent = 'agents:\n  - id: a\n    runtime: scripted\n';

describe('YAML a pipeline cannot be walked safely', () => {
  it('billion laughs: one error at the first alias, not an exception', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const name of 'bcde') {
      const previous = String.fromCharCode(name.charCodeAt(0) - 1);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    const { source, lines } = parse(`${levels.join('\n')}\n${agent}`);
    expect(source).toBeUndefined();
    expect(lines).toEqual([
      '2:8 error: YAML aliases expand to too many nodes: excessive alias count indicates a resource exhaustion attack',
    ]);
    expect(() => loadPipelineText(`${levels.join('\n')}\n${agent}`, '<inline>')).toThrow(
      /^<inline>:2:8: YAML aliases expand/,
    );
  });

  it('a few aliases are fine', () => {
    const { source, lines } = parse(`x: &p "hi"\n${agent}    system_prompt: *p\n`);
    expect(lines).toEqual([]);
    expect(source?.value()).toMatchObject({ agents: [{ system_prompt: 'hi' }] });
  });

  it('one large anchor aliased 300 times (red team M3): one error at the alias past 1 MiB', () => {
    const agents = Array.from({ length: 301 }, (_, i) =>
      [
        `  - id: a${i}`,
        '    runtime: scripted',
        `    system_prompt: ${i === 0 ? `&big "${'A'.repeat(900_000)}"` : '*big'}`,
      ].join('\n'),
    );
    const bomb = `agents:\n${agents.join('\n')}\n`;
    // the first alias adds 900 KB, under the cap; the second (agent a2, line 10) crosses it
    const { source, lines } = parse(bomb);
    expect(source).toBeUndefined();
    expect(lines).toEqual(['10:20 error: YAML aliases expand to more than 1 MiB of text']);
    expect(() => loadPipelineText(bomb, '<inline>')).toThrow(
      /^<inline>:10:20: YAML aliases expand to more than 1 MiB/,
    );
  });

  it('aliases that repeat a long prompt a few times still load', () => {
    const prompt = 'P'.repeat(150_000);
    const agents = ['a', 'b', 'c', 'd', 'e'].map(
      (id, i) =>
        `  - id: ${id}\n    runtime: scripted\n    system_prompt: ${i === 0 ? `&p "${prompt}"` : '*p'}`,
    );
    const { source, lines } = parse(`agents:\n${agents.join('\n')}\n`);
    expect(lines).toEqual([]);
    expect(source?.value()).toMatchObject({ agents: Array(5).fill({ system_prompt: prompt }) });
  });

  it('measures each anchor once: a chain of aliases that doubles 60 times is walked node by node', () => {
    const levels = ['l0: &l0 [x, x]'];
    for (let i = 1; i <= 60; i++) levels.push(`l${i}: &l${i} [*l${i - 1}, *l${i - 1}]`);
    const text = `${levels.join('\n')}\n`;
    const sink = new DiagnosticSink();
    const doc = parseDocument(text);
    // the mapping, then per level its key, its sequence and the sequence's two items
    const expansion = aliasExpansion(doc, Number.POSITIVE_INFINITY);
    expect(expansion.walked).toBe(1 + 4 * 61);
    expect(expansion.added).toBeGreaterThan(2 ** 60);
    expect(aliasExpansion(doc).walked).toBeLessThan(1 + 4 * 61);
    YamlSource.parse('/p/agents.yaml', text, sink);
    expect(sink.list().map((d) => `${d.line}:${d.col} ${d.message}`)).toEqual([
      expect.stringMatching(/^\d+:\d+ YAML aliases expand to more than 1 MiB of text$/),
    ]);
    expect(MAX_ALIAS_EXPANSION_BYTES).toBe(1024 * 1024);
  });

  it('an alias inside its own anchor: an error at the alias, not a stack overflow in the checks', () => {
    expect(parse(`x: &a [1, *a]\n${agent}`).lines).toEqual([
      '1:11 error: YAML alias inside the value it refers to: it would contain itself',
    ]);
    expect(parse(`x: &a {k: [*a]}\n${agent}`).lines).toHaveLength(1);
    expect(parse(`x: &a [1]\ny: &a [*a]\n${agent}`).lines).toHaveLength(1);
    expect(parse(`x: &a [1]\ny: [*a, &a [2], *a]\n${agent}`).lines).toEqual([]);
  });

  it('deep flow nesting: where it gets too deep, not a stack overflow', () => {
    const { lines } = parse(`${agent}x: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`);
    // the top-level mapping is the first level, so the 100th bracket is one too many
    expect(lines).toEqual([`4:${3 + MAX_DEPTH} error: YAML nested more than ${MAX_DEPTH} levels deep`]);
  });

  it('deep block nesting, and nesting the parser survives but the checks might not', () => {
    const block = Array.from({ length: 2000 }, (_, i) => `${'  '.repeat(i)}k:`).join('\n');
    expect(parse(`x:\n${block.replace(/^/gm, '  ')} v\n`).lines).toEqual([
      `${MAX_DEPTH + 1}:${2 * MAX_DEPTH + 1} error: YAML nested more than ${MAX_DEPTH} levels deep`,
    ]);
    const lines = parse(`x: ${'['.repeat(MAX_DEPTH + 5)}${']'.repeat(MAX_DEPTH + 5)}\n`).lines;
    expect(lines).toHaveLength(1);
    expect(parse(`x: ${'['.repeat(MAX_DEPTH - 1)}${']'.repeat(MAX_DEPTH - 1)}\n`).lines).toEqual([]);
  });

  it('a merge key of something that is not a mapping: an error at the `<<` (found by fuzzing)', () => {
    expect(parse(`base: &b [1, 2]\n${agent}    <<: *b\n`).lines).toEqual([
      '5:5 error: YAML merge key: merge sources must be maps or map aliases',
    ]);
    expect(parse('<<: *x---#"').lines).toEqual([
      '1:1 error: YAML merge key: merge sources must be maps or map aliases',
    ]);
  });

  it('a mapping used as a key is reported on one line (found by fuzzing)', () => {
    const sink = new DiagnosticSink();
    compilePipeline('? handoffs: [{to: a}]\t#  *x\n', '/p/agents.yaml', {}, sink);
    expect(sink.list().map((d) => d.message)).toContain(
      'unknown field `{ handoffs: [ { to: a } ] #  *x }` in `document`',
    );
  });

  it("prints none of the YAML library's warnings", () => {
    const warn = vi.spyOn(console, 'warn');
    const emit = vi.spyOn(process, 'emitWarning');
    expect(parse(`${agent}? [a, b]\n: 1\n`).source?.value()).toBeDefined();
    expect(warn).not.toHaveBeenCalled();
    expect(emit).not.toHaveBeenCalled();
  });
});
