import { type FormEvent, useEffect, useState } from 'react';
import { RUNTIME_NAMES } from '../../src/core/runtimes';
import { AGENT_FORM_OPTIONS as OPTIONS } from './agent-form-options';
import { type AgentFields, type AgentSaved, ApiError, api, type Diagnostic, type RawAgent } from './api';

interface HandoffRow {
  to: string;
  condition: string;
  /** The rest of the handoff as written (task, payload), kept as it was. */
  rest: Record<string, unknown>;
}

interface AgentFormValues {
  id: string;
  name: string;
  runtime: string;
  model: string;
  system_prompt: string;
  handoffs: HandoffRow[];
  gate_type: string;
  gate_prompt: string;
  gate_max_retries: string;
  context_strategy: string;
  human_input: string;
}

const EMPTY: AgentFormValues = {
  id: '',
  name: '',
  runtime: 'claude',
  model: '',
  system_prompt: '',
  handoffs: [],
  gate_type: '',
  gate_prompt: '',
  gate_max_retries: '',
  context_strategy: '',
  human_input: '',
};

const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

function fromRaw(raw: RawAgent): AgentFormValues {
  const gate = record(raw.gate);
  const hi = raw.human_input;
  return {
    id: raw.id,
    name: text(raw.name),
    runtime: text(raw.runtime),
    model: text(raw.model),
    system_prompt: text(raw.system_prompt),
    handoffs: (Array.isArray(raw.handoffs) ? raw.handoffs : []).map((h) => {
      const { to, condition, ...rest } = record(h);
      return { to: text(to), condition: text(condition), rest };
    }),
    gate_type: raw.gate ? text(gate.type) || 'llm' : '',
    gate_prompt: text(gate.prompt),
    gate_max_retries: text(gate.max_retries),
    context_strategy: text(raw.context_strategy),
    human_input:
      hi === true
        ? 'on_demand'
        : typeof hi === 'string'
          ? hi
          : hi
            ? text(record(hi).mode) || 'on_demand'
            : '',
  };
}

/** The request fields from the form; the agent as written supplies what the form does not show. */
function toRequest(v: AgentFormValues, raw: RawAgent | null): AgentFields & { id: string } {
  const gate = record(raw?.gate);
  const hi = record(raw?.human_input);
  return {
    id: v.id.trim(),
    name: v.name.trim() || null,
    runtime: v.runtime || null,
    model: v.model.trim() || null,
    system_prompt: v.system_prompt || null,
    handoffs: v.handoffs
      .filter((h) => h.to.trim())
      .map((h) => ({ ...h.rest, to: h.to.trim(), condition: h.condition.trim() || null })),
    gate: v.gate_type
      ? {
          ...gate,
          type: v.gate_type,
          prompt: v.gate_prompt || null,
          max_retries: v.gate_max_retries ? Number(v.gate_max_retries) : null,
        }
      : null,
    context_strategy: v.context_strategy || null,
    human_input: v.human_input ? (hi.prompt ? { ...hi, mode: v.human_input } : v.human_input) : null,
  };
}

