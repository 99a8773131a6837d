import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import type { ProviderLimit, RoutingConfig } from '../core/routing.js';
import { GATE_RUNTIMES, type GateRuntime, RUNTIME_NAMES, runtimesWith } from '../core/runtimes.js';
import { DEFAULT_PRICES, type Price } from '../scheduler/prices.js';
import { DiagnosticSink, toPipelineError } from './diagnostics.js';
import {
  LimitsSchema,
  normalizeLimits,
  normalizeRouting,
  RoutingConfigError,
  RoutingSchema,
} from './routing-config.js';
import { checkSchema } from './schema-issues.js';
import { TrackerConfigSchema, type WatchConfig, watchConfigOf } from './tracker-config.js';
import { YamlSource } from './yaml-source.js';

/** `strict`: a gate's verifier must judge on another runtime or model than the worker (cross-LLM). */
export type QaMode = 'strict' | 'default';

export interface ProjectConfig {
  default_pipeline: string | null;
  qa: QaMode;
  pipeline: { max_stages: number };
  gate: {
    model: string | null;
    timeout: number;
    system_prompt: string;
    /** Runtime of llm gates that name none; null: the gated agent's own runtime. */
    runtime?: GateRuntime | null;
    /**
     * Whether a reply on the bus (`approve` / `reject: why` to the gate's mail) decides a human
     * gate. Off by default: anyone who can write the project's mail, the task's own agents
     * included, could send one (docs/security.md).
     */
    mail_verdicts?: boolean;
  };
  /**
   * Whether troupe may run CLIs headless in the folder it was started in without their own
   * trust prompt (Gemini's --skip-trust). Default true; false reports `untrusted_directory`.
   */
  trust_workspace: boolean;
  /** Seconds per runtime. */
  timeouts: Record<string, number>;
  /** Script file for agents with `runtime: scripted`, as written (relative to the project root). */
  script: string | null;
  /** USD per million tokens, by model-name substring (over troupe's estimates). */
  prices: Record<string, Price>;
  /** Tiers and rules for agents with `model: auto` / `effort: auto` (docs/routing.md). */
  routing: RoutingConfig | null;
  /** Caps per provider (runtime), for this process (across workers: docs/distributed.md). */
  limits: Record<string, ProviderLimit>;
  /** The pipeline registry (docs/registry.md): a git URL, or a path relative to the project root. */
  registry: string | null;
  /** postgres://… of the work queue's database (`troupe worker`, `run --detach`); null: none. */
  queue: string | null;
  /** Where tasks live: a `postgres://` URL or a SQLite file (docs/distributed.md); null: .troupe/troupe.db. */
  store: string | null;
  /** `troupe watch`'s tracker and rules (docs/trackers.md); null: none configured. */
  tracker: WatchConfig | null;
  server: {
    /**
     * Whether a script sent inline to `POST /api/run` may hold `run:` commands (docs/server.md).
     * Off by default: the API is a door to this machine, and a command is more than a test reply.
     */
    script_commands: boolean;
  };
}

export const DEFAULT_RUNTIME_TIMEOUT = 600;

export const DEFAULT_GATE_SYSTEM_PROMPT = [
  'You are a quality gate. Judge whether the agent output below meets the criteria you are given.',
  'Answer with ONLY a JSON object and nothing else:',
  '{"decision": "approved" or "rejected", "reason": "one or two sentences explaining why"}',
].join('\n');

const ConfigSchema = z.strictObject({
  default_pipeline: z.string().min(1).nullish(),
  qa: z.enum(['strict', 'default']).nullish(),
  pipeline: z.strictObject({ max_stages: z.number().int().min(1).optional() }).nullish(),
  gate: z
    .strictObject({
      model: z.string().min(1).nullish(),
      timeout: z.number().positive().optional(),
      system_prompt: z.string().min(1).optional(),
      runtime: z.enum(GATE_RUNTIMES).nullish(),
      mail_verdicts: z.boolean().optional(),
    })
    .nullish(),
  timeouts: z
    .strictObject(Object.fromEntries(RUNTIME_NAMES.map((r) => [r, z.number().positive().optional()])))
    .nullish(),
  script: z.string().min(1).nullish(),
  trust_workspace: z.boolean().optional(),
  prices: z
    .record(
      z.string(),
      z.strictObject({
        input: z.number().nonnegative(),
        output: z.number().nonnegative(),
        cached_input: z.number().nonnegative().optional(),
      }),
    )
    .nullish(),
  routing: RoutingSchema.nullish(),
  limits: LimitsSchema.nullish(),
  registry: z.string().min(1).nullish(),
  queue: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
    .nullish(),
  store: z.string().min(1).nullish(),
  server: z.strictObject({ script_commands: z.boolean().optional() }).nullish(),
  tracker: TrackerConfigSchema.nullish(),
});

export function defaultConfig(): ProjectConfig {
  return {
    default_pipeline: null,
    qa: 'default',
    pipeline: { max_stages: 20 },
    gate: { model: null, timeout: 120, system_prompt: DEFAULT_GATE_SYSTEM_PROMPT, runtime: null },
    trust_workspace: true,
    // a mailbox agent (a person, a live agent) has no default timeout: it may answer tomorrow
    timeouts: Object.fromEntries(runtimesWith('timesOut').map((r) => [r, DEFAULT_RUNTIME_TIMEOUT])),
    script: null,
    prices: { ...DEFAULT_PRICES },
    routing: null,
    limits: {},
    registry: null,
    queue: null,
    store: null,
    tracker: null,
    server: { script_commands: false },
  };
}

