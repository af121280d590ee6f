/**
 * Prints the router's resolved input and output types into sdk/src/api.generated.ts (D-16).
 *
 * Why not ship `AppRouter` itself: its declarations reach the context, the database and zod, so a partner
 * would need the server's sources and dependencies to compile (trpc/trpc#5004, #6835: tRPC offers no
 * standalone form). Instead the TypeScript compiler resolves `inferRouterInputs/Outputs<AppRouter>`
 * (scripts/router-types.ts) and this script prints each procedure's types as plain object types, with the
 * schemas' `.describe()` texts as doc comments and each operation's OpenAPI meta on its method.
 *
 * `npm run sdk:generate` writes it; the package's `prepack` runs this with `--check` and refuses to pack
 * stale types; test/sdk/types.test.ts fails when the committed file differs from what the router generates.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { z } from 'zod';
import { appRouter } from '../../routers';
import { webhookEventSchema } from '../../routers/webhooks/events.schema';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const GENERATED_FILE = path.join(ROOT, 'sdk/src/api.generated.ts');
const PROBE_FILE = path.join(ROOT, 'sdk/scripts/router-types.ts');

/** Which side of a call a type describes: parameters are printed a little narrower (see `print`). */
type Side = 'input' | 'output';

/** A zod schema as far as this script reads it: its kind, its parts, its description. */
type Schema = z.core.$ZodType;

/** The procedures as the router holds them at run time: for the meta and the descriptions. */
type Procedure = {
  _def: { type: string; meta?: { openapi?: { path?: string; summary?: string } }; inputs: Schema[]; output?: Schema };
};

/**
 * Names for the answers partners handle most. Each is printed once, and wherever the same type is printed
 * again (the list's items and the single read, say) its name stands instead, so an editor's hover shows
 * `Review`, not the whole object.
 */
const NAMED: { name: string; doc: string; call: [string, string]; item: boolean }[] = [
  { name: 'Brand', doc: 'A brand of your partner account.', call: ['brands', 'list'], item: true },
  {
    name: 'User',
    doc: 'A shop owner registered in a brand, with the platform accounts they linked.',
    call: ['users', 'get'],
    item: false,
  },
  { name: 'Shop', doc: 'A shop of a brand on one platform.', call: ['shops', 'list'], item: true },
  {
    name: 'Review',
    doc: 'A review, as the list and the single-review call answer it.',
    call: ['reviews', 'get'],
    item: false,
  },
  {
    name: 'ReviewChange',
    doc: 'An item of the review change feed: an UPSERT carries the review as it is now, a DELETE null.',
    call: ['reviews', 'changes'],
    item: true,
  },
  {
    name: 'ReviewStatsRow',
    doc: 'A row of review statistics: one variant per `group_by`, told apart by it.',
    call: ['reviewStats', 'list'],
    item: true,
  },
  {
    name: 'SalesRow',
    doc: 'A row of sales: one variant per `group_by`, told apart by it.',
    call: ['sales', 'list'],
    item: true,
  },
];

