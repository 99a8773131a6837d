import { z } from 'zod';
import { json, named, route } from './define.js';

/**
 * The pipeline registry over HTTP (docs/registry.md, "Over HTTP"): what the project's registry
 * holds, each pipeline with its versions, and a version pulled into the project, as `troupe
 * search` and `troupe pull NAME@VERSION` do. Names and versions come from a client: both are
 * checked here before the registry or the project's files are touched.
 */

/** Letters, digits, `.`, `_` and `-`, not starting with a dot (registry/reference.ts, PIPELINE_NAME). */
export const RegistryName = z
  .string()
  .max(100)
  .regex(/^(?!\.)[\w.-]+$/, 'a pipeline name is letters, digits, ., _ and -, not starting with a dot');

/** One exact semver version (`1.2.0`, `2.0.0-rc.1`): what the version dropdown offers. */
export const RegistryVersion = z
  .string()
  .max(64)
  .regex(
    /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/,
    'a version is a semver version such as 1.2.0',
  );

export const RegistryPipeline = named(
  'RegistryPipeline',
  z.strictObject({
    name: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    versions: z.array(z.string()).describe('ascending by semver: the latest is last'),
    latest: z.string().nullable(),
    installed: z
      .string()
      .nullable()
      .describe('the version pipelines.lock records for this project; null: not pulled'),
  }),
);

export const RegistryCatalog = named(
  'RegistryCatalog',
  z.strictObject({
    registry: z.string().describe('the git URL or path of the registry'),
    is_default: z.boolean().describe('the default registry: no `registry:` is configured'),
    pipelines: z.array(RegistryPipeline),
    skipped: z
      .array(z.strictObject({ what: z.string(), reason: z.string() }))
      .describe('pipelines or versions left out because they cannot be read'),
  }),
);

export const RegistryPulled = named(
  'RegistryPulled',
  z.strictObject({
    name: z.string(),
    version: z.string(),
    registry: z.string(),
    hash: z.string().describe('sha256 of the installed files, as pipelines.lock records it'),
    status: z.enum(['installed', 'unchanged']),
  }),
);

export const registryApi = {
  catalog: route({
    method: 'get',
    path: '/api/registry',
    summary: "the project's registry: each pipeline with its versions and the version installed here",
    query: z.object({
      query: z
        .string()
        .max(200)
        .optional()
        .describe('words that must all occur in the name, description or a tag'),
    }),
    responses: { 200: json('the registry', RegistryCatalog) },
    errors: [400],
  }),
  versions: route({
    method: 'get',
    path: '/api/registry/:name/versions',
    summary: "a registry pipeline's versions, oldest first",
    params: z.object({ name: RegistryName }),
    responses: {
      200: json(
        'versions',
        z.strictObject({
          name: z.string(),
          registry: z.string(),
          versions: z.array(z.string()),
          latest: z.string().nullable(),
        }),
      ),
    },
    errors: [400, 404],
  }),
  pull: route({
    method: 'post',
    path: '/api/registry/:name/pull',
    summary:
      'install a version of a registry pipeline into .troupe/pipelines/<name>/ (validated first, pinned in pipelines.lock)',
    params: z.object({ name: RegistryName }),
    body: z.strictObject({
      version: RegistryVersion.describe('the version to install, one of the pipeline\u2019s versions'),
      force: z.boolean().optional().describe('overwrite local changes to the installed pipeline'),
    }),
    responses: { 200: json('installed, or already installed as locked', RegistryPulled) },
    errors: [400, 404, 409, 422],
  }),
};
