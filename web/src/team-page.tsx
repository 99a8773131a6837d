import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { BUS_KINDS, BUS_PRIORITIES } from '../../src/core/bus-vocabulary';
import { api, type BusMessage, type BusMessageDetail, type BusSend, type Roster } from './api';
import { useNow } from './app';
import { ago } from './format';
import { WorkersSection } from './workers-section';

/** How often the roster and the inbox are read again: the bus is files, not the event log. */
const POLL_MS = 3000;

/** The message bus as the person `user` sees it: who is around, the inbox, a message, compose. */
export function TeamPage() {
  const [session, setSession] = useState('');
  const [roster, setRoster] = useState<Roster | null>(null);
  const [inbox, setInbox] = useState<BusMessage[]>([]);
  const [open, setOpen] = useState<BusMessageDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const now = useNow();

  const load = useCallback(() => {
    Promise.all([api.roster(session), api.inbox('user', session)])
      .then(([r, i]) => {
        setRoster(r);
        setInbox(i.messages);
        setError(null);
      })
      .catch((e: Error) => setError(e.message));
  }, [session]);
  useEffect(() => {
    load();
    const timer = window.setInterval(load, POLL_MS);
    return () => window.clearInterval(timer);
  }, [load]);

  const show = (id: string) =>
    api
      .message('user', id, session)
      .then((m) => {
        setOpen(m);
        load();
      })
      .catch((e: Error) => setError(e.message));

  const agents = (roster?.agents ?? []).filter((a) => a.kind === 'agent').map((a) => a.handle);
  const unread = inbox.filter((m) => !m.read).length;

  return (
    <div className="page">
      <section className="card">
        <div className="toolbar">
          <h2>Team</h2>
          {roster && roster.sessions.length > 0 && (
            <select
              value={session || roster.session || ''}
              onChange={(e) => {
                setSession(e.target.value);
                setOpen(null);
              }}
              aria-label="session"
              data-testid="bus-session"
            >
              {!roster.sessions.includes(roster.session ?? '') && <option value="">base root</option>}
              {roster.sessions.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          )}
          <span className="spacer" />
          <span className="muted mono small">{roster?.root}</span>
        </div>
        {error && <p className="error-text">{error}</p>}
        {roster && roster.agents.length === 0 && (
          <p className="empty">No mailboxes here. Set the bus up with `troupe bus setup`.</p>
        )}
        {roster && roster.agents.length > 0 && (
          <table className="tasks" data-testid="roster">
            <thead>
              <tr>
                <th>Handle</th>
                <th>Presence</th>
                <th className="wide">Status</th>
                <th>Wake</th>
                <th className="num">Unread</th>
                <th className="num">Read</th>
                <th className="num">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {roster.agents.map((a) => (
                <tr key={a.handle} data-testid={`roster-${a.handle}`} data-presence={a.presence}>
                  <td className="mono">{a.handle}</td>
                  <td>
                    <span className={`badge presence-${a.presence}`}>{a.presence}</span>
                  </td>
                  <td className="wide ellipsis">
                    {a.status}
                    {a.note ? <span className="muted"> · {a.note}</span> : null}
                  </td>
                  <td>{a.wake ? <span className={`tag wake-${a.wake}`}>wake {a.wake}</span> : ''}</td>
                  <td className="num">{a.backlog.new}</td>
                  <td className="num">{a.backlog.cur}</td>
                  <td className="num">{a.last_seen ? ago(a.last_seen, now) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <WorkersSection now={now} />

      <div className="bus-columns">
        <section className="card">
          <h2>Inbox {unread > 0 && <span className="count">{unread}</span>}</h2>
          {inbox.length === 0 && <p className="empty">No mail for you.</p>}
          <ul className="inbox" data-testid="inbox">
            {inbox.map((m) => (
              <li key={m.id}>
                <button
                  type="button"
                  className={`inbox-row ${m.read ? '' : 'unread'} ${open?.id === m.id ? 'on' : ''}`}
                  onClick={() => show(m.id)}
                  data-testid={`inbox-${m.id}`}
                  data-read={m.read}
                >
                  <span className="mono">{m.from}</span>
                  <span className="inbox-subject" title={m.subject}>
                    {m.subject || '(no subject)'}
                  </span>
                  {m.priority === 'urgent' && <span className="badge failed">urgent</span>}
                  {m.kind && <span className="tag">{m.kind}</span>}
                  <span className="muted small">{ago(m.created, now)}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
        <section className="card">
          {open ? (
            <MessageView key={open.id} message={open} session={session} onReplied={load} />
          ) : (
            <Compose agents={agents} session={session} onSent={load} />
          )}
        </section>
      </div>
      {open && (
        <section className="card">
          <Compose agents={agents} session={session} onSent={load} />
        </section>
      )}
    </div>
  );
}

function MessageView(props: { message: BusMessageDetail; session: string; onReplied: () => void }) {
  const { message } = props;
  const [body, setBody] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      const sent = await api.reply({ id: message.id, body }, props.session);
      setBody('');
      setNote(`replied to ${sent.to.join(', ')} on ${sent.thread}`);
      props.onReplied();
    } catch (err) {
      setNote((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div data-testid="message">
      <h2>{message.subject || '(no subject)'}</h2>
      <p className="muted small">
        from <strong className="mono">{message.from}</strong> to {message.to.join(', ')} · thread{' '}
        <span className="mono">{message.thread}</span>
        {message.kind ? ` · ${message.kind}` : ''}
        {message.priority ? ` · ${message.priority}` : ''}
      </p>
      <pre className="output" data-testid="message-body">
        {message.body}
      </pre>
      <form onSubmit={submit} className="field">
        <span>Reply</span>
        <textarea value={body} onChange={(e) => setBody(e.target.value)} rows={3} data-testid="reply-body" />
        <div className="run-actions">
          {note && <span className="muted small">{note}</span>}
          <button
            type="submit"
            className="primary"
            disabled={busy || !body.trim()}
            data-testid="reply-submit"
          >
            Reply
          </button>
        </div>
      </form>
    </div>
  );
}

function Compose(props: { agents: string[]; session: string; onSent: () => void }) {
  const [to, setTo] = useState('');
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  const [priority, setPriority] = useState<NonNullable<BusSend['priority']>>('normal');
  const [kind, setKind] = useState<BusSend['kind'] | ''>('');
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      const handles = to
        .split(/[\s,]+/)
        .map((h) => h.trim())
        .filter(Boolean);
      const sent = await api.send(
        { to: handles, subject, body, priority, ...(kind ? { kind } : {}) },
        props.session,
      );
      setSubject('');
      setBody('');
      setNote(`sent to ${sent.to.join(', ')}`);
      props.onSent();
    } catch (err) {
      setNote((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} data-testid="compose">
      <h2>New message</h2>
      <div className="run-row">
        <label className="field grow">
          <span>To (handles, comma-separated)</span>
          <input
            value={to}
            onChange={(e) => setTo(e.target.value)}
            placeholder={props.agents.join(', ')}
            list="bus-agents"
            data-testid="compose-to"
          />
          <datalist id="bus-agents">
            {props.agents.map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
        </label>
        <label className="field">
          <span>Priority</span>
          <select
            value={priority}
            onChange={(e) => setPriority(e.target.value as typeof priority)}
            data-testid="compose-priority"
          >
            {BUS_PRIORITIES.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Kind</span>
          <select value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
            <option value="">—</option>
            {BUS_KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
      </div>
      <label className="field">
        <span>Subject</span>
        <input value={subject} onChange={(e) => setSubject(e.target.value)} data-testid="compose-subject" />
      </label>
      <label className="field">
        <span>Message</span>
        <textarea
          value={body}
          onChange={(e) => setBody(e.target.value)}
          rows={4}
          data-testid="compose-body"
        />
      </label>
      <div className="run-actions">
        {note && (
          <span className="muted small" data-testid="compose-note">
            {note}
          </span>
        )}
        <button
          type="submit"
          className="primary"
          disabled={busy || !to.trim() || !body.trim()}
          data-testid="compose-submit"
        >
          Send
        </button>
      </div>
    </form>
  );
}