export function generateTypes(): string {
  const { checker, probe } = compileProbe();
  const exported = (name: string) => {
    const symbol = checker.getExportsOfModule(probe).find((candidate) => candidate.name === name);
    if (!symbol) throw new Error(`sdk/scripts/router-types.ts does not export ${name}`);
    return checker.getDeclaredTypeOfSymbol(symbol);
  };
  const inputs = exported('RouterInputs');
  const outputs = exported('RouterOutputs');
  const printer = typePrinter(checker);

  const procedures = appRouter._def.procedures as unknown as Record<string, Procedure>;
  const namespaces = new Map<string, string[]>();
  for (const [key, procedure] of Object.entries(procedures)) {
    if (procedure._def.type !== 'query') throw new Error(`${key}: the SDK only knows queries (GET, D-18)`);
    const [namespace, name, ...rest] = key.split('.');
    if (!namespace || !name || rest.length) throw new Error(`${key}: the SDK expects <namespace>.<procedure>`);
    namespaces.set(namespace, [...(namespaces.get(namespace) ?? []), name]);
  }

  const member = (type: ts.Type, name: string) => {
    const symbol = type.getProperty(name);
    if (!symbol) throw new Error(`the router's inferred types lack ${name}`);
    return checker.getTypeOfSymbol(symbol);
  };

  const namedLines: string[] = [];
  for (const { name, doc, call, item } of NAMED) {
    const [namespace, procedureName] = call;
    const procedure = procedures[`${namespace}.${procedureName}`] as Procedure;
    const data = member(member(member(outputs, namespace), procedureName), 'data');
    const dataSchema = procedure._def.output && childOf(procedure._def.output, 'data');
    const type = item ? elementType(checker, member(data, 'items')) : data;
    if (!type) throw new Error(`${name}: ${namespace}.${procedureName} answers no items`);
    const schema = item ? dataSchema && elementOf(childOf(dataSchema, 'items') as Schema) : dataSchema;
    namedLines.push(`/** ${doc} */`, `export type ${name} = ${printer.name(type, schema, name)};`, '');
  }

  // The body of a webhook delivery (D-28): not a call, so printed from its own schema.
  namedLines.push(
    '/** An event a webhook endpoint receives (partner guide § Webhooks), told apart by `type`. */',
    `export type WebhookEvent = ${printer.print(exported('WebhookEvent'), webhookEventSchema, '', 'output')};`,
    '',
  );

  const inputLines: string[] = [];
  const outputLines: string[] = [];
  const clientLines: string[] = [];
  const parameterLines: string[] = [];
  const feeds: string[] = [];
  for (const [namespace, names] of namespaces) {
    inputLines.push(`  ${namespace}: {`);
    outputLines.push(`  ${namespace}: {`);
    clientLines.push(`  ${namespace}: {`);
    for (const name of names) {
      const procedure = procedures[`${namespace}.${name}`] as Procedure;
      const inputType = member(member(inputs, namespace), name);
      const dataType = member(member(member(outputs, namespace), name), 'data');
      const inputSchema = procedure._def.inputs[0];
      const dataSchema = procedure._def.output && childOf(procedure._def.output, 'data');
      inputLines.push(`    ${name}: ${printer.print(inputType, inputSchema, '    ', 'input')};`);
      outputLines.push(`    ${name}: ${printer.print(dataType, dataSchema, '    ', 'output')};`);
      const openapi = procedure._def.meta?.openapi;
      const optional = inputType.getProperties().every((property) => property.flags & ts.SymbolFlags.Optional);
      const params = `PartnerApiInputs['${namespace}']['${name}']`;
      const data = `PartnerApiOutputs['${namespace}']['${name}']`;
      parameterLines.push(
        `  '${namespace}.${name}': [${checker
          .getNonNullableType(inputType)
          .getProperties()
          .map((p) => `'${p.name}'`)
          .join(', ')}],`,
      );
      const doc = `    /** ${openapi?.summary ?? name}: \`GET ${openapi?.path ?? namespace}\`. Resolves to the envelope's \`data\`; \`.withResponse()\` adds the request id, rate limit and next cursor. */`;
      const groupBy = inputSchema && childOf(inputSchema, 'group_by');
      if (['items', 'has_next', 'next_cursor'].every((key) => dataType.getProperty(key))) {
        // A feed: its pages are chained by the `next_cursor` of their data, so the call is the walk.
        feeds.push(`'${namespace}.${name}'`);
        clientLines.push(
          `    /** ${openapi?.summary ?? name}: \`GET ${openapi?.path ?? namespace}\`. An async iterator over the items after \`cursor\` (from the start without one), page by page until \`has_next\` is false; \`.cursor\` is where to resume, \`.nextPage()\` reads one page. */`,
          `    ${name}(input${optional ? '?' : ''}: ${params}, options?: RequestOptions): ChangeFeed<${data}>;`,
        );
      } else if (groupBy && isObjectUnion(elementType(checker, member(dataType, 'items')))) {
        // A report: its rows are a union told apart by group_by, so the answer narrows by the argument.
        const fallback = JSON.stringify(z.parse(groupBy as z.ZodType, undefined)).replaceAll('"', "'");
        clientLines.push(
          doc,
          `    ${name}<GroupBy extends NonNullable<${params}['group_by']> = ${fallback}>(input${optional ? '?' : ''}: ${params} & { group_by?: GroupBy | undefined }, options?: RequestOptions): APIPromise<NarrowedPage<${data}, GroupBy>>;`,
        );
      } else {
        clientLines.push(
          doc,
          `    ${name}(input${optional ? '?' : ''}: ${params}, options?: RequestOptions): APIPromise<${data}>;`,
        );
      }
    }
    inputLines.push('  };');
    outputLines.push('  };');
    clientLines.push('  };');
  }

  const codes = printer.print(exported('ErrorCode'), undefined, '', 'output');
  const text = [
    '// Generated from the router (routers/index.ts) by sdk/scripts/generate-types.ts: do not edit.',
    '// `npm run sdk:generate` rewrites it; test/sdk/types.test.ts fails when it is stale.',
    '',
    "import type { APIPromise, ChangeFeed, NarrowedPage, RequestOptions } from './request.js';",
    '',
    '/** Every error code the API answers with (the `status` of the error envelope). */',
    `export type PartnerErrorCode = ${codes};`,
    '',
    ...namedLines,
    '/** The parameters of each call: path and query parameters of the REST door in one object. */',
    'export interface PartnerApiInputs {',
    ...inputLines,
    '}',
    '',
    '/** What each call resolves to: the `data` of the success envelope. */',
    'export interface PartnerApiOutputs {',
    ...outputLines,
    '}',
    '',
    "/** The path of every procedure on the tRPC transport (`/partner/v1/trpc/<path>`), in the router's order. */",
    `export const PROCEDURES = [${[...namespaces].flatMap(([namespace, names]) => names.map((name) => `'${namespace}.${name}'`)).join(', ')}] as const;`,
    '',
    '/** The procedures that are feeds: each call walks its pages by their `next_cursor` (a `ChangeFeed`). */',
    `export const FEEDS = [${feeds.join(', ')}] as const;`,
    '',
    '/** The parameter names each call takes: the client refuses any other before sending (D-11 ignores them). */',
    'export const PARAMETERS = {',
    ...parameterLines,
    '} as const;',
    '',
    '/** Every read of the API, grouped as the router groups them. The last argument of each: per-call options. */',
    'export interface PartnerClient {',
    ...clientLines,
    '}',
    '',
  ].join('\n');
  return format(text);
}

