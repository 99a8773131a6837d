import { MAX_PIECES, ownsPath, PIECE_ID, type PlanPiece } from '../../core/plan.js';
import { parseTaskSize, TASK_SIZES } from '../../core/spec.js';
import { lastJsonObject } from './conditions.js';
import { prepareSchema, schemaErrors } from './json-schema-check.js';

/**
 * A planner's output, read as a plan (docs/task-graphs.md): the last JSON object in it, checked
 * against PLAN_JSON_SCHEMA, then as a graph — every dependency known, no cycle, no path owned by
 * two pieces that could run at once. What is wrong goes back to the planner, each problem naming
 * its pieces; what is only risky (two pieces in one line of dependencies owning one path) is a
 * warning recorded with the plan.
 */

export const PLAN_SCHEMA_ID = 'https://troupe.dev/schema/plan.schema.json';

/** What a plan must look like; `schema/plan.schema.json` is this, committed (a test checks). */
export const PLAN_JSON_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: PLAN_SCHEMA_ID,
  title: 'troupe plan',
  description:
    'The plan a planner agent (an agent with `plan:`) writes as a JSON object in its output: the pieces the task is split into, each run in a worktree of its own once the pieces it depends on are merged.',
  type: 'object',
  required: ['pieces'],
  properties: {
    pieces: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_PIECES,
      items: {
        type: 'object',
        required: ['id', 'goal', 'paths'],
        additionalProperties: false,
        properties: {
          id: {
            description: 'Lower-case letters, digits and dashes, at most 40: it names the piece’s branch.',
            type: 'string',
            pattern: PIECE_ID.source,
          },
          goal: { description: 'What the piece must achieve, for its worker.', type: 'string', minLength: 1 },
          paths: {
            description:
              'The files the piece may write, relative to the repository; a folder ends with `/`. A piece that writes elsewhere is flagged before its merge.',
            type: 'array',
            minItems: 1,
            items: { type: 'string', pattern: '^(?!/)(?!.*(^|/)\\.\\.(/|$))[^\\\\\\u0000]+$' },
          },
          depends_on: {
            description: 'Ids of the pieces whose merged work this piece starts from.',
            type: 'array',
            items: { type: 'string' },
          },
          size: {
            description: 'The piece’s size: it picks the piece’s routing tier.',
            enum: [...TASK_SIZES],
          },
          labels: {
            description: 'Routing labels for the piece (routing.labels in the config).',
            type: 'array',
            items: { type: 'string', minLength: 1 },
          },
          checks: {
            description: 'Acceptance checks: shell commands that pass when the piece is done.',
            type: 'array',
            items: { type: 'string', minLength: 1 },
          },
        },
      },
    },
  },
} as const;

export function planJsonSchemaText(): string {
  return `${JSON.stringify(PLAN_JSON_SCHEMA, null, 2)}\n`;
}

export type ReadPlan = { pieces: PlanPiece[]; warnings: string[] } | { errors: string[] };

/**
 * The plan in a planner's output. `merged`: pieces an earlier round of this task already merged
 * (a re-plan may depend on them, and does not run them again).
 */
/** Loads and compiles the plan's validator now, so the first `readPlan` does not. */
export function preparePlanCheck(): void {
  prepareSchema(PLAN_JSON_SCHEMA);
}

export function readPlan(output: string, merged: ReadonlySet<string> = new Set()): ReadPlan {
  const json = lastJsonObject(output);
  if (!json) return { errors: ['no JSON object found in the output: write the plan as {"pieces": [...]}'] };
  const shape = schemaErrors(PLAN_JSON_SCHEMA, json);
  if (shape.length > 0) return { errors: shape };
  const pieces = (json.pieces as Record<string, unknown>[]).map(
    (raw): PlanPiece => ({
      id: raw.id as string,
      goal: raw.goal as string,
      paths: [...new Set((raw.paths as string[]).map(normalizePath))],
      depends_on: [...new Set((raw.depends_on as string[] | undefined) ?? [])],
      size: typeof raw.size === 'string' ? parseTaskSize(raw.size) : null,
      labels: (raw.labels as string[] | undefined) ?? [],
      checks: (raw.checks as string[] | undefined) ?? [],
    }),
  );
  const errors = [...duplicateIds(pieces), ...unknownDependencies(pieces, merged)];
  if (errors.length === 0) errors.push(...cycles(pieces));
  if (errors.length > 0) return { errors };
  const { refused, warnings } = sharedPaths(pieces);
  return refused.length > 0 ? { errors: refused } : { pieces: inDependencyOrder(pieces), warnings };
}

