import { afterAll } from 'vitest';
import { closeFileResources } from './after-file';

// A setup file: vitest runs it before each test file, so each file's copies and servers are closed after it.
afterAll(closeFileResources);
