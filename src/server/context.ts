import type { Context } from 'hono';
import type { EventStore } from '../core/event-store.js';
import type { TaskService } from '../engine/task-service.js';
import { badRequest } from './errors.js';
import type { EventHub } from './event-hub.js';
import type { Runner } from './runner.js';
import type { TaskCache } from './task-cache.js';

/** What every route works with. */
export interface ServerContext {
  root: string;
  store: EventStore;
  tasks: TaskService;
  cache: TaskCache;
  runner: Runner;
  hub: EventHub;
}

export type Body = Record<string, unknown>;

/** The JSON body as an object; an empty body is `{}`. */
export async function jsonBody(c: Context): Promise<Body> {
  const text = await c.req.text();
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badRequest('the body must be a JSON object');
  return value as Body;
}

export function optionalString(body: Body, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw badRequest(`${key} must be a string`);
    return value;
  }
  return undefined;
}

export function requiredString(body: Body, ...keys: string[]): string {
  const value = optionalString(body, ...keys);
  if (value === undefined || !value.trim()) throw badRequest(`${keys[0]} is required`);
  return value;
}

export function stringMap(body: Body, key: string): Record<string, string> {
  const value = body[key];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${key} must be an object`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}
