import { type FormEvent, useState } from 'react';
import { api, type Chunk, type Session, type Stage } from './api';

/** Sessions round by round: each speaker's message, who voted to agree, and how it ended. */
export function SessionsView(props: { sessions: Session[]; stages: Stage[]; live: Record<number, string> }) {
  const byN = new Map(props.stages.map((s) => [s.n, s]));
  const message = (n: number) => {
    const stage = byN.get(n);
    if (!stage) return { text: '', running: false };
    const running = stage.status === 'running';
    return { text: running ? (props.live[n] ?? stage.output) : stage.output, running };
  };
  return (
    <>
      {props.sessions.map((session) => (
        <section
          className="card"
          key={`${session.activation}:${session.stage ?? 'open'}`}
          data-testid="session"
        >
          <div className="toolbar">
            <h2>Session · {session.session}</h2>
            <span className="muted">{session.participants.join(', ')}</span>
            <div className="spacer" />
            <span
              className={`badge ${session.outcome === 'consensus' ? 'completed' : session.outcome ? 'failed' : 'running'}`}
              data-testid="session-outcome"
            >
              {session.outcome === 'consensus'
                ? `consensus after ${session.rounds.length} round${session.rounds.length === 1 ? '' : 's'}`
                : session.outcome === 'no_consensus'
                  ? `no consensus after ${session.rounds.length} rounds`
                  : 'in progress'}
            </span>
          </div>
          <ol className="rounds">
            {session.rounds.map((round) => (
              <li key={round.round} className="round" data-testid={`round-${round.round}`}>
                <div className="round-head">
                  <strong>Round {round.round}</strong>
                  {round.agreed !== null && (
                    <span className="muted" data-testid="round-votes">
                      {round.agreed.length
                        ? `agreed: ${round.agreed.join(', ')} (${round.agreed.length}/${session.participants.length})`
                        : 'nobody agreed yet'}
                      {round.consensus ? ' · consensus' : ''}
                    </span>
                  )}
                </div>
                {round.turns.map((turn) => {
                  const m = message(turn.stage);
                  return (
                    <div className="turn" key={turn.stage} data-testid={`turn-${round.round}-${turn.agent}`}>
                      <div className="turn-head">
                        <strong>{turn.agent}</strong>
                        <span className="muted small">stage {turn.stage}</span>
                        {turn.agreed === true && <span className="vote yes">✓ agrees</span>}
                        {turn.agreed === false && <span className="vote no">not yet</span>}
                      </div>
                      {m.text ? (
                        <pre className={`output ${m.running ? 'streaming' : ''}`}>{m.text}</pre>
                      ) : (
                        <p className="muted">{m.running ? 'speaking…' : ''}</p>
                      )}
                    </div>
                  );
                })}
              </li>
            ))}
          </ol>
          {session.summary && (
            <div className="turn summary" data-testid="session-summary">
              <div className="turn-head">
                <strong>{session.summary.agent}</strong>
                <span className="tag">summary</span>
              </div>
              <pre className="output">{message(session.summary.stage).text}</pre>
            </div>
          )}
          {session.outcome && session.output && !session.summary && (
            <div className="turn summary">
              <div className="turn-head">
                <strong>Outcome</strong>
              </div>
              <pre className="output">{session.output}</pre>
            </div>
          )}
        </section>
      ))}
    </>
  );
}

/** The task's chunks: pending and done, with add, mark done and remove. */
export function ChunkBoard(props: { taskId: string; chunks: Chunk[]; onChange: () => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const act = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      props.onChange();
      return true;
    } catch (e) {
      setError((e as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const add = async (e: FormEvent) => {
    e.preventDefault();
    if (await act(() => api.addChunk(props.taskId, text.trim()))) setText('');
  };
  const open = props.chunks.filter((c) => c.status !== 'done');
  const done = props.chunks.filter((c) => c.status === 'done');
  const card = (c: Chunk) => (
    <li key={c.id} className={`chunk ${c.status}`} data-testid={`chunk-${c.id}`}>
      <div className="chunk-head">
        <span className="mono small">{c.id}</span>
        {c.status === 'in_progress' && <span className="tag">in progress</span>}
        <span className="muted small right">
          {c.status === 'done' ? `done by ${c.completed_by ?? '?'}` : `by ${c.created_by}`}
        </span>
      </div>
      <div className="chunk-text">{c.description}</div>
      <div className="chunk-actions">
        {c.status !== 'done' && (
          <button
            type="button"
            disabled={busy}
            onClick={() => act(() => api.chunkDone(props.taskId, c.id))}
            data-testid={`chunk-done-${c.id}`}
          >
            Done
          </button>
        )}
        <button
          type="button"
          disabled={busy}
          onClick={() => act(() => api.removeChunk(props.taskId, c.id))}
          data-testid={`chunk-remove-${c.id}`}
        >
          Remove
        </button>
      </div>
    </li>
  );
  return (
    <section className="card" data-testid="chunk-board">
      <div className="toolbar">
        <h2>Chunks</h2>
        <span className="muted">
          {done.length}/{props.chunks.length} done
        </span>
      </div>
      <div className="board">
        <div className="column">
          <h3>To do · {open.length}</h3>
          <ul data-testid="chunks-pending">{open.map(card)}</ul>
          <form className="ask-row" onSubmit={add}>
            <input
              value={text}
              onChange={(e) => setText(e.target.value)}
              placeholder="Add a chunk of work"
              data-testid="chunk-input"
            />
            <button type="submit" className="primary" disabled={busy || !text.trim()} data-testid="chunk-add">
              Add
            </button>
          </form>
        </div>
        <div className="column">
          <h3>Done · {done.length}</h3>
          <ul data-testid="chunks-done">{done.map(card)}</ul>
        </div>
      </div>
      {error && <p className="error-text">{error}</p>}
    </section>
  );
}
