/**
 * How `troupe doctor` asks a CLI whether it can run headless here, spending no tokens: the
 * CLI's own login status and the environment, never a prompt. Each CLI runtime has one
 * (`LOGIN_PROBES` in registry.ts, which the compiler keeps complete).
 */

/** `timed_out`: a probe did not answer in time (a busy machine), which says nothing about the CLI. */
export type Readiness = 'ok' | 'missing_cli' | 'auth' | 'untrusted_directory' | 'timed_out' | 'unknown';

export interface Login {
  status: Readiness;
  detail: string;
  fix: string | null;
}

/** A probe's output; `timedOut` when it did not end in time. */
export type ProbeOutcome =
  | { stdout: string; stderr: string; exitCode: number | null }
  | { timedOut: true; ms: number };

export interface ProbeContext {
  /** The CLI as doctor found it. */
  bin: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
  /** Config `trust_workspace`. */
  trustWorkspace?: boolean;
  /** `bin args`, stdin closed, within the probe timeout; null when it could not start. */
  run(args: string[]): Promise<ProbeOutcome | null>;
}

export type LoginProbe = (context: ProbeContext) => Promise<Login>;

/** The answer when a status command did not end in time. */
export function probeTimedOut(probe: string, ms: number): Login {
  return {
    status: 'timed_out',
    detail: `\`${probe}\` did not answer in ${seconds(ms)} (a busy machine?)`,
    fix: `run \`troupe doctor\` again, or check that \`${probe}\` works`,
  };
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A JSON object, or undefined for anything else. */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
