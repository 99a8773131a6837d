import type { Pipeline } from '../core/pipeline.js';

/** A pipeline's agents and handoffs drawn as text or as a Mermaid flowchart (`troupe agents`, `pipeline create`). */

/** What `troupe agents --format` prints: a drawing, or the agents as JSON. */
export const AGENT_GRAPH_FORMATS = ['text', 'mermaid', 'json'] as const;

export function text(pipeline: Pipeline): string {
  const lines = [`${pipeline.name} (${pipeline.file})`];
  for (const node of pipeline.agents) {
    const what =
      node.type === 'session'
        ? `session [${node.participants.join(', ')}]${node.summary_agent ? ` summary: ${node.summary_agent}` : ''}`
        : `${node.runtime}${node.model ? `/${node.model}` : ''}${node.gate ? `  gate: ${node.gate.type}` : ''}`;
    lines.push(`${node.id}  ${what}`);
    for (const h of node.handoffs) lines.push(`  → ${h.to.join(', ')} (${h.condition})`);
  }
  return `${lines.join('\n')}\n`;
}

export function mermaid(pipeline: Pipeline): string {
  const lines = ['flowchart TD'];
  for (const node of pipeline.agents) {
    const label = node.type === 'session' ? `${node.id} (session)` : `${node.id}<br/>${node.runtime}`;
    lines.push(node.type === 'session' ? `  ${node.id}{{"${label}"}}` : `  ${node.id}["${label}"]`);
    if (node.type === 'session') for (const p of node.participants) lines.push(`  ${node.id} -.- ${p}`);
    for (const h of node.handoffs) {
      for (const to of h.to) {
        const target = to === '*' ? 'any' : to;
        lines.push(
          h.condition === 'always'
            ? `  ${node.id} --> ${target}`
            : `  ${node.id} -->|${h.condition.replace(/"/g, "'")}| ${target}`,
        );
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
