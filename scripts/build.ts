import { existsSync } from 'node:fs';
import { cp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { trpcObjectSpread } from './workarounds/trpc-object-spread';

// `npm run build` (also run by `npm ci` through `prepare`): the server and its CLIs as plain JavaScript in
// dist/, one output file per source file, so the layout (and every path a module resolves from its own
// directory: db/migrations, docs/partner-guide.md) stays as in the source tree (D-24). Installed packages
// are loaded from node_modules at run time, as a production install provides them, except the ones every
// start loads (drizzle-orm, zod, @trpc/server, trpc-to-openapi, express): each is bundled once, with what it
// imports, into dist/vendor, sharing chunks, so one copy of zod serves our schemas and trpc-to-openapi.
// Loading them as hundreds of files cost a start about as much again: Node 24 parses drizzle-orm's whole
// `exports` map (179 KB) each time it resolves one of its modules, and express and trpc-to-openapi pull
// in about 200 small CommonJS and ES modules (BENCHMARKS.md). Packages loaded only when configured (the
// PostgreSQL driver, Redis, OpenTelemetry, prom-client) or with assets of their own (PGlite, Swagger UI)
// stay in node_modules.

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'dist');
/** Source folders of the running service; tests, benchmarks and the SDK are not part of the build. */
export const SOURCE_DIRS = ['server', 'db', 'routers'];
/** Files read at run time, copied beside the compiled modules that read them. */
export const ASSETS = ['db/migrations', 'docs/partner-guide.md', 'sdk/README.md'];
/** Packages bundled into dist/vendor, one entry per subpath the source imports, sharing chunks. */
const VENDORED = /^(drizzle-orm|zod|@trpc\/server|trpc-to-openapi|express)(\/|$)/;

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

// The source imports its own modules without extensions (`../db/client`, `./routers`); Node's ES module
// loader needs the file itself, so each relative import becomes the `.js` file it compiles to.
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

/** Imports of a vendored package become the relative path of its bundle; the subpaths used are collected. */
function vendored(used: Set<string>): Plugin {
  return {
    name: 'vendored-packages',
    setup(context) {
      context.onResolve({ filter: VENDORED }, (args) => {
        used.add(args.path);
        const from = path.join(OUT, path.relative(ROOT, args.resolveDir));
        const target = path.relative(from, path.join(OUT, 'vendor', `${args.path}.js`));
        return { path: target.startsWith('.') ? target : `./${target}`, external: true };
      });
    },
  };
}

async function main() {
  const started = performance.now();
  await rm(OUT, { recursive: true, force: true });
  const entryPoints = (await Promise.all(SOURCE_DIRS.map(sources))).flat();
  const common = {
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node22',
    sourcemap: 'linked',
    logLevel: 'warning',
  } as const;
  const used = new Set<string>();
  await build({ ...common, entryPoints, outdir: OUT, outbase: ROOT, plugins: [vendored(used), relativeImportsAsJs] });
  await build({
    ...common,
    // Their own imports are bundled too (one instance of each shared package); CommonJS among them calls
    // require() for Node's built-in modules, which an ES module gets from createRequire.
    packages: undefined,
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    entryPoints: [...used].map((specifier) => ({ in: fileURLToPath(import.meta.resolve(specifier)), out: specifier })),
    outdir: path.join(OUT, 'vendor'),
    plugins: [trpcObjectSpread()],
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
  });
  for (const asset of ASSETS) await cp(path.join(ROOT, asset), path.join(OUT, asset), { recursive: true });
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`built ${entryPoints.length} modules into dist/ in ${ms} ms\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) await main();
