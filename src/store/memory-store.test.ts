import { storeContract } from './contract.js';
import { openMemoryStore } from './memory-store.js';

storeContract('memory', openMemoryStore);
