import { type Runtime, RuntimeError, type RuntimeEvent, type RuntimeRequest } from '../core/runtime.js';
import { SCRIPTED_ERRORS, type Script, type ScriptAgentEntry } from '../core/script.js';
import type { Usage } from '../core/usage.js';

/**
 * Replies from a script instead of a model: offline, free and deterministic. Its place in
 * the script comes from the request's `previousMeta`, which the task's own event log
 * supplies, so a resumed task in another process carries on where the first left off.
 */
export function scriptedRuntime(script: Script): Runtime {
  return {
    name: 'scripted',
    run: (request) => (request.purpose === 'gate' ? gateReply(script, request) : agentReply(script, request)),
  };
}

async function* agentReply(script: Script, request: RuntimeRequest): AsyncGenerator<RuntimeEvent> {
  throwIfCancelled(request.signal);
  const entries = script.agents[request.agentId];
  if (!entries?.length) {
    throw new RuntimeError(
      'script_missing',
      `the script has no reply for agent '${request.agentId}' (agents.${request.agentId})`,
    );
  }
  const picked = pickEntry(entries, request);
  const entry = picked.entry;
  const meta = { script_entry: picked.kind, script_index: picked.index };
  const delay = typeof entry === 'object' ? (entry.delay_ms ?? 0) : 0;
  if (typeof entry === 'object' && 'error' in entry) {
    if (delay) await sleep(delay, request.signal);
    const resetAt =
      entry.error === 'rate_limit' ? new Date(Date.now() + (entry.reset_after_s ?? 60) * 1000) : undefined;
    throw new RuntimeError(
      SCRIPTED_ERRORS[entry.error],
      `scripted ${entry.error} for agent '${request.agentId}'`,
      {
        ...(resetAt ? { resetAt } : {}),
        meta,
      },
    );
  }
  if (typeof entry === 'object' && (entry.write || entry.run)) {
    // scripted agents that edit code: their files and command, in their working directory
    const { applyScriptedEffects } = await import('../workspace/scripted-effects.js');
    const done = await applyScriptedEffects(
      request.cwd,
      { ...(entry.write ? { write: entry.write } : {}), ...(entry.run ? { run: entry.run } : {}) },
      { signal: request.signal },
    );
    if (done.ran && done.ran.exitCode !== 0) {
      throw new RuntimeError(
        'crashed',
        `scripted run '${done.ran.argv.join(' ')}' exited with ${done.ran.exitCode}`,
        { meta },
      );
    }
  }
  const text = typeof entry === 'string' ? entry : entry.reply;
  // the latency is spread over the lines, so a slow reply streams in as a model's would
  const lines = text.split(/(?<=\n)/);
  for (const line of lines) {
    if (delay) await sleep(delay / lines.length, request.signal);
    yield { type: 'text', text: line };
  }
  const usage: Usage =
    typeof entry === 'object' && entry.usage ? { ...entry.usage } : estimateUsage(request.prompt, text);
  yield { type: 'result', text, usage, meta };
}

function pickEntry(
  entries: ScriptAgentEntry[],
  request: RuntimeRequest,
): { entry: ScriptAgentEntry; kind: 'when' | 'plain'; index: number } {
  for (const [index, entry] of entries.entries()) {
    if (typeof entry === 'object' && isConditional(entry) && matches(entry, request)) {
      return { entry, kind: 'when', index };
    }
  }
  const plain = entries.flatMap((entry, index) =>
    typeof entry === 'string' || !isConditional(entry) ? [{ entry, index }] : [],
  );
  if (plain.length === 0) {
    throw new RuntimeError(
      'script_missing',
      `no scripted reply for agent '${request.agentId}' matches its prompt, and agents.${request.agentId} has no plain entry`,
    );
  }
  const used = request.previousMeta.filter((m) => m.script_entry === 'plain').length;
  const chosen = plain[Math.min(used, plain.length - 1)]!;
  return { ...chosen, kind: 'plain' };
}

async function* gateReply(script: Script, request: RuntimeRequest): AsyncGenerator<RuntimeEvent> {
  throwIfCancelled(request.signal);
  const entries = script.gates[request.agentId];
  if (!entries?.length) {
    throw new RuntimeError(
      'script_missing',
      `the script has no decision for the gate of agent '${request.agentId}' (gates.${request.agentId})`,
    );
  }
  // entries with `when` are tried first; the others are used in order, the last repeating
  const matched = entries.find(
    (e) => typeof e === 'object' && e.when !== undefined && new RegExp(e.when).test(request.prompt),
  );
  const plain = entries.filter((e) => typeof e === 'string' || e.when === undefined);
  // the place in the list is the number of decisions this gate has made, matched ones included
  const entry = matched ?? plain[Math.min(request.previousMeta.length, plain.length - 1)];
  if (!entry) {
    throw new RuntimeError(
      'script_missing',
      `no scripted decision for the gate of agent '${request.agentId}' matches its prompt, and gates.${request.agentId} has no plain entry`,
    );
  }
  const decision =
    typeof entry === 'string'
      ? { decision: entry, reason: '' }
      : { decision: entry.decision, reason: entry.reason ?? '' };
  const text = JSON.stringify(decision);
  yield { type: 'text', text };
  yield { type: 'result', text, usage: estimateUsage(request.prompt, text) };
}

function isConditional(entry: Exclude<ScriptAgentEntry, string>): boolean {
  return entry.when !== undefined || entry.model !== undefined;
}

/** An entry's conditions hold: its `when` matches the prompt, its `model` the request's model. */
function matches(entry: Exclude<ScriptAgentEntry, string>, request: RuntimeRequest): boolean {
  if (entry.when !== undefined && !new RegExp(entry.when).test(request.prompt)) return false;
  if (entry.model !== undefined && !new RegExp(entry.model).test(request.model ?? '')) return false;
  return true;
}

/** About four characters a token: good enough for offline runs, where nothing is billed. */
function estimateUsage(prompt: string, reply: string): Usage {
  return { input_tokens: Math.ceil(prompt.length / 4), output_tokens: Math.ceil(reply.length / 4) };
}

/** Like every runtime, a call made after the cancel does nothing. */
function throwIfCancelled(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw signal.reason instanceof RuntimeError ? signal.reason : new RuntimeError('cancelled', 'cancelled');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