/** The pipeline's agents with a form to add, edit or remove one: the YAML is edited for you. */
export function AgentsPanel(props: {
  pipeline: string;
  /** The YAML editor has unsaved changes: the form would write over them. */
  blocked: boolean;
  version: string;
  onSaved: (saved: AgentSaved) => void;
}) {
  const [agents, setAgents] = useState<RawAgent[]>([]);
  const [editing, setEditing] = useState<RawAgent | 'new' | null>(null);
  const [error, setError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the file changes
  useEffect(() => {
    api.agents(props.pipeline).then(setAgents, (e: Error) => setError(e.message));
  }, [props.pipeline, props.version]);

  const remove = async (id: string) => {
    if (!window.confirm(`Remove agent ${id}?`)) return;
    setError(null);
    try {
      props.onSaved(await api.removeAgent(props.pipeline, id));
      setEditing(null);
    } catch (e) {
      setError(describe(e));
    }
  };

  return (
    <section className="card" data-testid="agents-panel">
      <div className="toolbar">
        <h2>Agents</h2>
        <div className="spacer" />
        <button
          type="button"
          onClick={() => setEditing('new')}
          disabled={props.blocked}
          data-testid="agent-add"
          title={props.blocked ? 'save or revert the YAML first' : undefined}
        >
          Add agent
        </button>
      </div>
      <ul className="agents-list">
        {agents.map((a) => (
          <li key={a.id} data-testid={`agent-row-${a.id}`}>
            <strong className="mono">{a.id}</strong>
            <span className="muted">{text(a.type) === 'session' ? 'session' : text(a.runtime)}</span>
            <div className="spacer" />
            <button
              type="button"
              disabled={props.blocked || text(a.type) === 'session'}
              onClick={() => setEditing(a)}
              data-testid={`agent-edit-${a.id}`}
            >
              Edit
            </button>
            <button
              type="button"
              disabled={props.blocked}
              onClick={() => remove(a.id)}
              data-testid={`agent-remove-${a.id}`}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {props.blocked && <p className="muted small">Save or revert the YAML to use the agent form.</p>}
      {error && (
        <p className="error-text" data-testid="agent-error">
          {error}
        </p>
      )}
      {editing && (
        <AgentForm
          key={editing === 'new' ? 'new' : editing.id}
          pipeline={props.pipeline}
          raw={editing === 'new' ? null : editing}
          ids={agents.map((a) => a.id)}
          onCancel={() => setEditing(null)}
          onSaved={(saved) => {
            setEditing(null);
            props.onSaved(saved);
          }}
        />
      )}
    </section>
  );
}

function AgentForm(props: {
  pipeline: string;
  raw: RawAgent | null;
  ids: string[];
  onCancel: () => void;
  onSaved: (saved: AgentSaved) => void;
}) {
  const initial = props.raw ? fromRaw(props.raw) : EMPTY;
  const [v, setV] = useState<AgentFormValues>(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const set = <K extends keyof AgentFormValues>(key: K, value: AgentFormValues[K]) =>
    setV((old) => ({ ...old, [key]: value }));
  const setHandoff = (i: number, change: Partial<HandoffRow>) =>
    set(
      'handoffs',
      v.handoffs.map((h, j) => (j === i ? { ...h, ...change } : h)),
    );

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const request = toRequest(v, props.raw);
      if (props.raw) {
        // only what changed, so the rest of the agent stays exactly as written
        const before = toRequest(initial, props.raw);
        const changed: AgentFields = Object.fromEntries(
          Object.entries(request).filter(
            ([k, value]) => JSON.stringify(value) !== JSON.stringify(before[k as keyof AgentFields]),
          ),
        );
        props.onSaved(await api.updateAgent(props.pipeline, props.raw.id, changed));
      } else {
        props.onSaved(await api.addAgent(props.pipeline, request));
      }
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="agent-form" onSubmit={submit} data-testid="agent-form">
      <h3>{props.raw ? `Edit ${props.raw.id}` : 'New agent'}</h3>
      <div className="form-row">
        <label className="field">
          <span>Id</span>
          <input value={v.id} onChange={(e) => set('id', e.target.value)} required data-testid="agent-id" />
        </label>
        <label className="field">
          <span>Name</span>
          <input value={v.name} onChange={(e) => set('name', e.target.value)} data-testid="agent-name" />
        </label>
        <label className="field">
          <span>Runtime</span>
          <select
            value={v.runtime}
            onChange={(e) => set('runtime', e.target.value)}
            data-testid="agent-runtime"
          >
            <option value="">(inherited)</option>
            {RUNTIME_NAMES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Model</span>
          <input
            value={v.model}
            onChange={(e) => set('model', e.target.value)}
            placeholder="runtime default"
            data-testid="agent-model"
          />
        </label>
        <label className="field">
          <span>Context</span>
          <select value={v.context_strategy} onChange={(e) => set('context_strategy', e.target.value)}>
            <option value="">(default: both)</option>
            {OPTIONS.contextStrategies.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Human input</span>
          <select
            value={v.human_input}
            onChange={(e) => set('human_input', e.target.value)}
            data-testid="agent-human-input"
          >
            <option value="">off</option>
            {OPTIONS.humanInputModes.map((mode) => (
              <option key={mode} value={mode}>
                {mode.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label className="field">
        <span>System prompt</span>
        <textarea
          rows={4}
          value={v.system_prompt}
          onChange={(e) => set('system_prompt', e.target.value)}
          placeholder="Templates: {{ input }}, {{ context }}, {{ params.x }} …"
          data-testid="agent-prompt"
        />
      </label>
      <fieldset>
        <legend>Handoffs</legend>
        {v.handoffs.map((h, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
          <div className="handoff-row" key={i}>
            <input
              value={h.to}
              onChange={(e) => setHandoff(i, { to: e.target.value })}
              list="agent-ids"
              placeholder="to (agent id, comma list)"
              data-testid={`handoff-to-${i}`}
            />
            <input
              value={h.condition}
              onChange={(e) => setHandoff(i, { condition: e.target.value })}
              list="conditions"
              placeholder="condition (always)"
              data-testid={`handoff-condition-${i}`}
            />
            <button
              type="button"
              onClick={() =>
                set(
                  'handoffs',
                  v.handoffs.filter((_, j) => j !== i),
                )
              }
            >
              ✕
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() => set('handoffs', [...v.handoffs, { to: '', condition: '', rest: {} }])}
          data-testid="handoff-add"
        >
          Add handoff
        </button>
        <datalist id="agent-ids">
          {props.ids.map((id) => (
            <option key={id} value={id} />
          ))}
        </datalist>
        <datalist id="conditions">
          {OPTIONS.handoffConditions.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
      </fieldset>
      <fieldset>
        <legend>Gate</legend>
        <div className="form-row">
          <label className="field">
            <span>Type</span>
            <select
              value={v.gate_type}
              onChange={(e) => set('gate_type', e.target.value)}
              data-testid="gate-type"
            >
              <option value="">none</option>
              {OPTIONS.gateTypes.map((type) => (
                <option key={type}>{type}</option>
              ))}
            </select>
          </label>
          {v.gate_type && (
            <>
              <label className="field grow">
                <span>Prompt</span>
                <input
                  value={v.gate_prompt}
                  onChange={(e) => set('gate_prompt', e.target.value)}
                  data-testid="gate-prompt"
                />
              </label>
              <label className="field">
                <span>Max retries</span>
                <input
                  type="number"
                  min={1}
                  value={v.gate_max_retries}
                  onChange={(e) => set('gate_max_retries', e.target.value)}
                  placeholder="3"
                  data-testid="gate-max-retries"
                />
              </label>
            </>
          )}
        </div>
      </fieldset>
      <div className="form-row">
        <button type="submit" className="primary" disabled={busy || !v.id.trim()} data-testid="agent-save">
          {props.raw ? 'Save agent' : 'Add agent'}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      {error && (
        <p className="error-text" data-testid="agent-form-error">
          {error}
        </p>
      )}
    </form>
  );
}

function describe(e: unknown): string {
  if (e instanceof ApiError && Array.isArray(e.body.diagnostics)) {
    const errors = (e.body.diagnostics as Diagnostic[]).filter((d) => d.severity === 'error');
    if (errors.length) return `Not saved: ${errors.map((d) => `line ${d.line}: ${d.message}`).join('; ')}`;
  }
  return (e as Error).message;
}
