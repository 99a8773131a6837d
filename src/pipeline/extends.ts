import { didYouMean } from './closest.js';
import type { DiagnosticSink } from './diagnostics.js';
import { type LocatedAgent, positionOf } from './located-agent.js';
import type { RawAgent } from './schema.js';

/** What makes an agent itself: never taken from a parent. */
const NOT_INHERITED = new Set<string>(['id', 'name', 'abstract', 'extends']);

/**
 * Applies `extends` through any number of levels (aqm stopped at one: a grandparent's fields were
 * lost). Each level is a shallow merge of top-level keys in which the child wins. Agents in a
 * cycle or with an unknown parent are reported and left out; their ids go to `invalid`.
 */
export function resolveExtends(
  agents: LocatedAgent[],
  sink: DiagnosticSink,
  invalid: Set<string>,
): LocatedAgent[] {
  const byId = new Map(agents.map((a) => [a.raw.id, a]));
  const resolved = new Map<string, LocatedAgent | null>();

  const resolve = (agent: LocatedAgent, chain: readonly string[]): LocatedAgent | null => {
    const { id, extends: parentId } = agent.raw;
    const known = resolved.get(id);
    if (known !== undefined) return known;
    if (!parentId) return agent;
    let result: LocatedAgent | null = null;
    if (chain.includes(id)) {
      sink.error(
        positionOf(agent, 'extends'),
        `extends cycle: ${[...chain, id].join(' → ')}`,
        'an agent cannot inherit from itself: remove one `extends` of the cycle',
      );
    } else {
      const parent = byId.get(parentId);
      if (parent) {
        const base = resolve(parent, [...chain, id]);
        result = base && inherit(base, agent);
      } else if (!invalid.has(parentId)) {
        sink.error(
          positionOf(agent, 'extends'),
          `agent \`${id}\` extends unknown agent \`${parentId}\``,
          didYouMean(parentId, byId.keys()) ??
            'extends names the id of another agent of this pipeline or its imports',
        );
      }
    }
    if (!result) invalid.add(id);
    resolved.set(id, result);
    return result;
  };

  return agents.map((a) => resolve(a, [])).filter((a): a is LocatedAgent => a !== null);
}

function inherit(parent: LocatedAgent, child: LocatedAgent): LocatedAgent {
  const raw: Record<string, unknown> = { ...child.raw };
  const inherited = { ...child.inherited };
  for (const [key, value] of Object.entries(parent.raw)) {
    if (NOT_INHERITED.has(key) || key in child.raw) continue;
    raw[key] = value;
    inherited[key as keyof RawAgent] = parent.inherited[key as keyof RawAgent] ?? parent.at;
  }
  return { ...child, raw: raw as RawAgent, inherited };
}
