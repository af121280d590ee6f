import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

/**
 * Defect: @trpc/server ships its object spreads compiled to the `_objectSpread2` helper of its bundler's
 * runtime, which copies every property with its own `in` check and assignment or `Object.defineProperty`.
 * tRPC spreads a call's whole context at each level of its middleware chain (`{ ...opts.ctx,
 * ...next.ctx }`) and the call's options around each middleware, so this helper is paid several times per
 * call, property by property: a large share of the server's CPU for GET /brands, an answer from memory,
 * in a profile (BENCHMARKS.md § Round 7 has what the swap bought).
 *
 * Workaround: the bundle in dist/vendor (scripts/build.ts) gets the same helper with `Object.assign` for a
 * spread source, which V8 copies in one step. It gives the same object: the helper's own per-key branch
 * assigns (`e[r] = t`) every key the target does not already have, and defines the others; on the fresh
 * object literals the compiled spreads start from, the only key where defining and assigning differ is
 * `__proto__` (Object.prototype's one accessor), so a source that owns that key still takes the original
 * path. The other branch of the helper (copying descriptors) is kept as it was. Only the running server's
 * bundle changes; tests run tRPC as installed, and test/workarounds.test.ts holds the two helpers to the
 * same results.
 *
 * Remove when: @trpc/server's build emits native object spread (its dist no longer defines
 * `_objectSpread2`); the build then fails here, as it does when the helper's text changes.
 */
export const writtenFor = { dependency: '@trpc/server', version: '11.25.2' } as const;

/** The helper as @trpc/server's dist defines it (one module defines it, the others import it). */
export const ORIGINAL_HELPER = `function _objectSpread2(e) {
	for (var r = 1; r < arguments.length; r++) {
		var t = null != arguments[r] ? arguments[r] : {};
		r % 2 ? ownKeys(Object(t), !0).forEach(function(r) {
			_defineProperty(e, r, t[r]);
		}) : Object.getOwnPropertyDescriptors ? Object.defineProperties(e, Object.getOwnPropertyDescriptors(t)) : ownKeys(Object(t)).forEach(function(r) {
			Object.defineProperty(e, r, Object.getOwnPropertyDescriptor(t, r));
		});
	}
	return e;
}`;

/** The same helper, a spread source copied by Object.assign unless it owns a `__proto__` key. */
export const REPLACEMENT_HELPER = `function _objectSpread2(e) {
	for (var r = 1; r < arguments.length; r++) {
		var t = null != arguments[r] ? arguments[r] : {};
		r % 2 ? Object.prototype.propertyIsEnumerable.call(t, "__proto__") ? ownKeys(Object(t), !0).forEach(function(r) {
			_defineProperty(e, r, t[r]);
		}) : Object.assign(e, t) : Object.getOwnPropertyDescriptors ? Object.defineProperties(e, Object.getOwnPropertyDescriptors(t)) : ownKeys(Object(t)).forEach(function(r) {
			Object.defineProperty(e, r, Object.getOwnPropertyDescriptor(t, r));
		});
	}
	return e;
}`;

const TRPC_DIST = /[\\/]@trpc[\\/]server[\\/]dist[\\/].*\.m?js$/;

/**
 * The esbuild plugin of the vendor build: swaps the helper in the @trpc/server module that defines it.
 * Fails the build when a module defines `_objectSpread2` in any other text, or when no module did.
 */
export function trpcObjectSpread(): Plugin {
  return {
    name: 'trpc-object-spread',
    setup(build) {
      let replaced = 0;
      build.onStart(() => {
        replaced = 0;
      });
      build.onLoad({ filter: TRPC_DIST }, async (args) => {
        const contents = await readFile(args.path, 'utf8');
        if (!contents.includes('function _objectSpread2(')) return undefined;
        if (!contents.includes(ORIGINAL_HELPER))
          throw new Error(`${args.path}: _objectSpread2 changed; see scripts/workarounds/trpc-object-spread.ts`);
        replaced++;
        return { contents: contents.replace(ORIGINAL_HELPER, REPLACEMENT_HELPER), loader: 'js' };
      });
      build.onEnd((result) => {
        if (result.errors.length === 0 && replaced === 0)
          throw new Error(
            'no @trpc/server module defined _objectSpread2; see scripts/workarounds/trpc-object-spread.ts',
          );
      });
    },
  };
}
