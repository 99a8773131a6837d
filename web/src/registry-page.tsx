import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { ApiError, api, type RegistryCatalog, type RegistryPipeline } from './api';

/**
 * The pipeline registry (`troupe search` / `troupe pull`, docs/registry.md): each pipeline with
 * its description, tags and the version installed here, and a versioned pull: pick a version in
 * the dropdown (the latest first), pull it into .troupe/pipelines/<name>/.
 */
export function RegistryPage() {
  const [query, setQuery] = useState('');
  /** What the list shows the answer to (the box may have changed since). */
  const [searched, setSearched] = useState('');
  const [catalog, setCatalog] = useState<RegistryCatalog | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);

  const load = useCallback((words: string) => {
    setLoading(true);
    api
      .registry(words)
      .then((c) => {
        setCatalog(c);
        setSearched(words);
        setError(null);
      })
      .catch((e: Error) => setError(e.message))
      .finally(() => setLoading(false));
  }, []);
  useEffect(() => load(''), [load]);

  const search = (e: FormEvent) => {
    e.preventDefault();
    load(query.trim());
  };

  return (
    <div className="page">
      <section className="card" data-testid="registry">
        <div className="toolbar">
          <h2>Registry</h2>
          <form onSubmit={search} className="registry-search">
            <input
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              placeholder="search name, description, tags"
              aria-label="search the registry"
              data-testid="registry-query"
            />
            <button type="submit" data-testid="registry-search">
              Search
            </button>
          </form>
          <span className="spacer" />
          {catalog && (
            <span className="muted mono small" data-testid="registry-location">
              {catalog.registry}
              {catalog.is_default ? ' (default)' : ''}
            </span>
          )}
        </div>
        {error && (
          <p className="error-text" data-testid="registry-error">
            {error}
          </p>
        )}
        {loading && !catalog && !error && <p className="empty">Reading the registry…</p>}
        {catalog && catalog.pipelines.length === 0 && (
          <p className="empty">Nothing{searched ? ` matches "${searched}"` : ''} in this registry.</p>
        )}
        {catalog && catalog.pipelines.length > 0 && (
          <table className="tasks">
            <thead>
              <tr>
                <th>Pipeline</th>
                <th className="wide">Description</th>
                <th>Installed</th>
                <th>Pull</th>
              </tr>
            </thead>
            <tbody>
              {catalog.pipelines.map((p) => (
                <RegistryRow key={p.name} pipeline={p} onPulled={() => load(searched)} />
              ))}
            </tbody>
          </table>
        )}
        {catalog && catalog.skipped.length > 0 && (
          <p className="muted small">
            Left out: {catalog.skipped.map((s) => `${s.what} (${s.reason})`).join('; ')}
          </p>
        )}
      </section>
    </div>
  );
}

function RegistryRow({ pipeline, onPulled }: { pipeline: RegistryPipeline; onPulled: () => void }) {
  const newestFirst = [...pipeline.versions].reverse();
  const [version, setVersion] = useState(pipeline.latest ?? newestFirst[0] ?? '');
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ text: string; error: boolean; force?: boolean } | null>(null);

  const pull = (force: boolean) => {
    setBusy(true);
    setNote(null);
    api
      .pullFromRegistry(pipeline.name, version, force)
      .then((r) => {
        setNote({
          text:
            r.status === 'installed'
              ? `installed ${r.name}@${r.version}`
              : `${r.name}@${r.version} is installed as locked`,
          error: false,
        });
        onPulled();
      })
      .catch((e: Error) =>
        setNote({ text: e.message, error: true, force: e instanceof ApiError && e.status === 409 }),
      )
      .finally(() => setBusy(false));
  };

  return (
    <tr data-testid={`registry-${pipeline.name}`}>
      <td className="mono">{pipeline.name}</td>
      <td className="wide">
        {pipeline.description}
        {pipeline.tags.length > 0 && <span className="muted"> [{pipeline.tags.join(', ')}]</span>}
        {note && (
          <div className={note.error ? 'error-text small' : 'muted small'} data-testid="registry-note">
            {note.text}
          </div>
        )}
      </td>
      <td className="mono">{pipeline.installed ?? '—'}</td>
      <td className="registry-pull">
        <select
          value={version}
          onChange={(e) => setVersion(e.target.value)}
          aria-label={`version of ${pipeline.name}`}
          data-testid="registry-version"
        >
          {newestFirst.map((v) => (
            <option key={v} value={v}>
              {v}
              {v === pipeline.latest ? ' (latest)' : ''}
            </option>
          ))}
        </select>
        <button
          type="button"
          disabled={busy || !version}
          onClick={() => pull(false)}
          data-testid="registry-pull"
        >
          {busy ? 'Pulling…' : 'Pull'}
        </button>
        {note?.force && (
          <button type="button" disabled={busy} onClick={() => pull(true)} data-testid="registry-force">
            Overwrite
          </button>
        )}
      </td>
    </tr>
  );
}
