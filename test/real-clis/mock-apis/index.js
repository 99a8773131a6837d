export { anthropic } from './anthropic.js';
export { startMock } from './common.js';
export { gemini } from './gemini.js';
export { openai } from './openai.js';