/** The probe file in a program with the project's compiler options (strict: optional means `| undefined`). */
function compileProbe() {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const program = ts.createProgram({ rootNames: [PROBE_FILE], options: { ...options, noEmit: true } });
  const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(PROBE_FILE));
  if (diagnostics.length) {
    throw new Error(
      ts.formatDiagnostics(diagnostics, { ...ts.sys, getCanonicalFileName: (f) => f, getNewLine: () => '\n' }),
    );
  }
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(PROBE_FILE);
  const probe = source && checker.getSymbolAtLocation(source);
  if (!probe) throw new Error('cannot read sdk/scripts/router-types.ts');
  return { checker, probe };
}

/**
 * Prints a resolved type as a standalone type expression: object types property by property (with the
 * zod description of the same property as a doc comment), arrays and unions through their members, and
 * everything else (primitives, literal unions) as the compiler writes it. Names of the server's types
 * never appear, so the output needs nothing but itself.
 */
function typePrinter(checker: ts.TypeChecker) {
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;
  const isObject = (type: ts.Type) =>
    (type.flags & ts.TypeFlags.Object) !== 0 && !checker.isArrayType(type) && type.getCallSignatures().length === 0;

  /** Printed answer types (at the outermost indent) and the name that stands for each. */
  const names = new Map<string, string>();

  /** Prints `type` as the definition of `name`, which from now on stands for the same type elsewhere. */
  function name(type: ts.Type, schema: Schema | undefined, typeName: string): string {
    const printed = printType(type, schema, '', 'output');
    names.set(printed, typeName);
    return printed;
  }

  function print(type: ts.Type, schema: Schema | undefined, indent: string, side: Side): string {
    if (side === 'output' && names.size && (type.isUnion() || isObject(type))) {
      const named = names.get(printType(type, schema, '', side));
      if (named) return named;
    }
    return printType(type, schema, indent, side);
  }

  function printType(type: ts.Type, schema: Schema | undefined, indent: string, side: Side): string {
    // Unions member by member, so no name of the server's (e.g. `Raw<number>` of routers/shared/contract.ts)
    // is printed, with `true | false` as boolean and null/undefined last.
    if (type.isUnion()) {
      let parts = type.types.map((part) =>
        print(part, (schema && optionOf(checker, schema, part)) ?? schema, indent, side),
      );
      if (parts.includes('true') && parts.includes('false')) {
        parts = [...parts.filter((part) => part !== 'true' && part !== 'false'), 'boolean'];
      }
      // The SDK sends JSON values: the string spellings of numbers and booleans that only the REST door's
      // query strings need (D-11) are left out of its parameters, so `page: '2'` does not compile.
      if (side === 'input' && (parts.includes('number') || parts.includes('boolean'))) {
        parts = parts.filter((part) => part !== 'string');
      }
      // tRPC types an optional input as `void | T | undefined`; `void` means undefined here.
      parts = [...new Set(parts.map((part) => (part === 'void' ? 'undefined' : part)))];
      const last = ['null', 'undefined'];
      return [...parts.filter((part) => !last.includes(part)), ...last.filter((part) => parts.includes(part))].join(
        ' | ',
      );
    }
    if (checker.isArrayType(type)) {
      const [element] = checker.getTypeArguments(type as ts.TypeReference);
      if (!element) throw new Error('an array without an element type');
      const printed = print(element, schema && elementOf(schema), indent, side);
      return element.isUnion() ? `(${printed})[]` : `${printed}[]`;
    }
    if (isObject(type)) {
      const lines = type.getProperties().map((property) => {
        const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
        const child = schema && childOf(schema, property.name);
        const doc = child && descriptionOf(child);
        const value = print(checker.getTypeOfSymbol(property), child, `${indent}  `, side);
        const key = /^[A-Za-z_$][\w$]*$/.test(property.name) ? property.name : `'${property.name}'`;
        const tags = side === 'input' && child ? constraintsOf(child) : [];
        const comment = (text: string) => text.replaceAll('*/', '*\\/');
        const jsdoc = tags.length
          ? `${indent}  /**\n${[doc ?? '', ...tags]
              .filter(Boolean)
              .map((line) => `${indent}   * ${comment(line)}\n`)
              .join('')}${indent}   */\n`
          : doc
            ? `${indent}  /** ${comment(doc)} */\n`
            : '';
        return `${jsdoc}${indent}  ${key}${optional}: ${value};`;
      });
      return `{\n${lines.join('\n')}\n${indent}}`;
    }
    return checker.typeToString(type, undefined, flags);
  }
  return { print, name };
}

