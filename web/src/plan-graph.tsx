import type { TaskDetail } from './api';
import { cost, tokens } from './format';
import './plan-graph.css';

type Plan = NonNullable<TaskDetail['plan']>;
type Piece = Plan['pieces'][number];

const W = 214;
const H = 88;
const GAP_X = 64;
const GAP_Y = 20;
const PAD = 14;

const STATUSES: Piece['status'][] = ['waiting', 'ready', 'running', 'merging', 'merged', 'failed'];

/**
 * A planner's plan as the task graph it expanded into (docs/task-graphs.md): each piece a node in
 * the column of its depth, an edge from each piece it depends on, coloured by where it is, with
 * its worker's stages, the verifier's verdict, its tier, what it used and its diff. The task page
 * loads the task again at each of its events, so the graph follows the run.
 */
export function PlanSection(props: { plan: Plan }) {
  const { plan } = props;
  const counts = STATUSES.map((s) => [s, plan.pieces.filter((p) => p.status === s).length] as const).filter(
    ([, n]) => n > 0,
  );
  return (
    <section className="card" data-testid="plan">
      <h2>Plan</h2>
      <p className="muted">
        Round {plan.round} by <strong>{plan.planner}</strong>
        {plan.worker && (
          <>
            {' '}
            · built by <strong>{plan.pipeline ? `pipeline ${plan.pipeline}` : plan.worker}</strong>
          </>
        )}
        {plan.verifier && (
          <>
            , verified by <strong>{plan.verifier}</strong>
          </>
        )}{' '}
        · {plan.pieces.length} pieces: {counts.map(([s, n]) => `${n} ${s}`).join(', ')}
      </p>
      {plan.warnings.length > 0 && (
        <ul className="plan-warnings" data-testid="plan-warnings">
          {plan.warnings.map((w) => (
            <li key={w}>⚠ {w}</li>
          ))}
        </ul>
      )}
      <div className="graph-wrap">
        <PlanGraph plan={plan} />
      </div>
      <div className="legend plan-legend">
        {STATUSES.map((s) => (
          <span key={s} className={`lg piece-${s}`}>
            {s}
          </span>
        ))}
      </div>
    </section>
  );
}

function PlanGraph(props: { plan: Plan }) {
  const { pieces } = props.plan;
  if (pieces.length === 0) return <p className="empty">No pieces.</p>;
  const byLevel = new Map<number, Piece[]>();
  for (const p of pieces) byLevel.set(p.level, [...(byLevel.get(p.level) ?? []), p]);
  const levels = [...byLevel.keys()].sort((a, b) => a - b);
  const tallest = Math.max(...[...byLevel.values()].map((ps) => ps.length));
  const height = PAD * 2 + tallest * H + (tallest - 1) * GAP_Y;
  const width = PAD * 2 + levels.length * W + (levels.length - 1) * GAP_X;
  const pos = new Map<string, { x: number; y: number }>();
  levels.forEach((level, column) => {
    const inColumn = byLevel.get(level)!;
    const top = (height - (inColumn.length * H + (inColumn.length - 1) * GAP_Y)) / 2;
    inColumn.forEach((p, row) => {
      pos.set(p.id, { x: PAD + column * (W + GAP_X), y: top + row * (H + GAP_Y) });
    });
  });
  const edges = pieces.flatMap((p) => p.depends_on.map((from) => ({ from, to: p.id })));

  return (
    <svg
      className="graph plan-graph"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      role="img"
      aria-label="plan graph"
      data-testid="plan-graph"
    >
      <defs>
        <marker
          id="plan-arrow"
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
      {edges.map(({ from, to }) => {
        const a = pos.get(from);
        const b = pos.get(to);
        if (!a || !b) return null;
        const sx = a.x + W;
        const sy = a.y + H / 2;
        const tx = b.x - 2;
        const ty = b.y + H / 2;
        const mx = (sx + tx) / 2;
        return (
          <g key={`${from}-${to}`} className="edge" data-testid={`plan-edge-${from}-${to}`}>
            <path d={`M${sx},${sy} C${mx},${sy} ${mx},${ty} ${tx},${ty}`} markerEnd="url(#plan-arrow)" />
          </g>
        );
      })}
      {pieces.map((p) => (
        <PieceNode
          key={p.id}
          piece={p}
          at={pos.get(p.id)!}
          worker={props.plan.worker}
          verifier={props.plan.verifier}
        />
      ))}
    </svg>
  );
}

function PieceNode(props: {
  piece: Piece;
  at: { x: number; y: number };
  worker: string | null;
  verifier: string | null;
}) {
  const { piece: p, at } = props;
  const verdict = p.verdict
    ? `${p.verdict.decision === 'approved' ? '✓' : '✗'} ${props.verifier ?? p.verdict.by}`
    : null;
  const work = [
    p.stages.length > 0 ? `${props.worker ?? 'stage'} ${p.stages.map((n) => `#${n}`).join(' ')}` : null,
    verdict,
  ]
    .filter(Boolean)
    .join(' · ');
  const used = [
    p.tier ? `${p.tier.tier}${p.tier.model ? ` (${p.tier.model})` : ''}` : null,
    p.stages.length > 0 ? `${tokens(p.usage)} tok` : null,
    p.usage.cost_usd ? cost(p.usage) : null,
  ]
    .filter(Boolean)
    .join(' · ');
  const diff = p.diff
    ? p.diff.files === 0
      ? 'no changes'
      : `${p.diff.files} file${p.diff.files === 1 ? '' : 's'} +${p.diff.insertions} −${p.diff.deletions}`
    : null;
  const flags = [diff, p.outside.length > 0 ? `⚠ ${p.outside.length} outside` : null]
    .filter(Boolean)
    .join(' · ');
  const title = [
    `${p.id}: ${p.goal}`,
    `status: ${p.status}`,
    p.paths.length > 0 ? `paths: ${p.paths.join(', ')}` : null,
    p.depends_on.length > 0 ? `after: ${p.depends_on.join(', ')}` : null,
    p.branch ? `branch: ${p.branch}` : null,
    p.verdict?.reason ? `verdict: ${p.verdict.reason}` : null,
    p.outside.length > 0 ? `wrote outside its paths: ${p.outside.join(', ')}` : null,
    p.failure ? `failed: ${p.failure.reason}` : null,
  ]
    .filter(Boolean)
    .join('\n');
  return (
    <g
      transform={`translate(${at.x},${at.y})`}
      className={`node piece piece-${p.status}`}
      data-testid={`piece-${p.id}`}
      data-status={p.status}
    >
      <title>{title}</title>
      <rect width={W} height={H} rx={9} />
      <text x={12} y={20} className="node-id">
        {clip(p.id, 18)}
      </text>
      <text x={W - 12} y={20} textAnchor="end" className="piece-status">
        {p.status}
      </text>
      <text x={12} y={38} className="node-sub" data-testid="piece-work">
        {clip(work || (p.status === 'waiting' ? `after ${p.depends_on.join(', ')}` : p.goal), 32)}
      </text>
      <text x={12} y={55} className="node-sub" data-testid="piece-used">
        {clip(used, 32)}
      </text>
      <text
        x={12}
        y={72}
        className={`node-sub ${p.failure || p.outside.length > 0 ? 'piece-flag' : ''}`}
        data-testid="piece-diff"
      >
        {clip(p.failure ? `✗ ${p.failure.reason}` : flags, 32)}
      </text>
    </g>
  );
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
