import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { api, type Stage, type TaskDetail } from './api';
import { useNow } from './app';
import { cost, duration, ENDED, elapsed, STATUS_LABEL, tokens } from './format';
import { IssueChip } from './issue-chip';
import { useEventStream, useThrottled } from './live';
import { type NodeState, PipelineGraph } from './pipeline-graph';
import { PlanSection } from './plan-graph';
import { Link, navigate } from './router';
import { ChunkBoard, SessionsView } from './task-sessions';

/** One task: its graph with the current agent lit, its stages as they stream, and what a person can do. */
export function TaskDetailPage(props: { id: string }) {
  const { id } = props;
  const [task, setTask] = useState<TaskDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** Output streamed since the task was last loaded (which brings each running stage's output so far). */
  const [streamed, setStreamed] = useState<Streamed[]>([]);
  const [streamFrom, setStreamFrom] = useState<number | null>(null);
  const now = useNow();

  const load = useCallback(() => {
    api
      .task(id)
      .then((t) => {
        setTask(t);
        setStreamed((chunks) => chunks.filter((c) => c.seq > t.last_seq));
        setError(null);
        setStreamFrom((s) => s ?? t.last_seq);
      })
      .catch((e: Error) => setError(e.message));
  }, [id]);
  useEffect(() => {
    setTask(null);
    setStreamed([]);
    setStreamFrom(null);
    load();
  }, [load]);
  const refresh = useThrottled(load, 250);
  useEventStream(
    streamFrom === null ? null : `/api/tasks/${encodeURIComponent(id)}/events?after=${streamFrom}`,
    (event) => {
      if (event.type === 'stage_output') {
        const { seq, stage, text } = event;
        setStreamed((chunks) => [...chunks, { seq, stage, text }]);
        return;
      }
      // a new attempt under the same number starts from nothing
      if (event.type === 'stage_started')
        setStreamed((chunks) => chunks.filter((c) => c.stage !== event.stage));
      // the task's view says what the event means (status, stages, waits): load it again
      refresh();
    },
  );

  if (error && !task)
    return (
      <div className="page">
        <p className="error-text" data-testid="task-error">
          {error}
        </p>
        <p>
          <Link to="/" testId="back-to-tasks">
            ← All tasks
          </Link>
        </p>
      </div>
    );
  if (!task)
    return (
      <div className="page">
        <p className="muted">Loading…</p>
      </div>
    );

  const stages = task.stages.filter((s): s is Stage => s !== null);
  const live = liveOutputs(stages, streamed, task.last_seq);
  const states = nodeStates(task, stages);
  const ended = ENDED.includes(task.status);

  return (
    <div className="page detail">
      <div className="detail-head card">
        <div className="crumbs">
          <Link to="/">Tasks</Link> / <span className="mono">{task.id}</span>
          {task.parent_task_id && (
            <>
              {' '}
              · fix of <Link to={`/tasks/${task.parent_task_id}`}>{task.parent_task_id}</Link>
            </>
          )}
        </div>
        <div className="title-row">
          <h1 title={task.input}>{firstLine(task.input)}</h1>
          <span className={`badge big ${task.status}`} data-testid="detail-status">
            {STATUS_LABEL[task.status]}
          </span>
        </div>
        <div className="facts">
          {task.issue && (
            <div className="fact">
              <span>Issue</span>
              <strong>
                <IssueChip issue={task.issue} />
              </strong>
            </div>
          )}
          <Fact label="Pipeline" value={task.pipeline} />
          <Fact label="Stages" value={String(stages.length)} />
          <Fact label="Elapsed" value={elapsed(task.created, task.updated, task.status, now)} />
          <Fact
            label="Tokens"
            value={`${tokens(task.usage)} (${task.usage.input_tokens} in / ${task.usage.output_tokens} out)`}
          />
          <Fact label="Cost" value={cost(task.usage)} />
        </div>
        {task.error && <p className="error-text">Failed: {task.error}</p>}
        {task.hint && <p className="muted">Hint: {task.hint}</p>}
        {task.cancel_reason && <p className="muted">Cancelled: {task.cancel_reason}</p>}
        {task.no_worker && (
          <p className="error-text" data-testid="no-worker">
            Not taken: {task.no_worker}
          </p>
        )}
        {task.parked && (
          <p className="error-text" data-testid="parked">
            Parked after {task.parked.failures} failed runs: {task.parked.reason}
          </p>
        )}
        <Actions task={task} stages={stages} ended={ended} onDone={refresh} />
      </div>

      <section className="card">
        <h2>Pipeline</h2>
        <div className="graph-wrap">
          <PipelineGraph graph={task.graph} states={states} />
        </div>
        <Legend />
      </section>

      {task.plan && <PlanSection plan={task.plan} />}

      <section className="card">
        <h2>Timeline</h2>
        {stages.length === 0 && <p className="empty">No stage has started yet.</p>}
        <ol className="timeline" data-testid="timeline">
          {stages.map((s) => (
            <StageItem key={s.n} stage={s} live={live[s.n]} now={now} />
          ))}
        </ol>
      </section>

      {task.chunks_enabled && <ChunkBoard taskId={task.id} chunks={task.chunks} onChange={refresh} />}

      {task.sessions.length > 0 && <SessionsView sessions={task.sessions} stages={stages} live={live} />}

      {task.sessions.length === 0 && task.transcript.trim() && (
        <section className="card">
          <h2>Session transcript</h2>
          <pre className="output transcript">{task.transcript}</pre>
        </section>
      )}

      {stages.length > 0 && (
        <section className="card">
          <h2>Usage by stage</h2>
          <table className="usage">
            <thead>
              <tr>
                <th>#</th>
                <th>Agent</th>
                <th className="num">In</th>
                <th className="num">Out</th>
                <th className="num">Cost</th>
                <th className="num">Time</th>
              </tr>
            </thead>
            <tbody>
              {stages.map((s) => (
                <tr key={s.n}>
                  <td>{s.n}</td>
                  <td>{s.agent}</td>
                  <td className="num">{s.usage.input_tokens}</td>
                  <td className="num">{s.usage.output_tokens}</td>
                  <td className="num">{cost(s.usage)}</td>
                  <td className="num">{s.duration_ms ? duration(s.duration_ms) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </div>
  );
}

function Fact(props: { label: string; value: string }) {
  return (
    <div className="fact">
      <span>{props.label}</span>
      <strong>{props.value}</strong>
    </div>
  );
}

function Legend() {
  return (
    <div className="legend">
      <span className="lg running">running</span>
      <span className="lg waiting">waiting for you</span>
      <span className="lg done">done</span>
      <span className="lg failed">failed</span>
    </div>
  );
}

function StageItem(props: { stage: Stage; live: string | undefined; now: number }) {
  const { stage: s } = props;
  const running = s.status === 'running';
  const text = running ? (props.live ?? s.output) : s.output;
  const ref = useRef<HTMLPreElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: follow the output as it grows
  useEffect(() => {
    if (running && ref.current) ref.current.scrollTop = ref.current.scrollHeight;
  }, [running, text]);
  return (
    <li className={`stage ${s.status}`} data-testid={`stage-${s.n}`}>
      <div className="stage-head">
        <span className="stage-n">{s.n}</span>
        <strong>{s.agent}</strong>
        {s.turn && <span className="tag">{s.turn.summary ? 'summary' : `round ${s.turn.round}`}</span>}
        {s.attempt > 1 && <span className="tag">attempt {s.attempt}</span>}
        {s.route && (
          <span
            className="tag"
            data-testid="stage-tier"
            title={`recommended ${s.route.recommended.tier}: ${s.route.recommended.reason}`}
          >
            {s.route.tier} · {s.route.model ?? s.route.runtime}
          </span>
        )}
        <span className={`badge ${s.status}`}>{s.status.replace('_', ' ')}</span>
        <span className="muted right">
          {running && s.started
            ? duration(props.now - Date.parse(s.started))
            : s.duration_ms
              ? duration(s.duration_ms)
              : ''}
          {' · '}
          {tokens(s.usage)} tok
        </span>
      </div>
      {s.error && (
        <p className="error-text">
          {s.error.kind}: {s.error.message}
        </p>
      )}
      {s.error?.hint && <p className="muted">Hint: {s.error.hint}</p>}
      {text ? (
        <pre ref={ref} className={`output ${running ? 'streaming' : ''}`} data-testid="stage-output">
          {text}
          {running && <span className="caret" />}
        </pre>
      ) : running ? (
        <p className="muted">working…</p>
      ) : null}
      {s.gate && (
        <div className={`verdict ${s.gate.decision}`} data-testid="gate-verdict">
          <strong>{s.gate.decision === 'approved' ? '✓ approved' : '✗ rejected'}</strong> by {s.gate.by}
          {s.gate.reason && <span> — {s.gate.reason}</span>}
        </div>
      )}
    </li>
  );
}

function Actions(props: { task: TaskDetail; stages: Stage[]; ended: boolean; onDone: () => void }) {
  const { task } = props;
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [from, setFrom] = useState(1);
  const act = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      setText('');
      props.onDone();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const submitAnswer = (e: FormEvent) => {
    e.preventDefault();
    void act(() => api.answer(task.id, text));
  };
  const waiting = task.waiting;
  const gone = task.owner && !task.owner.alive ? task.owner : null;
  return (
    <div className="actions">
      {gone && (
        <div className="ask" data-testid="owner-gone">
          <p>
            Process {gone.pid} on host {gone.host} is gone: nothing runs this task.
          </p>
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => act(() => api.resume(task.id))}
            data-testid="resume"
          >
            Resume
          </button>
        </div>
      )}
      {task.status === 'parked' && (
        <div className="ask" data-testid="parked-ask">
          <p>Its runs kept failing, so no worker takes it up until you resume it.</p>
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => act(() => api.resume(task.id))}
            data-testid="resume-parked"
          >
            Resume
          </button>
        </div>
      )}
      {task.mail_failed.length > 0 && (
        <div className="ask" data-testid="mail-failed">
          {task.mail_failed.map((f) => (
            <p key={`${f.at}-${f.to}-${f.kind}`}>
              Mail to <strong>{f.to}</strong> not delivered ({f.kind}: {f.subject}): {f.reason}
            </p>
          ))}
        </div>
      )}
      {waiting?.kind === 'gate' && (
        <div className="ask" data-testid="gate-actions">
          <p>
            <strong>{waiting.agent}</strong> waits for your approval of stage {waiting.stage}.
          </p>
          <div className="ask-row">
            <input
              value={text}
              onChange={(e) => setText(e.target.value)}
              placeholder="Reason (required to reject)"
              data-testid="gate-reason"
            />
            <button
              type="button"
              className="approve"
              disabled={busy}
              onClick={() => act(() => api.approve(task.id, text))}
              data-testid="approve"
            >
              Approve
            </button>
            <button
              type="button"
              className="reject"
              disabled={busy || !text.trim()}
              onClick={() => act(() => api.reject(task.id, text))}
              data-testid="reject"
            >
              Reject
            </button>
          </div>
        </div>
      )}
      {waiting?.kind === 'question' && (
        <form className="ask" onSubmit={submitAnswer} data-testid="question-actions">
          <p>
            <strong>{waiting.agent}</strong> asks: {waiting.questions.join(' / ')}
          </p>
          <div className="ask-row">
            <input
              value={text}
              onChange={(e) => setText(e.target.value)}
              placeholder="Your answer"
              data-testid="answer-input"
            />
            <button type="submit" className="primary" disabled={busy || !text.trim()} data-testid="answer">
              Answer
            </button>
          </div>
        </form>
      )}
      <div className="secondary-actions">
        {!props.ended && (
          <button
            type="button"
            disabled={busy}
            onClick={() => act(() => api.cancel(task.id, 'cancelled from the dashboard'))}
            data-testid="cancel"
          >
            Cancel task
          </button>
        )}
        {props.stages.length > 0 && props.ended && (
          <span className="inline">
            <select
              value={from}
              onChange={(e) => setFrom(Number(e.target.value))}
              aria-label="restart from stage"
            >
              {props.stages.map((s) => (
                <option key={s.n} value={s.n}>
                  stage {s.n} · {s.agent}
                </option>
              ))}
            </select>
            <button type="button" disabled={busy} onClick={() => act(() => api.restart(task.id, from))}>
              Restart from here
            </button>
          </span>
        )}
        {props.ended && (
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              const request = window.prompt('What should the follow-up fix?');
              if (request)
                void act(async () => navigate(`/tasks/${(await api.fix(task.id, request)).task_id}`));
            }}
          >
            Follow-up fix…
          </button>
        )}
      </div>
      {error && <p className="error-text">{error}</p>}
    </div>
  );
}

interface Streamed {
  seq: number;
  stage: number;
  text: string;
}

/** Each running stage's output: what the task view brought, and what streamed in after it. */
function liveOutputs(stages: Stage[], streamed: Streamed[], loadedAt: number): Record<number, string> {
  const outputs: Record<number, string> = {};
  for (const s of stages) if (s.status === 'running') outputs[s.n] = s.output;
  for (const c of streamed) {
    if (c.seq > loadedAt && outputs[c.stage] !== undefined) outputs[c.stage] += c.text;
  }
  return outputs;
}

function nodeStates(task: TaskDetail, stages: Stage[]): Record<string, NodeState> {
  const states: Record<string, NodeState> = {};
  for (const s of stages) {
    // a stage cut off by a cancel did not get done: its node is left as if it never ran
    states[s.agent] =
      s.status === 'failed'
        ? 'failed'
        : s.status === 'running'
          ? 'running'
          : s.status === 'cancelled'
            ? 'idle'
            : 'done';
  }
  for (const agent of task.running_agents) states[agent] = 'running';
  if (task.waiting) states[task.waiting.agent] = 'waiting';
  return states;
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}