/** `.troupe/config.yaml`, else aqm's `.aqm/config.yaml`, if either exists. */
export function configFile(root: string): string | undefined {
  return ['.troupe', '.aqm']
    .map((dir) => path.join(root, dir, 'config.yaml'))
    .find((file) => existsSync(file));
}

/**
 * The project's config with defaults filled in. Unlike aqm (which ignores unknown keys and falls
 * back to defaults on a parse error), a typo or broken file is an error with its position.
 */
export function loadProjectConfig(root: string, warn?: (line: string) => void): ProjectConfig {
  const file = configFile(root);
  return file ? parseProjectConfig(readFileSync(file, 'utf8'), file, warn) : defaultConfig();
}

/**
 * A config file's text, checked as loadProjectConfig checks it; `file` is where it says it is from.
 * aqm's own `.aqm/config.yaml`, read in place, may hold keys only aqm knows (aqm ignores unknown
 * keys): those are passed over with a warning rather than stopping every command.
 */
export function parseProjectConfig(text: string, file: string, warn?: (line: string) => void): ProjectConfig {
  const config = defaultConfig();
  const sink = new DiagnosticSink();
  const source = YamlSource.parse(file, text, sink);
  const value = source?.value() ?? {};
  const known =
    source && path.basename(path.dirname(file)) === '.aqm'
      ? withoutUnknownKeys(value, (at, key) => {
          const { line, col } = source.keyPosition(at, key);
          warn?.(
            `${file}:${line}:${col}: \`${[...at, key].join('.')}\` is not a troupe setting; passed over`,
          );
        })
      : value;
  const raw = source && checkSchema(ConfigSchema, known, source, [], sink);
  if (!raw) throw toPipelineError(sink.errors());
  if (raw.default_pipeline) config.default_pipeline = raw.default_pipeline;
  if (raw.qa) config.qa = raw.qa;
  if (raw.pipeline?.max_stages) config.pipeline.max_stages = raw.pipeline.max_stages;
  if (raw.gate?.model) config.gate.model = raw.gate.model;
  if (raw.gate?.timeout) config.gate.timeout = raw.gate.timeout;
  if (raw.gate?.system_prompt) config.gate.system_prompt = raw.gate.system_prompt;
  for (const [runtime, seconds] of Object.entries(raw.timeouts ?? {})) {
    if (seconds) config.timeouts[runtime] = seconds;
  }
  if (raw.gate?.runtime) config.gate.runtime = raw.gate.runtime;
  if (raw.gate?.mail_verdicts) config.gate.mail_verdicts = true;
  if (raw.script) config.script = raw.script;
  if (raw.trust_workspace !== undefined) config.trust_workspace = raw.trust_workspace;
  Object.assign(config.prices, raw.prices ?? {});
  if (raw.limits) config.limits = normalizeLimits(raw.limits);
  if (raw.registry) config.registry = raw.registry;
  if (raw.queue) config.queue = raw.queue;
  if (raw.store) config.store = raw.store;
  if (raw.server?.script_commands) config.server.script_commands = true;
  if (raw.tracker) config.tracker = watchConfigOf(raw.tracker);
  if (raw.routing) {
    try {
      config.routing = normalizeRouting(raw.routing);
    } catch (error) {
      if (!(error instanceof RoutingConfigError)) throw error;
      sink.error(source!.position(['routing', ...error.path]), error.message);
      throw toPipelineError(sink.errors());
    }
  }
  return config;
}

/** Seconds a call to `runtime` may take. */
export function timeoutFor(config: ProjectConfig, runtime: string): number {
  return config.timeouts[runtime] ?? DEFAULT_RUNTIME_TIMEOUT;
}

/**
 * Sets `default_pipeline` in `.troupe/config.yaml`, keeping the rest of the file (comments
 * included). A project that only has `.aqm/config.yaml` gets its settings carried over.
 */
export function saveDefaultPipeline(root: string, name: string): void {
  saveConfig(root, { default_pipeline: name });
}

/** Sets top-level keys of `.troupe/config.yaml` as saveDefaultPipeline does (comments kept). */
export function saveConfig(root: string, values: Record<string, unknown>): void {
  loadProjectConfig(root); // refuses to rewrite a file that is already broken
  const target = path.join(root, '.troupe', 'config.yaml');
  const existing = configFile(root);
  const doc = parseDocument(existing ? readFileSync(existing, 'utf8') : '');
  for (const [key, value] of Object.entries(values)) doc.set(key, value);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, doc.toString());
}

/** The config without the keys ConfigSchema does not have, each told to `passOver` (its mapping's path, the key). */
function withoutUnknownKeys(
  value: unknown,
  passOver: (at: (string | number)[], key: string) => void,
): unknown {
  const copy = structuredClone(value);
  for (let round = 0; round < 8; round++) {
    const result = ConfigSchema.safeParse(copy);
    const unknown = result.success ? [] : result.error.issues.filter((i) => i.code === 'unrecognized_keys');
    if (unknown.length === 0) break;
    for (const issue of unknown) {
      const at = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
      const holder = at.reduce<unknown>((v, p) => (v as Record<string | number, unknown>)?.[p], copy);
      for (const key of issue.keys) {
        delete (holder as Record<string, unknown>)[key];
        passOver(at, key);
      }
    }
  }
  return copy;
}
