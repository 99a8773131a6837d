#!/usr/bin/env node
import module from 'node:module';

// Node 22+ caches compiled code between runs; Node 20 has no such cache and skips this.
module.enableCompileCache?.();
await import('../dist/bundle/main.js');
