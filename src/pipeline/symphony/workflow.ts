import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SourcePosition } from '../../core/pipeline.js';
import type { DiagnosticSink } from '../diagnostics.js';
import { type Path, YamlSource } from '../yaml-source.js';

/**
 * Symphony's `WORKFLOW.md` (openai/symphony SPEC.md §5, elixir `Config.Schema`), read unchanged:
 * optional YAML front matter between a first `---` line and the next, the rest (trimmed) the
 * prompt template. Settings get Symphony's defaults; keys troupe does not read are listed, never
 * refused (the spec asks for forward compatibility). Secrets stay `$VAR` references.
 */

export type TrackerKind = 'linear' | 'jira' | 'memory';
export const TRACKER_KINDS: readonly TrackerKind[] = ['linear', 'jira', 'memory'];

/** A secret as WORKFLOW.md gives it: `$VAR` (read from the environment when used) or written out. */
export type SecretRef = { env: string } | { literal: string };

export interface SymphonySettings {
  tracker: {
    /** null: none given (Symphony requires one to dispatch). */
    kind: TrackerKind | null;
    endpoint: string | null;
    api_key: SecretRef | null;
    project_slug: string | null;
    assignee: string | null;
    /** As written; compare trimmed and lower-cased (`normalizeState`). */
    active_states: string[];
    terminal_states: string[];
    /** Every one must be on an issue (compared as `normalizeLabel` does). */
    required_labels: string[];
    /** Other adapter settings of `tracker.provider`, as written (`$VAR` left as it is). */
    provider: Record<string, unknown>;
  };
  polling: { interval_ms: number };
  /** As written: `~` and `$VAR` are expanded by whoever creates the workspaces. */
  workspace: { root: string };
  hooks: {
    after_create: string | null;
    before_run: string | null;
    after_run: string | null;
    before_remove: string | null;
    timeout_ms: number;
  };
  agent: {
    max_concurrent_agents: number;
    max_turns: number;
    max_retry_backoff_ms: number;
    /** Keys normalized (trimmed, lower-cased). */
    max_concurrent_agents_by_state: Record<string, number>;
  };
  codex: {
    command: string;
    approval_policy: string | Record<string, unknown>;
    thread_sandbox: string;
    turn_sandbox_policy: Record<string, unknown> | null;
    turn_timeout_ms: number;
    read_timeout_ms: number;
    /** ≤ 0 disables stall detection. */
    stall_timeout_ms: number;
    /** Read by Symphony's own WORKFLOW.md (not in its schema): codex's model and reasoning effort. */
    model: string | null;
    reasoning_effort: string | null;
  };
}

export interface IgnoredKey {
  /** Dotted, e.g. `codex.service_tier`. */
  key: string;
  at: SourcePosition;
  why: string;
}

export interface Workflow {
  file: string;
  settings: SymphonySettings;
  /** The prompt template, trimmed. */
  prompt: string;
  /** Where the trimmed prompt starts in the file (template positions are offset by it). */
  promptAt: SourcePosition;
  /** Keys troupe does not use (unknown ones, and Symphony's own it has no use for). */
  ignored: IgnoredKey[];
  /** Where a setting was written (its nearest written ancestor for a default). */
  position(path: Path): SourcePosition;
}

export const LINEAR_ENDPOINT = 'https://api.linear.app/graphql';
export const DEFAULT_ACTIVE_STATES = ['Todo', 'In Progress'];
export const DEFAULT_TERMINAL_STATES = ['Closed', 'Cancelled', 'Canceled', 'Duplicate', 'Done'];

/** Symphony compares state names trimmed and lower-cased. */
export function normalizeState(state: string): string {
  return state.trim().toLowerCase();
}

/** Required labels match case- and space-insensitively. */
export function normalizeLabel(label: string): string {
  return label.replace(/\s+/g, '').toLowerCase();
}

/** The front matter of `text` and where its prompt starts, split as Symphony splits it. */
export function splitWorkflow(text: string): {
  frontMatter: string | null;
  prompt: string;
  promptLine: number;
  promptCol: number;
} {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  if (lines[0] !== '---') return { frontMatter: null, ...trimmedFrom(lines, 0) };
  const close = lines.indexOf('---', 1);
  // no closing line: all of it is front matter (elixir workflow.ex)
  const end = close === -1 ? lines.length : close;
  // blank line 1 (for the opening `---`) keeps the YAML's line numbers the file's
  const frontMatter = ['', ...lines.slice(1, end)].join('\n');
  return close === -1
    ? { frontMatter, prompt: '', promptLine: lines.length, promptCol: 1 }
    : { frontMatter, ...trimmedFrom(lines, close + 1) };
}

