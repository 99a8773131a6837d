import { Hono } from 'hono';
import { loadProjectConfig } from '../../pipeline/config.js';
import { matches, readCatalog, type Skipped, versionFolders } from '../../registry/catalog.js';
import { openRegistry } from '../../registry/checkout.js';
import { chooseRegistry, locationText } from '../../registry/location.js';
import { readLock } from '../../registry/lock.js';
import { pullNamed } from '../../registry/pull.js';
import { resolveVersion } from '../../registry/reference.js';
import { registryApi } from '../api/registry.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';

/**
 * The project's registry (its `registry:`, the user's, else the default): the catalog with the
 * versions installed here, one pipeline's versions, and a version pulled into the project. A pull
 * never asks: local changes are refused (409) unless `force` is given.
 */
export function registryRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  const project = () => {
    const config = loadProjectConfig(ctx.root);
    const location = chooseRegistry({
      cwd: ctx.root,
      projectRoot: ctx.root,
      projectRegistry: config.registry,
    });
    return { config, location };
  };

  handle(app, registryApi.catalog, async ({ query, reply }) => {
    const { location } = project();
    const registry = await openRegistry(location);
    const skipped: Skipped[] = [];
    const lock = readLock(ctx.root) ?? {};
    const pipelines = readCatalog(registry.dir, (s) => skipped.push(s))
      .filter((entry) => matches(entry, query.query))
      .map((entry) => ({ ...entry, installed: lock[entry.name]?.version ?? null }));
    return reply(200, {
      registry: locationText(location),
      is_default: location.builtIn === true,
      pipelines,
      skipped,
    });
  });

  handle(app, registryApi.versions, async ({ params: { name }, reply }) => {
    const { location } = project();
    const versions = versionFolders((await openRegistry(location)).dir, name).map((v) => v.version);
    const latest = resolveVersion(name, versions, null);
    return reply(200, { name, registry: locationText(location), versions, latest });
  });

  handle(app, registryApi.pull, async ({ params: { name }, body, reply }) => {
    const { config, location } = project();
    const result = await pullNamed({
      root: ctx.root,
      config,
      force: body.force === true,
      location,
      ref: { name, range: body.version },
    });
    return reply(200, result);
  });

  return app;
}
