import { ActionRequiredError } from '../../../bus/errors.js';
import { UsageError } from '../../../core/errors.js';
import { launcherAvailable } from '../../../live/launch.js';
import { isAdapter } from '../../../live/launch-config.js';
import { LAUNCHERS, parseLauncherPreference } from '../../../live/launcher-preference.js';
import { applySetup, projectDirOf, readSetupState } from '../../../live/setup-files.js';
import { planDigest, planSetup, type SetupPlan } from '../../../live/setup-plan.js';
import { Tmux } from '../../../live/tmux.js';
import { runDoctor } from '../../../runtimes/doctor-checks.js';
import type { CommandIo } from '../../command-io.js';
import { Exit } from '../../exit-codes.js';
import { type BusFlags, printJson, splitList } from './context.js';

/**
 * `troupe bus setup`: a plan from the CLIs found here and the files already there; `--preview`
 * writes nothing, `--apply <digest>` writes that plan only if it is still the plan (else exit 6).
 */
export async function setup(flags: BusFlags, io: CommandIo): Promise<number> {
  if (flags.preview && (flags.apply || flags.yes))
    throw new UsageError('--preview writes nothing: drop --apply/--yes');
  const projectDir = projectDirOf(io.cwd);
  const report = await runDoctor({ cwd: projectDir });
  const detected = report.clis.flatMap((c) => (c.installed && isAdapter(c.runtime) ? [c.runtime] : []));
  const agents = flags.agents === undefined ? undefined : splitList(flags.agents);
  const session = defaultSession(flags);
  const launcherPreference =
    flags.launcherPreference === undefined ? undefined : parseLauncherPreference(flags.launcherPreference);
  const tmux = new Tmux();
  const plan = planSetup(
    {
      detected,
      availableLaunchers: LAUNCHERS.filter((l) => launcherAvailable(l, tmux, process.env)),
      ...(agents ? { agents } : {}),
      ...(session ? { session } : {}),
      ...(launcherPreference ? { launcherPreference } : {}),
    },
    readSetupState(projectDir),
  );
  const digest = planDigest(plan);
  if (flags.apply !== undefined && flags.apply !== digest) {
    throw new ActionRequiredError(
      `the setup plan changed since its preview (now ${digest}); nothing was written`,
      {
        hint: 'run `troupe bus setup --preview` again, review it, and apply its digest',
      },
    );
  }
  const apply = flags.apply !== undefined || flags.yes === true;
  if (apply) applySetup(plan);
  for (const note of plan.notes) io.err(`troupe: ${note}\n`);
  if (flags.json) printJson(io, { [apply ? 'applied' : 'preview']: { digest, plan } });
  else io.out(describe(plan, digest, apply));
  // without an approval, the operator still has to apply it (AMQ: exit 6)
  return apply || flags.preview ? Exit.ok : Exit.actionRequired;
}

/** `--default-session` (AMQ's spelling) or `--session` (troupe's earlier one): one name. */
function defaultSession(flags: BusFlags): string | undefined {
  const { defaultSession, session } = flags;
  if (defaultSession !== undefined && session !== undefined && defaultSession !== session)
    throw new UsageError(`--default-session ${defaultSession} and --session ${session} disagree: give one`);
  return defaultSession ?? session;
}

function describe(plan: SetupPlan, digest: string, applied: boolean): string {
  const agents = plan.roster.map((r) =>
    r.kind === 'agent' ? `${r.handle} (${r.adapter})` : `${r.handle} (person)`,
  );
  const lines = [
    `${applied ? 'Set up' : 'Plan for'} ${plan.project_dir}`,
    `  roster: ${agents.join(', ')}`,
    `  session: ${plan.default_session} (in ${plan.root}/${plan.default_session})`,
    `  launcher preference: ${plan.launcher_preference.join(', ')}`,
    `  CLIs found: ${plan.detected.join(', ') || 'none'}`,
    ...plan.files.map((f) => `  ${f.action.padEnd(7)} ${f.path}`),
    `  ${applied ? 'created' : 'create '} ${plan.mailboxes.length} mailbox(es)`,
    `digest: ${digest}`,
  ];
  if (!applied) lines.push(`apply it with: troupe bus setup --apply ${digest}${flagsEcho(plan)}`);
  return `${lines.join('\n')}\n`;
}

function flagsEcho(plan: SetupPlan): string {
  const agents = plan.roster.flatMap((r) => (r.kind === 'agent' ? [`${r.handle}:${r.adapter}`] : []));
  return ` --agents ${agents.join(',')} --default-session ${plan.default_session} --launcher-preference ${plan.launcher_preference.join(',')}`;
}
