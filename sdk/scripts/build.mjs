// Builds the package twice from the same sources: dist/esm (import) and dist/cjs (require), each with its
// declarations. dist/cjs gets a package.json of type commonjs, so Node and TypeScript read the files there
// as CommonJS while the package itself stays an ES module package.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.resolve(sdk, '../node_modules/.bin/tsc');
rmSync(path.join(sdk, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  execFileSync(tsc, ['-p', path.join(sdk, config)], { stdio: 'inherit' });
}
mkdirSync(path.join(sdk, 'dist/cjs'), { recursive: true });
writeFileSync(path.join(sdk, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
