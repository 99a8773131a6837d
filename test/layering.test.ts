// The folders of src/ depend on each other in one direction only, so a newcomer can read them
// bottom-up (docs/architecture.md) and a store or workspace can be swapped without touching the
// engine. Type-only imports count: a cycle of types is still a cycle of meaning.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `engine`, `store/sqlite`, … for a file; `(root)` for src/*.ts. */
const moduleOf = (file: string, depth = 1) => {
  const parts = relative(src, file).split(sep).slice(0, -1);
  return parts.length === 0 ? '(root)' : parts.slice(0, depth).join('/');
};

interface Edge {
  from: string;
  to: string;
}

function importEdges(): Edge[] {
  return sourceFiles(src).flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.filter((ref) => ref.fileName.startsWith('.'))
      .map((ref) => ({ from: file, to: resolve(dirname(file), ref.fileName.replace(/\.js$/, '.ts')) })),
  );
}

/** Tarjan's strongly connected components with more than one member. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

function folderGraph(edges: Edge[]) {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const [a, b] = [moduleOf(from), moduleOf(to)];
    if (!graph.has(a)) graph.set(a, new Set());
    if (a !== b) graph.get(a)!.add(b);
  }
  return graph;
}

describe('the layering of src/', () => {
  const edges = importEdges();

  it('has no import cycle between folders', () => {
    expect(cycles(folderGraph(edges))).toEqual([]);
  });

  it('imports only down the layers docs/architecture.md lists, bottom-up', () => {
    // folders on one line are side by side: neither imports the other
    const layers = [
      ['(root)', 'core'],
      ['scheduler'],
      ['pipeline'],
      ['bus', 'workspace'],
      ['runtimes', 'live', 'registry', 'trackers'],
      ['engine'],
      ['store'],
      ['app'],
      ['mcp', 'server'],
      ['cli'],
    ];
    const rank = new Map(layers.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
    const upward = [...folderGraph(edges)].flatMap(([from, tos]) =>
      [...tos].filter((to) => !(rank.get(to)! < rank.get(from)!)).map((to) => `${from} → ${to}`),
    );
    expect([...folderGraph(edges).keys()].filter((f) => !rank.has(f))).toEqual([]);
    expect(upward).toEqual([]);
  });

  it('keeps core/ a leaf: it imports nothing else of troupe', () => {
    const out = edges.filter((e) => moduleOf(e.from) === 'core' && moduleOf(e.to) !== 'core');
    expect(out.map((e) => `${relative(src, e.from)} → ${relative(src, e.to)}`)).toEqual([]);
  });

  it('keeps the engine on its ports: no concrete store, workspace, bus or runtime', () => {
    const concrete = /^(store\/(sqlite|memory)|workspace|bus|runtimes|app|cli|server)(\/|$)/;
    const out = edges.filter(
      (e) => moduleOf(e.from) === 'engine' && concrete.test(relative(src, e.to).replace(/\\/g, '/')),
    );
    expect(out.map((e) => `${relative(src, e.from)} → ${relative(src, e.to)}`)).toEqual([]);
  });

  it('opens a concrete store only in the composition root (app/) and in store/ itself', () => {
    // which store a project uses is decided once (app/project.ts); a reader that opened one of
    // its own read the wrong one (troupe mcp on PostgreSQL read .troupe/troupe.db)
    const concrete = /^store\/(sqlite\/|postgres\/|open-store\.ts$)/;
    const name = (file: string) => relative(src, file).replace(/\\/g, '/');
    const out = edges.filter(
      (e) => !['app', 'store'].includes(moduleOf(e.from)) && concrete.test(name(e.to)),
    );
    expect(out.map((e) => `${name(e.from)} → ${name(e.to)}`)).toEqual([]);
  });

  it('keeps the fold below the planner and the executor: a task state is events alone', () => {
    const name = (file: string) => relative(src, file).replace(/\\/g, '/');
    const out = edges.filter(
      (e) => name(e.from).startsWith('engine/fold/') && /^engine\/(?!fold\/)/.test(name(e.to)),
    );
    expect(out.map((e) => `${name(e.from)} → ${name(e.to)}`)).toEqual([]);
  });

  it("keeps the executor's modules out of import cycles, types included", () => {
    const executor = /^engine\/(execute\/[^/]+|plan\/fallback|ports)\.ts$/;
    const graph = new Map<string, Set<string>>();
    const name = (file: string) => relative(src, file).replace(/\\/g, '/');
    for (const { from, to } of edges)
      graph.set(name(from), (graph.get(name(from)) ?? new Set()).add(name(to)));
    expect(cycles(graph).filter((files) => files.some((f) => executor.test(f)))).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself can fail)', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  });
});
