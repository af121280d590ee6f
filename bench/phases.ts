import { readFileSync } from 'node:fs';

// npm run bench:phases: the embedded start of `npm start`, phase by phase
// wall time and memory (RSS, V8 heap, external/arrayBuffers, PGlite's WASM memory and in-memory
// files) after each, and the biggest resident mappings at the end. It loads the TypeScript source through
// tsx; `npm start` runs the compiled dist/ (scripts/build.ts), whose module loading is cheaper.

const mb = (n: number) => Math.round(n / 2 ** 20);
let last = 0;
let lastCpu = process.cpuUsage();
let pgliteMemory: (() => string) | undefined;
function mark(phase: string) {
  const now = performance.now();
  const m = process.memoryUsage();
  // CPU time beside wall time: on a machine shared with other work, the wall time is what the CPU time
  // would be on a quiet one plus waiting for a core.
  const cpu = process.cpuUsage(lastCpu);
  lastCpu = process.cpuUsage();
  process.stdout.write(
    `${phase.padEnd(16)} ${String(Math.round(now - last)).padStart(6)} ms (cpu ${String(Math.round((cpu.user + cpu.system) / 1000)).padStart(5)}, t ${String(Math.round(now)).padStart(6)})  rss ${mb(m.rss)}  heapUsed ${mb(m.heapUsed)}/${mb(m.heapTotal)}  external ${mb(m.external)}  arrayBuffers ${mb(m.arrayBuffers)}${pgliteMemory ? `  ${pgliteMemory()}` : ''}\n`,
  );
  last = now;
}

/** Resident memory by mapping, biggest first (Linux). */
function mappings(top: number) {
  const maps: { head: string; size: number; rss: number }[] = [];
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) maps.push({ head: line, size: 0, rss: 0 });
    const current = maps.at(-1);
    if (current && line.startsWith('Size:')) current.size = Number(line.split(/\s+/)[1]);
    if (current && line.startsWith('Rss:')) current.rss = Number(line.split(/\s+/)[1]);
  }
  return maps
    .sort((a, b) => b.rss - a.rss)
    .slice(0, top)
    .map((m) => {
      const [, perms, , , , name] = m.head.split(/\s+/);
      return `  ${String(Math.round(m.rss / 1024)).padStart(5)} MB resident of ${String(Math.round(m.size / 1024)).padStart(6)} MB ${perms} ${name ?? ''}`;
    })
    .join('\n');
}

mark('node ready');
const { createApp } = await import('../server/http/app');
const { openDemoDatabase } = await import('../server/demo');
const { pgliteOf } = await import('../db/client');
const { createServices } = await import('../server/trpc/services');
const { parseConfig } = await import('../server/config');
const { createLogger } = await import('../server/logger');
mark('imports');

const demo = { database: await openDemoDatabase(createLogger('silent')) };
{
  type Fs = { readdir(p: string): string[]; lookupPath(p: string): { node: FsNode }; isDir(mode: number): boolean };
  type FsNode = { mode: number; usedBytes?: number; contents?: Uint8Array };
  const { mod } = pgliteOf(demo.database) as unknown as { mod: { FS: Fs; HEAPU8: Uint8Array } };
  const filesBytes = (dir: string): number =>
    mod.FS.readdir(dir)
      .filter((name) => name !== '.' && name !== '..')
      .reduce((sum, name) => {
        const { node } = mod.FS.lookupPath(`${dir}/${name}`);
        return sum + (mod.FS.isDir(node.mode) ? filesBytes(`${dir}/${name}`) : (node.contents?.byteLength ?? 0));
      }, 0);
  pgliteMemory = () => `wasm ${mb(mod.HEAPU8.byteLength)}  files ${mb(filesBytes('/pglite/data'))}`;
}
mark('demo');
const config = parseConfig({});
const services = createServices(config, demo.database.db, createLogger('silent'));
await services.cache.start();
mark('cache');
createApp(services, { trustProxy: config.TRUST_PROXY, deadlineMs: config.REQUEST_DEADLINE_MS });
mark('app');
globalThis.gc?.();
for (const seconds of [1, 5, 15]) {
  await new Promise((resolve) => setTimeout(resolve, (seconds - (seconds === 1 ? 0 : seconds === 5 ? 1 : 5)) * 1000));
  mark(`idle ${seconds} s`);
}
process.stdout.write(`${mappings(10)}\n`);
process.exit(0);