function trimmedFrom(
  lines: string[],
  first: number,
): { prompt: string; promptLine: number; promptCol: number } {
  const body = lines.slice(first).join('\n');
  const lead = body.slice(0, body.length - body.trimStart().length);
  const breaks = lead.split('\n');
  return {
    prompt: body.trim(),
    promptLine: first + breaks.length,
    promptCol: (breaks.at(-1)?.length ?? 0) + 1,
  };
}

/** Whether a file is a Symphony workflow: named WORKFLOW.md, or front matter with `tracker:`. */
export function looksLikeWorkflow(file: string, text: string): boolean {
  if (path.basename(file) === 'WORKFLOW.md') return true;
  const { frontMatter } = splitWorkflow(text);
  return frontMatter !== null && /^tracker:/m.test(frontMatter);
}

/**
 * Reads a WORKFLOW.md. Problems go to `sink` with their position; undefined when the file cannot
 * be read as a workflow at all (YAML errors, front matter that is not a map).
 */
export function readWorkflow(text: string, file: string, sink: DiagnosticSink): Workflow | undefined {
  const split = splitWorkflow(text);
  let source: YamlSource | undefined;
  let config: Record<string, unknown> = {};
  if (split.frontMatter !== null && split.frontMatter.trim() !== '') {
    source = YamlSource.parse(file, split.frontMatter, sink);
    if (!source) return undefined;
    // front matter of comments only is no settings, as an empty one is
    const value = source.value() ?? {};
    if (!isRecord(value)) {
      sink.error(
        source.position([]),
        `workflow_front_matter_not_a_map: the front matter is ${describe(value)}, not a map of settings`,
        'write `key: value` lines between the two `---` lines (tracker, polling, workspace, hooks, agent, codex)',
      );
      return undefined;
    }
    config = value;
  }
  const position = (at: Path): SourcePosition => source?.position(at) ?? { file, line: 1, col: 1 };
  const keyPosition = (at: Path, key: string): SourcePosition =>
    source?.keyPosition(at, key) ?? { file, line: 1, col: 1 };
  const reader = new SettingsReader(config, sink, position, keyPosition);
  return {
    file,
    settings: reader.settings(),
    prompt: split.prompt,
    promptAt: { file, line: split.promptLine, col: split.promptCol },
    ignored: reader.ignored,
    position,
  };
}

const SECTIONS = ['tracker', 'polling', 'workspace', 'hooks', 'agent', 'codex'] as const;
/** Symphony's own sections troupe has no use for (its SSH workers, terminal dashboard, HTTP server). */
const SYMPHONY_ONLY: Record<string, string> = {
  worker: "Symphony's SSH workers: troupe runs on its own workers (`troupe worker`)",
  observability: "Symphony's terminal dashboard: troupe has `troupe list` and the web dashboard",
  server: "Symphony's HTTP server: troupe has `troupe serve`",
};
const TRACKER_KEYS = [
  'kind',
  'endpoint',
  'api_key',
  'project_slug',
  'assignee',
  'active_states',
  'terminal_states',
  'required_labels',
  'provider',
];
/** Adapter settings read flat (the older spec) or under `tracker.provider` (the newer one). */
const PROVIDER_KEYS = ['endpoint', 'api_key', 'project_slug', 'assignee'] as const;
const CODEX_KEYS = [
  'command',
  'approval_policy',
  'thread_sandbox',
  'turn_sandbox_policy',
  'turn_timeout_ms',
  'read_timeout_ms',
  'stall_timeout_ms',
  'model',
  'reasoning_effort',
];
const KNOWN_KEYS: Record<(typeof SECTIONS)[number], string[]> = {
  tracker: TRACKER_KEYS,
  polling: ['interval_ms'],
  workspace: ['root'],
  hooks: ['after_create', 'before_run', 'after_run', 'before_remove', 'timeout_ms'],
  agent: ['max_concurrent_agents', 'max_turns', 'max_retry_backoff_ms', 'max_concurrent_agents_by_state'],
  codex: CODEX_KEYS,
};

/** Symphony's defaults, from its schema. */
const DEFAULT_APPROVAL_POLICY = { reject: { sandbox_approval: true, rules: true, mcp_elicitations: true } };

class SettingsReader {
  readonly ignored: IgnoredKey[] = [];

  constructor(
    private readonly config: Record<string, unknown>,
    private readonly sink: DiagnosticSink,
    private readonly at: (path: Path) => SourcePosition,
    private readonly keyAt: (path: Path, key: string) => SourcePosition,
  ) {}