function normalizePath(path: string): string {
  return path.replace(/^\.\//, '').replace(/\/{2,}/g, '/');
}

function duplicateIds(pieces: PlanPiece[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const p of pieces) (seen.has(p.id) ? twice : seen).add(p.id);
  return [...twice].map((id) => `two pieces are called ${id}`);
}

function unknownDependencies(pieces: PlanPiece[], merged: ReadonlySet<string>): string[] {
  const ids = new Set(pieces.map((p) => p.id));
  const errors: string[] = [];
  for (const p of pieces) {
    for (const d of p.depends_on) {
      if (d === p.id) errors.push(`piece ${p.id} depends on itself`);
      else if (!ids.has(d) && !merged.has(d))
        errors.push(`piece ${p.id} depends on ${d}, which is not in the plan`);
    }
  }
  return errors;
}

/** Each cycle once, as the path round it (`a → b → a`). */
function cycles(pieces: PlanPiece[]): string[] {
  const byId = new Map(pieces.map((p) => [p.id, p]));
  const state = new Map<string, 'visiting' | 'done'>();
  const found: string[] = [];
  for (const start of pieces) {
    if (state.has(start.id)) continue;
    // iterative DFS: a hostile plan of 200 pieces in one line must not blow the stack
    const stack: { id: string; next: number }[] = [{ id: start.id, next: 0 }];
    state.set(start.id, 'visiting');
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const deps = byId.get(top.id)?.depends_on ?? [];
      if (top.next >= deps.length) {
        state.set(top.id, 'done');
        stack.pop();
        continue;
      }
      const dep = deps[top.next++]!;
      if (!byId.has(dep)) continue;
      if (state.get(dep) === 'visiting') {
        const from = stack.findIndex((f) => f.id === dep);
        found.push(`the dependencies go round: ${[...stack.slice(from).map((f) => f.id), dep].join(' → ')}`);
      } else if (!state.has(dep)) {
        state.set(dep, 'visiting');
        stack.push({ id: dep, next: 0 });
      }
    }
  }
  return found;
}

/** `a` owns `b`'s path or the other way round: one is the other, or a folder holding it. */
function overlap(a: string, b: string): boolean {
  return ownsPath([a], b) || ownsPath([b], a);
}

/**
 * Two pieces owning one path conflict when they can run at once (neither depends on the other):
 * refused. In one line of dependencies the later one builds on the earlier's merge: a warning.
 */
function sharedPaths(pieces: PlanPiece[]): { refused: string[]; warnings: string[] } {
  const before = ancestors(pieces);
  const refused: string[] = [];
  const warnings: string[] = [];
  for (let i = 0; i < pieces.length; i++) {
    for (let j = i + 1; j < pieces.length; j++) {
      const a = pieces[i]!;
      const b = pieces[j]!;
      const shared = a.paths.flatMap((pa) =>
        b.paths.filter((pb) => overlap(pa, pb)).map((pb) => (pa.length >= pb.length ? pa : pb)),
      );
      if (shared.length === 0) continue;
      const ordered = before.get(a.id)!.has(b.id) || before.get(b.id)!.has(a.id);
      const text = `pieces ${a.id} and ${b.id} both own ${[...new Set(shared)].join(', ')}`;
      if (ordered) warnings.push(`${text} (${a.id} and ${b.id} run one after the other)`);
      else refused.push(`${text}, and neither depends on the other: they would run at once and conflict`);
    }
  }
  return { refused, warnings };
}

/** Every piece's transitive dependencies (the plan has no cycle). */
function ancestors(pieces: PlanPiece[]): Map<string, Set<string>> {
  const byId = new Map(pieces.map((p) => [p.id, p]));
  const memo = new Map<string, Set<string>>();
  for (const p of inDependencyOrder(pieces)) {
    const all = new Set<string>();
    for (const d of p.depends_on) {
      all.add(d);
      for (const a of memo.get(d) ?? []) all.add(a);
    }
    if (byId.has(p.id)) memo.set(p.id, all);
  }
  return memo;
}

/** The pieces with each after the pieces it depends on, otherwise in the planner's order. */
export function inDependencyOrder(pieces: readonly PlanPiece[]): PlanPiece[] {
  const byId = new Map(pieces.map((p) => [p.id, p]));
  const placed = new Set<string>();
  const order: PlanPiece[] = [];
  const place = (root: PlanPiece) => {
    const stack: { piece: PlanPiece; next: number }[] = [{ piece: root, next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const dep = top.piece.depends_on[top.next++];
      if (dep === undefined) {
        stack.pop();
        if (!placed.has(top.piece.id)) {
          placed.add(top.piece.id);
          order.push(top.piece);
        }
        continue;
      }
      const next = byId.get(dep);
      if (next && !placed.has(dep) && !stack.some((f) => f.piece.id === dep))
        stack.push({ piece: next, next: 0 });
    }
  };
  for (const p of pieces) if (!placed.has(p.id)) place(p);
  return order;
}