/**
 * A parameter's ranges and formats as doc tags (`@minimum 0`, `@maxLength 50`, `@format date`), read from
 * its JSON Schema as the OpenAPI document states them, so they show on hover where the value is typed.
 */
function constraintsOf(schema: Schema): string[] {
  const json = z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const tags: string[] = [];
  for (const name of ['minimum', 'maximum', 'maxLength', 'format', 'pattern']) {
    const value = json[name];
    if (value === undefined || (typeof value === 'number' && Math.abs(value) === Number.MAX_SAFE_INTEGER)) continue;
    tags.push(`@${name} ${name === 'format' && value === 'date' ? 'date (YYYY-MM-DD, a KST day)' : String(value)}`);
  }
  return tags;
}

/** The schema itself and the schemas it wraps (optional, nullable, default, pipe), outermost first. */
function layersOf(schema: Schema): Schema[] {
  const layers: Schema[] = [];
  for (let current: Schema | undefined = schema; current && layers.length < 10; ) {
    layers.push(current);
    const def = current._zod.def as { type: string; innerType?: Schema; out?: Schema };
    current = def.type === 'pipe' ? def.out : def.innerType;
  }
  return layers;
}

function descriptionOf(schema: Schema): string | undefined {
  for (const layer of layersOf(schema)) {
    const description = z.globalRegistry.get(layer)?.description;
    if (description) return description;
  }
  return undefined;
}

function childOf(schema: Schema, key: string): Schema | undefined {
  for (const layer of layersOf(schema)) {
    const def = layer._zod.def as { type: string; shape?: Record<string, Schema> };
    if (def.type === 'object') return def.shape?.[key];
  }
  return undefined;
}

/** The option of a discriminated union schema that a member of the resolved union type stands for. */
function optionOf(checker: ts.TypeChecker, schema: Schema, part: ts.Type): Schema | undefined {
  for (const layer of layersOf(schema)) {
    const def = layer._zod.def as { type: string; discriminator?: string; options?: Schema[] };
    if (def.type !== 'union' || !def.discriminator || !def.options) continue;
    const tag = part.getProperty(def.discriminator);
    const value = tag && checker.getTypeOfSymbol(tag);
    if (!value?.isStringLiteral()) return undefined;
    return def.options.find((option) => {
      const key = childOf(option, def.discriminator as string);
      return key && (key._zod.def as { values?: unknown[] }).values?.includes(value.value);
    });
  }
  return undefined;
}

function isObjectUnion(type: ts.Type | undefined): boolean {
  return !!type && type.isUnion() && type.types.every((part) => (part.flags & ts.TypeFlags.Object) !== 0);
}

function elementType(checker: ts.TypeChecker, array: ts.Type): ts.Type | undefined {
  return checker.isArrayType(array) ? checker.getTypeArguments(array as ts.TypeReference)[0] : undefined;
}

function elementOf(schema: Schema): Schema | undefined {
  for (const layer of layersOf(schema)) {
    const def = layer._zod.def as { type: string; element?: Schema };
    if (def.type === 'array') return def.element;
  }
  return undefined;
}

/** The project's formatter, so the generated file reads like the rest and passes `npm run lint`. */
function format(text: string): string {
  const biome = path.join(ROOT, 'node_modules/.bin/biome');
  return execFileSync(biome, ['format', `--stdin-file-path=${GENERATED_FILE}`], { cwd: ROOT, input: text }).toString();
}

// `--check` (the package's prepack): fail instead of writing, so a tarball is never built from stale types
// and packing never edits the working tree.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const generated = generateTypes();
  const relative = path.relative(ROOT, GENERATED_FILE);
  if (process.argv.includes('--check')) {
    if (readFileSync(GENERATED_FILE, 'utf8') !== generated) {
      console.error(`${relative} is stale: run \`npm run sdk:generate\` and commit it`);
      process.exit(1);
    }
  } else {
    writeFileSync(GENERATED_FILE, generated);
    console.log(`wrote ${relative}`);
  }
}
