import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { withoutStaleRows } from '../db/workarounds/postgres-js-stale-rows';
import { ORIGINAL_HELPER, REPLACEMENT_HELPER, trpcObjectSpread } from '../scripts/workarounds/trpc-object-spread';

// Every workaround for a third-party defect lives in a workarounds/ folder, one module a defect: the
// running service's in db/workarounds/ and server/workarounds/, the build's in scripts/workarounds/. Each names the dependency
// version it was written for. When an upgrade moves the installed version, its test here fails: whoever
// upgrades checks whether the defect is fixed (each module says how), then removes the workaround or
// moves its version forward.
const root = path.resolve(import.meta.dirname, '..');
const modules = ['db/workarounds', 'server/workarounds', 'scripts/workarounds'].flatMap((folder) =>
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

describe("tRPC's object spread helper, swapped in the vendored bundle", () => {
  const dist = path.join(root, 'node_modules/@trpc/server/dist');
  const defining = readdirSync(dist)
    .filter((name) => name.endsWith('.mjs'))
    .map((name) => readFileSync(path.join(dist, name), 'utf8'))
    .filter((contents) => contents.includes('function _objectSpread2('));

  it('is defined by one module of the installed @trpc/server, in the text the build replaces', () => {
    expect(defining).toHaveLength(1);
    expect(defining[0]).toContain(ORIGINAL_HELPER);
  });

  /** The helper with the runtime helpers it calls, from the module that defines it, as a function. */
  function helper(text: string): (...sources: unknown[]) => Record<PropertyKey, unknown> {
    const contents = defining[0] ?? '';
    const start = contents.indexOf('function _typeof(');
    const end = contents.indexOf(ORIGINAL_HELPER) + ORIGINAL_HELPER.length;
    const runtime = contents.slice(start, end).replace(ORIGINAL_HELPER, text);
    return new Function(`${runtime}\nreturn _objectSpread2;`)() as never;
  }
  const original = helper(ORIGINAL_HELPER);
  const replacement = helper(REPLACEMENT_HELPER);

  /** Own keys in order, with each property's descriptor, and the prototype: what tells two objects apart. */
  const shape = (value: object) => ({
    keys: Reflect.ownKeys(value),
    descriptors: Object.getOwnPropertyDescriptors(value),
    prototype: Object.getPrototypeOf(value),
  });

  const symbol = Symbol('s');
  const hidden = Object.defineProperty({ shown: 1 }, 'hidden', { value: 2, enumerable: false });
  const withGetter = {
    get computed() {
      return 'got';
    },
  };
  const cases: [string, () => unknown[]][] = [
    ['a context and what a middleware adds', () => [{}, { db: 1, log: 2, now: 3 }, { partner: 4, db: 5 }]],
    ['the compiled `{ ...a, b }`: a source, then a literal copied by descriptor', () => [{}, { a: 1 }, {}, withGetter]],
    ['null and undefined sources', () => [{}, null, {}, undefined]],
    ['symbol keys and a non-enumerable property', () => [{}, { [symbol]: 1, n: 2 }, {}, hidden]],
    ['keys Object.prototype holds', () => [{}, { constructor: 1, toString: 2, hasOwnProperty: 3 }]],
    [
      'an own __proto__ key (JSON.parse makes one)',
      () => [{}, JSON.parse('{"__proto__": {"polluted": true}, "x": 1}')],
    ],
    ['a getter in a spread source is read once, as a value', () => [{}, withGetter]],
    ['a string source', () => [{}, 'ab']],
    ['numeric keys', () => [{}, { 2: 'b', 1: 'a', z: 'z' }]],
    ['a target literal with keys of its own', () => [{ kept: 1, replaced: 1 }, { replaced: 2 }]],
  ];

  it.each(cases)('gives the same object: %s', (_case, args) => {
    expect(shape(replacement(...args()))).toEqual(shape(original(...args())));
  });

  it('is what the vendor build bundles (scripts/build.ts)', async () => {
    const result = await build({
      stdin: { contents: "export { initTRPC } from '@trpc/server';", resolveDir: root },
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
      plugins: [trpcObjectSpread()],
    });
    const output = result.outputFiles[0]?.text ?? '';
    // One copy of the helper in the bundle, and it is the replacement (absent without the plugin).
    expect(output.match(/function _objectSpread2\(/g)).toHaveLength(1);
    expect(output).toContain('Object.assign(e, t)');
  });
});
