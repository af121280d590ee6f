// Builds the package twice from the same sources: dist/esm (import) and dist/cjs (require), each with its
// declarations. dist/cjs gets a package.json of type commonjs, so Node and TypeScript read the files there
// as CommonJS while the package itself stays an ES module package.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.resolve(sdk, '../node_modules/.bin/tsc');
rmSync(path.join(sdk, 'dist'), { recursive: true, force: true });
// The two builds write apart (dist/esm, dist/cjs), so they run side by side.
const builds = ['tsconfig.build.json', 'tsconfig.cjs.json'].map((config) =>
  promisify(execFile)(tsc, ['-p', path.join(sdk, config)]).catch((error) => {
    // tsc prints its errors on stdout.
    process.stdout.write(error.stdout ?? '');
    process.stderr.write(error.stderr ?? '');
    throw error;
  }),
);
const failed = (await Promise.allSettled(builds)).some((build) => build.status === 'rejected');
if (failed) process.exit(1);
mkdirSync(path.join(sdk, 'dist/cjs'), { recursive: true });
writeFileSync(path.join(sdk, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
