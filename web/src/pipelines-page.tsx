import { useEffect, useRef, useState } from 'react';
import { AgentsPanel } from './agent-form';
import { ApiError, api, type Diagnostic, type Graph, type PipelineDetail, type PipelineSummary } from './api';
import { PipelineGraph } from './pipeline-graph';
import { Link, navigate } from './router';

/** Pipelines: the list, and the selected one as a graph and as YAML, checked as you type. */
export function PipelinesPage(props: { selected: string | null }) {
  const [list, setList] = useState<PipelineSummary[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api
      .pipelines()
      .then((r) => {
        setList(r.pipelines);
        const opened = r.pipelines.find((p) => p.is_default) ?? r.pipelines[0];
        if (!props.selected && opened) navigate(`/pipelines/${opened.name}`);
      })
      .catch((e: Error) => setError(e.message));
  // biome-ignore lint/correctness/useExhaustiveDependencies: load once per selection
  useEffect(() => {
    void load();
  }, [props.selected]);

  return (
    <div className="page pipelines">
      <aside className="card side">
        <h2>Pipelines</h2>
        {error && <p className="error-text">{error}</p>}
        <ul className="pipeline-list">
          {list.map((p) => (
            <li key={p.name}>
              <Link
                to={`/pipelines/${p.name}`}
                className={`item ${p.name === props.selected ? 'active' : ''}`}
                testId={`pipeline-${p.name}`}
              >
                <span>{p.name}</span>
                {p.is_default && <span className="tag">default</span>}
                <span className="muted">{p.agent_count || ''}</span>
              </Link>
            </li>
          ))}
        </ul>
      </aside>
      {props.selected && <PipelineEditor key={props.selected} name={props.selected} onSaved={load} />}
    </div>
  );
}

function PipelineEditor(props: { name: string; onSaved: () => void }) {
  const [detail, setDetail] = useState<PipelineDetail | null>(null);
  const [content, setContent] = useState('');
  const [diagnostics, setDiagnostics] = useState<Diagnostic[]>([]);
  const [graph, setGraph] = useState<Graph | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const gutter = useRef<HTMLDivElement>(null);

  useEffect(() => {
    api
      .pipeline(props.name)
      .then((d) => {
        setDetail(d);
        setContent(d.content);
        setDiagnostics(d.diagnostics);
        setGraph(d.graph);
      })
      .catch((e: Error) => setError(e.message));
  }, [props.name]);

  // check as you type, a moment after the last key; the saved text (after Revert) has its own
  // diagnostics, and the answer for a text no longer in the editor is dropped
  useEffect(() => {
    if (!detail) return;
    if (content === detail.content) {
      setDiagnostics(detail.diagnostics);
      setGraph(detail.graph);
      return;
    }
    let current = true;
    const timer = window.setTimeout(() => {
      api
        .validate(props.name, content)
        .then((v) => {
          if (!current) return;
          setDiagnostics(v.diagnostics);
          if (v.graph) setGraph(v.graph);
        })
        .catch((e: Error) => current && setError(e.message));
    }, 250);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [content, detail, props.name]);

  if (error && !detail) return <p className="error-text">{error}</p>;
  if (!detail) return <p className="muted">Loading…</p>;

  const own = diagnostics.filter((d) => d.file === null);
  const byLine = new Map<number, Diagnostic[]>();
  for (const d of own) byLine.set(d.line, [...(byLine.get(d.line) ?? []), d]);
  const lines = content.split('\n').length;
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const dirty = content !== detail.content;

  const save = async () => {
    setStatus(null);
    setError(null);
    try {
      const saved = await api.savePipeline(props.name, content);
      setDetail({ ...detail, content, diagnostics: saved.diagnostics, graph: saved.graph });
      setStatus('saved');
      props.onSaved();
    } catch (e) {
      if (e instanceof ApiError && Array.isArray(e.body.diagnostics))
        setDiagnostics(e.body.diagnostics as Diagnostic[]);
      setError((e as Error).message);
    }
  };

  return (
    <div className="editor-col">
      <section className="card">
        <div className="toolbar">
          <h2>{props.name}</h2>
          <span className="muted small">{detail.file}</span>
          <div className="spacer" />
          {!detail.is_default && (
            <button
              type="button"
              onClick={() =>
                api.setDefault(props.name).then(props.onSaved, (e: Error) => setError(e.message))
              }
            >
              Make default
            </button>
          )}
        </div>
        {graph ? (
          <div className="graph-wrap">
            <PipelineGraph graph={graph} />
          </div>
        ) : (
          <p className="muted">Fix the errors to see the graph.</p>
        )}
        {detail.features.length > 0 && <p className="muted small">{detail.features.join(' · ')}</p>}
      </section>
      <AgentsPanel
        pipeline={props.name}
        blocked={dirty}
        version={detail.content}
        onSaved={(saved) => {
          setDetail({
            ...detail,
            content: saved.content,
            valid: true,
            diagnostics: saved.diagnostics,
            graph: saved.graph,
          });
          setContent(saved.content);
          setStatus('saved');
          props.onSaved();
        }}
      />
      <section className="card">
        <div className="toolbar">
          <h2>YAML</h2>
          <span className={`check ${errors.length ? 'bad' : 'good'}`} data-testid="validation-summary">
            {errors.length
              ? `${errors.length} error${errors.length > 1 ? 's' : ''}`
              : diagnostics.length
                ? `valid · ${diagnostics.length} warning${diagnostics.length > 1 ? 's' : ''}`
                : 'valid'}
          </span>
          <div className="spacer" />
          {status && !dirty && <span className="muted">{status}</span>}
          <button
            type="button"
            disabled={!dirty}
            onClick={() => setContent(detail.content)}
            data-testid="revert-pipeline"
          >
            Revert
          </button>
          <button
            type="button"
            className="primary"
            disabled={!dirty || errors.length > 0}
            onClick={save}
            data-testid="save-pipeline"
          >
            Save
          </button>
        </div>
        <div className="editor">
          <div className="gutter" ref={gutter} aria-hidden="true">
            {Array.from({ length: lines }, (_, i) => {
              const marks = byLine.get(i + 1);
              const severity = marks?.some((m) => m.severity === 'error') ? 'error' : marks ? 'warning' : '';
              return (
                <div
                  // biome-ignore lint/suspicious/noArrayIndexKey: a line number is the line's identity
                  key={i}
                  className={`ln ${severity}`}
                  title={marks?.map((m) => m.message).join('\n')}
                  data-testid={severity ? `gutter-${severity}-${i + 1}` : undefined}
                >
                  {i + 1}
                </div>
              );
            })}
          </div>
          <textarea
            value={content}
            spellCheck={false}
            onChange={(e) => setContent(e.target.value)}
            onScroll={(e) => {
              if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
            }}
            data-testid="yaml-editor"
            aria-label="pipeline YAML"
          />
        </div>
        {error && <p className="error-text">{error}</p>}
        {diagnostics.length > 0 && (
          <ul className="diagnostics" data-testid="diagnostics">
            {diagnostics.map((d) => (
              <li key={`${d.file}:${d.line}:${d.col}:${d.message}`} className={d.severity}>
                <span className="where">
                  {d.file ? `${d.file}:` : 'line '}
                  {d.line}:{d.col}
                </span>
                <span>{d.message}</span>
                {d.hint && <span className="hint">{d.hint}</span>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