  settings(): SymphonySettings {
    for (const key of Object.keys(this.config)) {
      if ((SECTIONS as readonly string[]).includes(key)) continue;
      this.ignore([], key, SYMPHONY_ONLY[key] ?? 'not a WORKFLOW.md setting troupe knows: ignored');
    }
    for (const section of SECTIONS) {
      const value = this.section(section);
      for (const key of Object.keys(value))
        if (!KNOWN_KEYS[section].includes(key)) this.ignore([section], key, 'not read by troupe: ignored');
    }
    return {
      tracker: this.tracker(),
      polling: { interval_ms: this.int(['polling', 'interval_ms'], 30_000, 1) },
      workspace: {
        root: this.str(['workspace', 'root']) ?? path.join(tmpdir(), 'symphony_workspaces'),
      },
      hooks: {
        after_create: this.str(['hooks', 'after_create']),
        before_run: this.str(['hooks', 'before_run']),
        after_run: this.str(['hooks', 'after_run']),
        before_remove: this.str(['hooks', 'before_remove']),
        timeout_ms: this.int(['hooks', 'timeout_ms'], 60_000, 1),
      },
      agent: {
        max_concurrent_agents: this.int(['agent', 'max_concurrent_agents'], 10, 1),
        max_turns: this.int(['agent', 'max_turns'], 20, 1),
        max_retry_backoff_ms: this.int(['agent', 'max_retry_backoff_ms'], 300_000, 1),
        max_concurrent_agents_by_state: this.stateLimits(),
      },
      codex: this.codex(),
    };
  }

  tracker(): SymphonySettings['tracker'] {
    const tracker = this.section('tracker');
    const provider = isRecord(tracker.provider) ? tracker.provider : {};
    if (tracker.provider !== undefined && tracker.provider !== null && !isRecord(tracker.provider))
      this.sink.error(this.at(['tracker', 'provider']), 'tracker.provider must be a map of adapter settings');
    // the newer spec nests adapter settings under provider; the older one writes them flat
    const where = (key: string): Path =>
      provider[key] !== undefined ? ['tracker', 'provider', key] : ['tracker', key];
    const kindText = this.str(['tracker', 'kind']);
    const kind = kindText === null ? null : (TRACKER_KINDS.find((k) => k === kindText.trim()) ?? null);
    if (kindText !== null && kind === null)
      this.sink.error(
        this.at(['tracker', 'kind']),
        `tracker.kind \`${kindText}\` is not one Symphony knows`,
        `use ${TRACKER_KINDS.join(', ')}`,
      );
    if (kindText === null && isRecord(this.config.tracker))
      this.sink.warning(
        this.keyAt([], 'tracker'),
        'tracker.kind is missing: `troupe watch` cannot poll this workflow',
        'add `kind: linear` (or jira, memory)',
      );
    for (const key of PROVIDER_KEYS)
      if (provider[key] !== undefined && tracker[key] !== undefined)
        this.sink.warning(
          this.at(['tracker', key]),
          `tracker.${key} and tracker.provider.${key} are both given: tracker.provider.${key} is used`,
        );
    const projectSlug = this.str(where('project_slug'));
    if (kind === 'linear' && projectSlug === null)
      this.sink.error(
        this.keyAt([], 'tracker'),
        'tracker.provider.project_slug (or tracker.project_slug) is required when tracker.kind is linear',
        "the slug from the Linear project's URL",
      );
    const rest = Object.fromEntries(
      Object.entries(provider).filter(([k]) => !(PROVIDER_KEYS as readonly string[]).includes(k)),
    );
    return {
      kind,
      endpoint: this.str(where('endpoint')) ?? (kind === 'linear' ? LINEAR_ENDPOINT : null),
      api_key: this.secret(where('api_key')) ?? (kind === 'linear' ? { env: 'LINEAR_API_KEY' } : null),
      project_slug: projectSlug,
      assignee: this.str(where('assignee')),
      active_states: this.states(['tracker', 'active_states'], DEFAULT_ACTIVE_STATES),
      terminal_states: this.states(['tracker', 'terminal_states'], DEFAULT_TERMINAL_STATES),
      required_labels: this.states(['tracker', 'required_labels'], []),
      provider: rest,
    };
  }

