import { z } from 'zod';
import { busApi } from './bus.js';
import type { Route } from './define.js';
import { named } from './define.js';
import { liveApi } from './events.js';
import { Diagnostic, pipelineApi } from './pipelines.js';
import { queueApi } from './queue.js';
import { registryApi } from './registry.js';
import { runApi } from './run.js';
import { serverApi } from './server.js';
import { taskApi } from './tasks.js';
import { trackerApi } from './trackers.js';
import { usageApi } from './usage.js';
import { workerApi } from './workers.js';

/** What every error answers; `diagnostics` (and the refused `content`) for a pipeline that cannot be saved. */
export const ErrorBody = named(
  'Error',
  z.strictObject({
    error: z.strictObject({
      code: z.string(),
      message: z.string(),
      hint: z.string().optional(),
      diagnostics: z.array(Diagnostic).optional(),
      content: z.string().optional(),
    }),
  }),
);

/** Every route of the API. */
export const apiRoutes: readonly Route[] = [
  ...Object.values(taskApi),
  ...Object.values(runApi),
  ...Object.values(pipelineApi),
  ...Object.values(usageApi),
  ...Object.values(busApi),
  ...Object.values(workerApi),
  ...Object.values(queueApi),
  ...Object.values(registryApi),
  ...Object.values(liveApi),
  ...Object.values(serverApi),
  ...Object.values(trackerApi),
];
