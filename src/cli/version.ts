import { packageVersion } from '../package-root.js';

export const VERSION: string = packageVersion();