  codex(): SymphonySettings['codex'] {
    const command = this.str(['codex', 'command']) ?? 'codex app-server';
    if (command.trim() === '') this.sink.error(this.at(['codex', 'command']), 'codex.command is empty');
    const policy = this.value(['codex', 'approval_policy']);
    if (policy !== undefined && typeof policy !== 'string' && !isRecord(policy))
      this.sink.error(
        this.at(['codex', 'approval_policy']),
        'codex.approval_policy must be a string or a map',
      );
    const sandboxPolicy = this.value(['codex', 'turn_sandbox_policy']);
    if (sandboxPolicy !== undefined && !isRecord(sandboxPolicy))
      this.sink.error(this.at(['codex', 'turn_sandbox_policy']), 'codex.turn_sandbox_policy must be a map');
    return {
      command,
      approval_policy: typeof policy === 'string' || isRecord(policy) ? policy : DEFAULT_APPROVAL_POLICY,
      thread_sandbox: this.str(['codex', 'thread_sandbox']) ?? 'workspace-write',
      turn_sandbox_policy: isRecord(sandboxPolicy) ? sandboxPolicy : null,
      turn_timeout_ms: this.int(['codex', 'turn_timeout_ms'], 3_600_000, 1),
      read_timeout_ms: this.int(['codex', 'read_timeout_ms'], 5_000, 1),
      stall_timeout_ms: this.int(['codex', 'stall_timeout_ms'], 300_000, 0),
      model: this.str(['codex', 'model']),
      reasoning_effort: this.str(['codex', 'reasoning_effort']),
    };
  }

  stateLimits(): Record<string, number> {
    const at: Path = ['agent', 'max_concurrent_agents_by_state'];
    const value = this.value(at);
    if (value === undefined) return {};
    if (!isRecord(value)) {
      this.sink.error(this.at(at), 'agent.max_concurrent_agents_by_state must be a map of state: limit');
      return {};
    }
    const limits: Record<string, number> = {};
    for (const [state, limit] of Object.entries(value)) {
      if (normalizeState(state) === '')
        this.sink.error(this.keyAt(at, state), 'state names must not be blank');
      else if (typeof limit !== 'number' || !Number.isInteger(limit) || limit <= 0)
        this.sink.error(
          this.at([...at, state]),
          `the limit of state \`${state}\` must be a positive integer`,
        );
      else limits[normalizeState(state)] = limit;
    }
    return limits;
  }

  section(name: string): Record<string, unknown> {
    const value = this.config[name];
    if (value === undefined || value === null) return {};
    if (isRecord(value)) return value;
    this.sink.error(this.at([name]), `${name} must be a map of settings, not ${describe(value)}`);
    return {};
  }

  value(at: Path): unknown {
    let value: unknown = this.config;
    for (const key of at) value = isRecord(value) ? value[key as string] : undefined;
    return value ?? undefined;
  }

  str(at: Path): string | null {
    const value = this.value(at);
    if (value === undefined) return null;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    this.sink.error(this.at(at), `${at.join('.')} must be a string, not ${describe(value)}`);
    return null;
  }

  /** An integer or a string of one (the spec allows both), at least `min`. */
  int(at: Path, fallback: number, min: number): number {
    const value = this.value(at);
    if (value === undefined) return fallback;
    const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
    if (typeof n === 'number' && Number.isSafeInteger(n) && n >= min) return n;
    this.sink.error(
      this.at(at),
      `${at.join('.')} must be an integer ${min > 0 ? 'greater than 0' : 'of 0 or more'}, not ${JSON.stringify(value)}`,
    );
    return fallback;
  }

  /** A list of names, or one comma-separated string of them. */
  states(at: Path, fallback: string[]): string[] {
    const value = this.value(at);
    if (value === undefined) return [...fallback];
    const list = typeof value === 'string' ? value.split(',') : value;
    if (Array.isArray(list) && list.every((s) => typeof s === 'string' || typeof s === 'number')) {
      const names = list.map((s) => String(s).trim()).filter((s) => s !== '');
      if (names.length === list.length) return names;
    }
    this.sink.error(this.at(at), `${at.join('.')} must be a list of names (or one comma-separated string)`);
    return [...fallback];
  }

  secret(at: Path): SecretRef | null {
    const value = this.str(at);
    if (value === null) return null;
    const env = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(value.trim())?.[1];
    if (env) return { env };
    this.sink.warning(
      this.at(at),
      `${at.join('.')} is written out in the file: it is committed with the repository`,
      'write `$LINEAR_API_KEY` (or another variable) and set it in the environment',
    );
    return { literal: value };
  }

  ignore(at: Path, key: string, why: string): void {
    this.ignored.push({ key: [...at, key].join('.'), at: this.keyAt(at, key), why });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'empty';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

/** The value of a secret from `env`; null when missing or empty (Symphony: empty = missing). */
export function resolveSecret(ref: SecretRef | null, env: NodeJS.ProcessEnv): string | null {
  if (!ref) return null;
  const value = 'env' in ref ? env[ref.env] : ref.literal;
  return value ? value : null;
}
