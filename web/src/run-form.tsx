import { type FormEvent, useEffect, useState } from 'react';
import { api, type PipelineSummary } from './api';
import { navigate } from './router';

/** Start a run: pipeline, input, params, and optionally a script (offline, scripted replies). */
export function RunForm(props: { onStarted?: (id: string) => void }) {
  const [pipelines, setPipelines] = useState<PipelineSummary[]>([]);
  const [pipeline, setPipeline] = useState('');
  const [input, setInput] = useState('');
  const [params, setParams] = useState('');
  const [script, setScript] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .pipelines()
      .then((list) => {
        setPipelines(list.pipelines);
        setPipeline((p) => p || list.default || list.pipelines[0]?.name || '');
      })
      .catch((e: Error) => setError(e.message));
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const parsed = Object.fromEntries(
        params
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean)
          .map((line) => {
            const eq = line.indexOf('=');
            if (eq <= 0) throw new Error(`a param is key=value, not "${line}"`);
            return [line.slice(0, eq).trim(), line.slice(eq + 1).trim()];
          }),
      );
      const { task_id } = await api.run({
        input,
        ...(pipeline ? { pipeline } : {}),
        ...(Object.keys(parsed).length ? { params: parsed } : {}),
        ...(script.trim() ? { script: script.trim() } : {}),
      });
      setInput('');
      if (props.onStarted) props.onStarted(task_id);
      else navigate(`/tasks/${task_id}`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card run-form" onSubmit={submit} data-testid="run-form">
      <div className="run-row">
        <label className="field grow">
          <span>What should the team do?</span>
          <textarea
            value={input}
            onChange={(e) => setInput(e.target.value)}
            placeholder="e.g. Add rate limiting to the login endpoint"
            rows={2}
            required
            data-testid="run-input"
          />
        </label>
        <label className="field">
          <span>Pipeline</span>
          <select value={pipeline} onChange={(e) => setPipeline(e.target.value)} data-testid="run-pipeline">
            {pipelines.map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
                {p.is_default ? ' (default)' : ''}
              </option>
            ))}
          </select>
        </label>
      </div>
      <details className="more">
        <summary>Params and script</summary>
        <div className="run-row">
          <label className="field grow">
            <span>Params (key=value, one a line)</span>
            <textarea value={params} onChange={(e) => setParams(e.target.value)} rows={2} />
          </label>
          <label className="field grow">
            <span>Script (offline run; path in the project)</span>
            <input
              value={script}
              onChange={(e) => setScript(e.target.value)}
              placeholder="script.yaml"
              data-testid="run-script"
            />
          </label>
        </div>
      </details>
      <div className="run-actions">
        {error && <span className="error-text">{error}</span>}
        <button type="submit" className="primary" disabled={busy || !input.trim()} data-testid="run-submit">
          {busy ? 'Starting…' : 'Run'}
        </button>
      </div>
    </form>
  );
}
