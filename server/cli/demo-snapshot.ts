import { defaultSnapshotDir, writeSnapshot } from '../../db/demo-snapshot';
import { runCli } from './database';

// npm run build:demo [-- --dir DIR]: the migrated, empty PGlite cluster the embedded default starts from
// (db/demo-snapshot.ts), written inside the package (dist/demo-cluster by default). Part of the build: it
// holds no demo data, so it does not depend on the day it was made.
const USAGE =
  'usage: npm run build:demo [-- --dir DIR]: writes the embedded demo cluster snapshot (dist/demo-cluster).';

runCli(USAGE, { dir: { type: 'string' } }, async ({ values }) => {
  const dir = values.dir ?? defaultSnapshotDir();
  const started = Date.now();
  const { key, bytes } = await writeSnapshot(dir);
  process.stdout.write(
    `demo cluster snapshot ${key}: ${(bytes / 2 ** 20).toFixed(1)} MB in ${dir} (${Date.now() - started} ms)\n`,
  );
});
