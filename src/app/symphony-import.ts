import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { NotFoundError, UsageError } from '../core/errors.js';
import { toPipelineError } from '../pipeline/diagnostics.js';
import { type SettingMapping, workflowPipelineYaml } from '../pipeline/symphony/pipeline.js';
import { validateWorkflowFile } from '../pipeline/symphony/validate.js';
import type { SecretRef, SymphonySettings, Workflow } from '../pipeline/symphony/workflow.js';
import { type WrittenFile, writeStateGitignore } from './init-project.js';

/**
 * `troupe init --from-symphony [WORKFLOW.md]`: a Symphony workflow as a troupe pipeline
 * (`.troupe/pipelines/<name>.yaml`) and the settings `troupe watch` needs
 * (`.troupe/trackers/<name>.md`: WORKFLOW.md's own format, so the same reader reads it, with the
 * prompt template unchanged). The WORKFLOW.md is left as it was; a secret written out in it is
 * never copied (the file says `$LINEAR_API_KEY` instead).
 */

export interface SymphonyConversion {
  written: WrittenFile[];
  /** How each setting carried over: as it is, differently, or not (yet). */
  mapping: SettingMapping[];
  next: string;
}

export function convertSymphonyWorkflow(
  root: string,
  workflowFile: string | undefined,
  options: { name: string; force?: boolean },
): SymphonyConversion {
  const from = path.resolve(root, workflowFile ?? 'WORKFLOW.md');
  if (!existsSync(from))
    throw new NotFoundError(`no ${workflowFile ?? 'WORKFLOW.md'} in ${root}`, {
      hint: 'give its path: troupe init --from-symphony path/to/WORKFLOW.md',
    });
  const result = validateWorkflowFile(from);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0 || !result.workflow) throw toPipelineError(errors);
  const workflow = result.workflow;
  const { yaml, mapping } = workflowPipelineYaml(workflow);
  const files = [
    { to: `.troupe/pipelines/${options.name}.yaml`, text: yaml, what: 'the pipeline: one codex agent' },
    {
      to: `.troupe/trackers/${options.name}.md`,
      text: trackerFile(workflow, mapping),
      what: 'tracker, polling, hooks, limits and the prompt, for troupe watch',
    },
  ];
  const taken = files.filter((f) => existsSync(path.join(root, f.to))).map((f) => f.to);
  if (taken.length && !options.force)
    throw new UsageError(`already in .troupe/: ${taken.join(', ')}; nothing was written`, {
      hint: 'pass --force to overwrite them',
    });
  const written: WrittenFile[] = [];
  for (const f of files) {
    mkdirSync(path.dirname(path.join(root, f.to)), { recursive: true });
    writeFileSync(path.join(root, f.to), f.text);
    written.push({ file: f.to, what: f.what });
  }
  written.push(...writeStateGitignore(root));
  return {
    written,
    mapping,
    next: `troupe validate .troupe/trackers/${options.name}.md && troupe watch --once --dry-run`,
  };
}

/** The settings troupe watch reads, as WORKFLOW.md front matter, then the prompt as written. */
function trackerFile(workflow: Workflow, mapping: SettingMapping[]): string {
  const { tracker, polling, workspace, hooks, agent, codex } = workflow.settings;
  const provider = withoutNulls({
    project_slug: tracker.project_slug,
    endpoint: tracker.endpoint,
    api_key: secretText(tracker.api_key, tracker.kind, mapping),
    assignee: tracker.assignee,
    ...tracker.provider,
  });
  const front = {
    tracker: withoutNulls({
      kind: tracker.kind,
      provider,
      active_states: tracker.active_states,
      terminal_states: tracker.terminal_states,
      ...(tracker.required_labels.length ? { required_labels: tracker.required_labels } : {}),
    }),
    polling,
    workspace,
    hooks: withoutNulls(hooks),
    agent,
    codex: { stall_timeout_ms: codex.stall_timeout_ms },
  };
  const source = path.basename(workflow.file);
  return `---\n# from ${source} (Symphony) by troupe init --from-symphony; the codex settings are in the pipeline\n${stringify(front)}---\n\n${workflow.prompt}\n`;
}

/** A secret as the file may hold it: a `$VAR` reference, never its value. */
function secretText(
  ref: SecretRef | null,
  kind: SymphonySettings['tracker']['kind'],
  mapping: SettingMapping[],
): string | null {
  if (!ref) return null;
  if ('env' in ref) return `$${ref.env}`;
  const variable = kind === 'jira' ? 'JIRA_API_TOKEN' : 'LINEAR_API_KEY';
  mapping.push({
    kind: 'differs',
    what: `tracker.api_key: written out in the WORKFLOW.md, so not copied; the tracker file reads $${variable}: set it in the environment`,
  });
  return `$${variable}`;
}

function withoutNulls<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(record).filter(([, v]) => v !== null && v !== undefined),
  ) as Partial<T>;
}
