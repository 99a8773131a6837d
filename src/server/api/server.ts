import { z } from 'zod';
import { json, route } from './define.js';

/** The server's own state, and this contract. */
export const serverApi = {
  health: route({
    method: 'get',
    path: '/api/health',
    summary: 'the server is up',
    responses: {
      200: json(
        'ok',
        z.strictObject({
          ok: z.literal(true),
          version: z.string(),
          last_seq: z.int(),
          running: z.array(z.string()).describe('the tasks this process runs now'),
        }),
      ),
    },
  }),
  openapi: route({
    method: 'get',
    path: '/api/openapi.json',
    summary: 'this document',
    responses: { 200: json('OpenAPI 3.1', z.record(z.string(), z.unknown())) },
  }),
};
