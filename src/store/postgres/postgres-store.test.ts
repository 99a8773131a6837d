import { afterAll, describe, expect, it } from 'vitest';
import {
  dropSchemas,
  PG_URL,
  postgresUnreachable,
  scratchSchemaName,
} from '../../../test/support/postgres.js';
import { storeContract } from '../contract.js';
import { openPostgresStore } from './postgres-store.js';

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

function openScratch(options: Parameters<typeof openPostgresStore>[1] = {}) {
  const schema = options?.schema ?? scratchSchemaName();
  schemas.add(schema);
  return openPostgresStore(PG_URL, { ...options, schema });
}

if (unreachable) {
  describe.skip(`postgres store: ${unreachable}`, () => {
    it('needs PostgreSQL', () => {});
  });
} else {
  storeContract('postgres', () => openScratch());
}
