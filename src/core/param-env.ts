/**
 * How a command gate's shell reads a pipeline param: from the environment, never as shell text.
 * `${{ params.NAME }}` in a gate command becomes a reference to this variable.
 */
export function paramEnvName(name: string): string {
  return `TROUPE_PARAM_${name.toUpperCase().replace(/-/g, '_')}`;
}

/** Every param as the environment variable a command gate sees it as ("" for no value). */
export function paramEnv(params: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) => [paramEnvName(name), value == null ? '' : String(value)]),
  );
}
