import { existsSync } from 'node:fs';
import { cp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { snapshotFolder, writeSnapshot } from '../server/demo';

// `npm run build`: each source file to dist/ in the same layout, packages external (D-24), then the demo (D-1).

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'dist');
/** Source folders of the running service; tests, benchmarks and the SDK are not part of the build. */
export const SOURCE_DIRS = ['server', 'db', 'routers'];
/** Files read at run time, copied beside the compiled modules that read them. */
export const ASSETS = ['db/migrations', 'docs/partner-guide.md', 'sdk/README.md'];

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

// Node's ES loader needs the file itself: each extensionless relative import becomes its `.js` file.
const relativeImportsAsJs: Plugin = {
  name: 'relative-imports-as-js',
  setup(context) {
    context.onResolve({ filter: /^\.\.?\// }, (args) => {
      const target = path.resolve(args.resolveDir, args.path);
      if (existsSync(`${target}.ts`)) return { path: `${args.path}.js`, external: true };
      if (existsSync(path.join(target, 'index.ts'))) return { path: `${args.path}/index.js`, external: true };
      return undefined;
    });
  },
};

async function main() {
  const started = performance.now();
  // dist/ emptied of all but the demo's snapshot for these migrations: its name says what it holds, and a
  // demo starting meanwhile may be copying it.
  const snapshot = path.basename(snapshotFolder(OUT));
  for (const entry of await readdir(OUT).catch(() => []))
    if (entry !== snapshot) await rm(path.join(OUT, entry), { recursive: true, force: true });
  const entryPoints = (await Promise.all(SOURCE_DIRS.map(sources))).flat();
  await build({
    entryPoints,
    outdir: OUT,
    outbase: ROOT,
    bundle: true,
    packages: 'external',
    plugins: [relativeImportsAsJs],
    platform: 'node',
    format: 'esm',
    target: 'node22',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  for (const asset of ASSETS) await cp(path.join(ROOT, asset), path.join(OUT, asset), { recursive: true });
  await writeSnapshot(OUT);
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`built ${entryPoints.length} modules into dist/ in ${ms} ms\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) await main();
