import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { StateError } from '../core/errors.js';
import { identityEnv } from '../workspace/git.js';
import { registryGitOk } from './registry-git.js';

export interface InitializedRegistry {
  dir: string;
  commit: string;
}

/**
 * `troupe registry init [dir]`: a new registry in one command: a git repository holding the
 * layout catalog.ts reads (an empty `pipelines/`, an empty `index.json`) and a README saying how
 * to use it, in one first commit. Only a folder that is absent or empty is made into one.
 */
export async function initRegistry(dir: string): Promise<InitializedRegistry> {
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new StateError(`${dir} is not empty: a registry starts in an empty or new folder`, {
      hint: 'give another folder: troupe registry init <dir>',
    });
  }
  mkdirSync(path.join(dir, 'pipelines'), { recursive: true });
  writeFileSync(path.join(dir, 'pipelines', '.gitkeep'), '');
  writeFileSync(path.join(dir, 'index.json'), '[]\n');
  writeFileSync(path.join(dir, 'README.md'), readme(path.basename(path.resolve(dir))));
  await registryGitOk(dir, ['init', '--quiet']);
  const files = ['README.md', 'index.json', 'pipelines/.gitkeep'];
  await registryGitOk(dir, ['add', '--', ...files]);
  const env = await identityEnv(dir);
  await registryGitOk(dir, ['commit', '--quiet', '--no-verify', '-m', 'Start a troupe registry'], { env });
  const commit = (await registryGitOk(dir, ['rev-parse', 'HEAD'])).trim();
  return { dir, commit };
}

function readme(name: string): string {
  return `# ${name}: a troupe pipeline registry

Pipelines shared by a team, published and pulled with [troupe](https://www.npmjs.com/package/troupe)
(docs/registry.md). aqm reads this layout too.

\`\`\`sh
troupe publish review --registry <this repository>     # adds pipelines/review/<version>/ and its index entry
troupe search --registry <this repository>             # every pipeline, with its versions
troupe pull review@^1.0 --registry <this repository>   # installs it into .troupe/pipelines/review/
\`\`\`

Set \`registry: <git url or path>\` in a project's \`.troupe/config.yaml\` (or in
\`~/.config/troupe/config.yaml\`) and \`--registry\` can be left out.

## Layout

\`\`\`
index.json                               maintained by troupe publish
pipelines/<name>/<version>/agents.yaml   the pipeline
pipelines/<name>/<version>/README.md
pipelines/<name>/<version>/meta.json     {name, version, description, tags, agents_count}
\`\`\`

A published version never changes: \`troupe pull\` checks every file against the sha256 that
\`index.json\` and the puller's \`pipelines.lock\` record.
`;
}
