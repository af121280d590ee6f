import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutStaleRows } from '../db/workarounds/postgres-js-stale-rows';

// Every workaround for a third-party defect lives in a workarounds/ folder, one module a defect:
// db/workarounds/ and server/http/workarounds/. Each names the dependency version it was written for. When an
// upgrade moves the installed version, its test here fails: whoever upgrades checks whether the defect is
// fixed (each module says how), then removes the workaround or moves its version forward.
const root = path.resolve(import.meta.dirname, '..');
const modules = ['db/workarounds', 'server/http/workarounds'].flatMap((folder) =>
  readdirSync(path.join(root, folder))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `${folder}/${name}`),
);

function installedVersion(dependency: string): string {
  const manifest = path.join(root, 'node_modules', dependency, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

describe('workarounds for third-party defects', () => {
  it('are there to check', () => {
    expect(modules.length).toBeGreaterThan(0);
  });

  for (const name of modules) {
    it(`${name} was written for the installed version of its dependency`, async () => {
      const { writtenFor } = (await import(path.join(root, name))) as {
        writtenFor?: { dependency: string; version: string };
      };
      expect(writtenFor, 'a workaround module exports writtenFor').toBeDefined();
      if (!writtenFor) return;
      expect(
        installedVersion(writtenFor.dependency),
        `${writtenFor.dependency} moved: check whether ${name} is still needed`,
      ).toBe(writtenFor.version);
    });
  }
});

describe('postgres.js stale rows (porsager/postgres#1119)', () => {
  it("keep a result's last `count` rows: the leading empty slots are another statement's", () => {
    const stale = Object.assign([undefined, undefined, { x: 1 }, { x: 2 }], { count: 2 });
    expect([...withoutStaleRows(stale)]).toEqual([{ x: 1 }, { x: 2 }]);
    const own = Object.assign([{ x: 1 }], { count: 1 });
    expect(withoutStaleRows(own)).toBe(own);
    expect([...withoutStaleRows(own)]).toEqual([{ x: 1 }]);
  });
});

// patches/ holds patch-package patches (applied by `npm ci`'s postinstall), each named for the version it
// was made for: an upgrade that moves the version fails here, and patch-package refuses a patch that no
// longer applies.
describe('patches of installed packages', () => {
  const patches = readdirSync(path.join(root, 'patches')).filter((name) => name.endsWith('.patch'));

  it.each(patches)('%s was made for the installed version', (name) => {
    const [, dependency, version] = /^(.+)\+([^+]+)\.patch$/.exec(name) ?? [];
    expect(dependency && version, `${name}: <package>+<version>.patch`).toBeTruthy();
    expect(installedVersion(String(dependency)), `${dependency} moved: check whether ${name} is still needed`).toBe(
      version,
    );
  });
});

// Node's ES loader (24 and 26 alike) parses a package's whole `exports` map for every module file it loads,
// to read the package's `type`. drizzle-orm lists each of its 447 paths (179 KB), which cost about a second
// and 180 MB at every start; the drizzle-orm patch in patches/ states the same paths as its 63 folders and one
// pattern. Remove the patch when a Node release reads only `type` there (importing drizzle-orm/pg-core with
// the published package.json then takes well under 100 ms).
describe('drizzle-orm exports, restated compactly', () => {
  const drizzle = path.join(root, 'node_modules/drizzle-orm');
  const modulesOf = (dir: string): string[] =>
    readdirSync(path.join(drizzle, dir), { withFileTypes: true }).flatMap((entry) => {
      const relative = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : modulesOf(relative);
      return entry.name.endsWith('.js') ? [relative] : [];
    });
  const files = modulesOf('.');

  it('give every module of the package under the path the published map gave it, for import and require', () => {
    // A folder's index is its folder's path; any other file is its own path without the extension, unless a
    // folder of the same name holds an index (pg-core/utils.js beside pg-core/utils/): the folder has it.
    const subpathOf = (file: string) =>
      file.endsWith('/index.js') ? file.slice(0, -'/index.js'.length) : file.slice(0, -'.js'.length);
    const folders = new Set(files.filter((file) => file.endsWith('/index.js')).map(subpathOf));
    const specifiers = files
      .filter((file) => file.endsWith('/index.js') || !folders.has(subpathOf(file)))
      .map((file) => ({
        file,
        specifier: subpathOf(file) === 'index' ? 'drizzle-orm' : `drizzle-orm/${subpathOf(file)}`,
      }));
    expect(specifiers.length).toBeGreaterThan(400);
    const script = `const specifiers = ${JSON.stringify(specifiers.map((s) => s.specifier))};
      const { createRequire } = await import('node:module');
      const require = createRequire(${JSON.stringify(path.join(root, 'package.json'))});
      const { fileURLToPath } = await import('node:url');
      console.log(JSON.stringify(specifiers.map((s) => [fileURLToPath(import.meta.resolve(s)), require.resolve(s)])));`;
    const resolved = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' }),
    ) as [string, string][];
    specifiers.forEach(({ file }, i) => {
      const expected = path.join(drizzle, file);
      expect(resolved[i]).toEqual([expected, expected.replace(/\.js$/, '.cjs')]);
    });
  });
});
