import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { loadProjectConfig, saveConfig } from '../pipeline/config.js';
import type { Team } from '../pipeline/team.js';
import { type PipelineTemplate, templatePipeline } from '../pipeline/templates.js';

/**
 * `troupe init`'s writing half: `.troupe/` with the chosen template cast onto the team, as the
 * default pipeline. With the scripted runtime (no CLI here), the template's own script comes too,
 * so the first `troupe run` works offline.
 */

export interface InitChoice {
  root: string;
  name: string;
  template: PipelineTemplate;
  team: Team;
  force?: boolean;
}

/** A file written, relative to the project root, and what it is. */
export interface WrittenFile {
  file: string;
  what: string;
}

export function initProject(choice: InitChoice): WrittenFile[] {
  const { root, name, team } = choice;
  const pipelineFile = path.join(root, '.troupe', 'pipelines', `${name}.yaml`);
  if (existsSync(pipelineFile) && !choice.force) {
    throw new UsageError(`${path.relative(root, pipelineFile)} already exists`, {
      hint: 'pass --force to overwrite it, or --name another',
    });
  }
  // a broken config is refused before anything is written
  const current = loadProjectConfig(root).default_pipeline;
  if (current && current !== name && !choice.force) {
    throw new UsageError(`the project's default pipeline is already ${current}; init would make it ${name}`, {
      hint: `pass --force to make ${name} the default, or \`troupe pipeline create ${name}\` to add it beside`,
    });
  }
  const { yaml: text } = templatePipeline(choice.template, pipelineFile, { team, validate: { name } });
  const written: WrittenFile[] = [];
  const write = (file: string, what: string, content: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
    written.push({ file, what });
  };
  write(path.relative(root, pipelineFile), `${choice.template.name}, the default pipeline`, text);
  const config: Record<string, unknown> = { default_pipeline: name };
  if (team.writer === 'scripted' || team.reviewer === 'scripted') {
    const script = `.troupe/scripts/${name}.yaml`;
    write(script, 'offline replies for the scripted runtime', readFileSync(choice.template.script, 'utf8'));
    config.script = script;
  }
  written.push(...writeStateGitignore(root, { scripts: 'script' in config }));
  saveConfig(root, config);
  written.push({ file: '.troupe/config.yaml', what: Object.keys(config).join(', ') });
  return written;
}

/**
 * troupe's state stays out of commits however the project is committed (inside a worktree task
 * troupe also excludes it in .git/info/exclude, docs/workspaces.md); what people write stays in.
 */
const STATE_GITIGNORE = `# troupe's state: task store, task files, worktrees, scratch checkouts (written by troupe init)
/*
!/.gitignore
!/pipelines/
!/scripts/
!/config.yaml
!/params.yaml
!/pipelines.lock
`;

/**
 * `.troupe/.gitignore`, when there is none yet; an older one gets `!/scripts/` when a script is
 * written there, so that it is committed with the config naming it.
 */
export function writeStateGitignore(root: string, options: { scripts?: boolean } = {}): WrittenFile[] {
  const file = path.join(root, '.troupe', '.gitignore');
  if (existsSync(file)) {
    if (options.scripts && !readFileSync(file, 'utf8').includes('!/scripts/'))
      appendFileSync(file, '!/scripts/\n');
    return [];
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, STATE_GITIGNORE);
  return [{ file: '.troupe/.gitignore', what: "keeps troupe's state out of git" }];
}
