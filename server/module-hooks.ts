import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

// Start-up module loading for `npm start` (`node --import tsx --import ./server/module-hooks.ts …`).
// Loading the server's modules took 2.5–6.5 s and left ≈ 280 MB resident before the database was opened;
// two costs, both outside this code, made up most of it:
// - Node 24 (24.21) parses a package's whole `exports` map each time it looks up the package of a file
//   it resolves (package_json_reader's getPackageScopeConfig spreads its lazily parsed fields). drizzle-orm's
//   package.json is 179 KB and its ESM build is a few hundred files, each with relative imports: ≈ 1 s and
//   ≈ 100 MB of garbage per process (Node 20 takes 70 ms for the same imports).
// - tsx rewrites every ES module it loads, node_modules included, and builds a source map for it
//   (≈ 0.5 s for PGlite's 1 MB of emscripten glue alone).
// Both hooks only take the shortcut where the answer is already known; everything else goes the normal way
// (tsx for our TypeScript, Node for the rest). Hooks registered later run first, so this file comes after
// tsx on the command line.

const DRIZZLE = '/node_modules/drizzle-orm/';

function isRelative(specifier: string) {
  return specifier.startsWith('./') || specifier.startsWith('../');
}

// tsx turns source maps on for every module (process.setSourceMapsEnabled(true)), and Node then reads and
// keeps the map of each installed file that names one (drizzle-orm ships one per file). Stack traces of
// our TypeScript keep theirs; installed packages' frames stay as they are.
nodeModule.setSourceMapsSupport?.(true, { nodeModules: false, generatedCode: true });

// module.registerHooks exists from Node 22.15 / 23.5; on an older node the start is just slower.
nodeModule.registerHooks?.({
  resolve(specifier, context, nextResolve) {
    // drizzle-orm's ESM files import each other by relative path with the `.js` extension and its
    // package.json says `"type": "module"`: the URL and the format need no package lookup.
    const parent = context.parentURL;
    if (parent?.startsWith('file:') && parent.includes(DRIZZLE) && isRelative(specifier) && specifier.endsWith('.js'))
      return { url: new URL(specifier, parent).href, format: 'module', shortCircuit: true };
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    // An installed package's ES module (the resolver already said so) is plain JavaScript: read as is.
    if (context.format === 'module' && url.startsWith('file:') && url.includes('/node_modules/') && /\.m?js$/.test(url))
      return { format: 'module', source: readFileSync(fileURLToPath(url)), shortCircuit: true };
    return nextLoad(url, context);
  },
});
