import type { Graph } from './api';

export type NodeState = 'running' | 'waiting' | 'done' | 'failed' | 'idle';

const W = 150;
const H = 48;
const GAP_X = 70;
const GAP_Y = 26;
const PAD = 16;

/**
 * The pipeline as a left-to-right graph: each agent in the column of its shortest handoff
 * distance from the entry; edges back to an earlier column (reject loops) curve underneath.
 */
export function PipelineGraph(props: { graph: Graph; states?: Record<string, NodeState> }) {
  const { nodes, edges } = props.graph;
  if (nodes.length === 0) return <p className="empty">No agents.</p>;
  const column = layers(props.graph);
  const byColumn = new Map<number, string[]>();
  for (const n of nodes) {
    const c = column.get(n.id) ?? 0;
    byColumn.set(c, [...(byColumn.get(c) ?? []), n.id]);
  }
  const tallest = Math.max(...[...byColumn.values()].map((ids) => ids.length));
  const height = PAD * 2 + tallest * H + (tallest - 1) * GAP_Y + 28;
  const pos = new Map<string, { x: number; y: number }>();
  for (const [c, ids] of byColumn) {
    const total = ids.length * H + (ids.length - 1) * GAP_Y;
    const top = (height - 28 - total) / 2;
    ids.forEach((id, i) => {
      pos.set(id, { x: PAD + c * (W + GAP_X), y: top + i * (H + GAP_Y) });
    });
  }
  const columns = Math.max(...column.values()) + 1;
  const width = PAD * 2 + columns * W + (columns - 1) * GAP_X;

  return (
    <svg
      className="graph"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      role="img"
      aria-label="pipeline graph"
      data-testid="pipeline-graph"
    >
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="9"
          refY="5"
          markerWidth="7"
          markerHeight="7"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" className="arrowhead" />
        </marker>
      </defs>
      {edges.map((e) => {
        const a = pos.get(e.from);
        const b = pos.get(e.to);
        if (!a || !b) return null;
        const back = (column.get(e.to) ?? 0) <= (column.get(e.from) ?? 0) && e.from !== e.to;
        let d: string;
        let lx: number;
        let ly: number;
        if (e.from === e.to) {
          d = `M${a.x + W - 30},${a.y + H} c0,26 -50,26 -50,0`;
          lx = a.x + W - 55;
          ly = a.y + H + 24;
        } else if (back) {
          const sx = a.x + W / 2;
          const tx = b.x + W / 2;
          const bottom = Math.max(a.y, b.y) + H + 22;
          d = `M${sx},${a.y + H} C${sx},${bottom} ${tx},${bottom} ${tx},${b.y + H + 2}`;
          lx = (sx + tx) / 2;
          ly = bottom - 4;
        } else {
          const sx = a.x + W;
          const sy = a.y + H / 2;
          const tx = b.x - 2;
          const ty = b.y + H / 2;
          const mx = (sx + tx) / 2;
          d = `M${sx},${sy} C${mx},${sy} ${mx},${ty} ${tx},${ty}`;
          lx = mx;
          ly = (sy + ty) / 2 - 6;
        }
        const label = e.kind === 'participant' ? '' : e.condition === 'always' ? '' : e.condition;
        return (
          <g key={`${e.from}-${e.to}-${e.condition}`} className={`edge ${e.kind} ${back ? 'back' : ''}`}>
            <path d={d} markerEnd="url(#arrow)" />
            {label && (
              <text x={lx} y={ly} textAnchor="middle">
                {label.length > 22 ? `${label.slice(0, 21)}…` : label}
              </text>
            )}
          </g>
        );
      })}
      {nodes.map((n) => {
        const p = pos.get(n.id)!;
        const state = props.states?.[n.id] ?? 'idle';
        return (
          <g
            key={n.id}
            transform={`translate(${p.x},${p.y})`}
            className={`node ${n.type} ${state}`}
            data-testid={`node-${n.id}`}
            data-state={state}
          >
            <title>{`${n.name}${n.runtime ? ` · ${n.runtime}` : ''}${n.gate ? ` · ${n.gate} gate` : ''}`}</title>
            <rect width={W} height={H} rx={n.type === 'session' ? 22 : 9} />
            <text x={12} y={20} className="node-id">
              {n.id.length > 17 ? `${n.id.slice(0, 16)}…` : n.id}
            </text>
            <text x={12} y={37} className="node-sub">
              {n.type === 'session' ? `session · ${n.participants.length}` : (n.runtime ?? '')}
              {n.gate ? ` · ${n.gate} gate` : ''}
              {n.human_input ? ' · asks' : ''}
            </text>
            {state !== 'idle' && <circle cx={W - 14} cy={14} r={5} className="dot" />}
          </g>
        );
      })}
    </svg>
  );
}

function layers(graph: Graph): Map<string, number> {
  const column = new Map<string, number>();
  const first = graph.nodes[0]?.id;
  if (!first) return column;
  const queue = [first];
  column.set(first, 0);
  while (queue.length) {
    const id = queue.shift()!;
    for (const e of graph.edges) {
      if (e.from !== id || column.has(e.to)) continue;
      column.set(e.to, column.get(id)! + 1);
      queue.push(e.to);
    }
  }
  // agents no handoff reaches (entry points of their own, session participants) share a column
  const rest = Math.max(...column.values()) + 1;
  for (const n of graph.nodes) if (!column.has(n.id)) column.set(n.id, rest);
  return column;
}
