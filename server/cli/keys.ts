import { parseArgs } from 'node:util';
import { displayPrefixOf, generateApiKey, hashApiKey } from '../../db/keys';
import { kstTimestamp } from '../../db/kst';
import { findPartnerByName, insertApiKey, listApiKeys, revokeApiKey, setApiKeyExpiry } from '../../db/queries/apiKeys';
import { openConfiguredDatabase, runCli } from './database';

// npm run keys -- <command> (D-4), on DATABASE_URL:
//   issue --partner "<name>" [--label <text>] [--expires <ISO time or YYYY-MM-DD (KST midnight)>]
//   list
//   revoke <id>
//   expire <id> --at <ISO time or YYYY-MM-DD> | --never
// A key is printed once, at issue; only its SHA-256 and a display prefix are stored.

const USAGE =
  'usage: keys issue --partner NAME [--label TEXT] [--expires WHEN] | list | revoke ID | expire ID (--at WHEN | --never)';

function parseWhen(text: string): Date {
  const when = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00+09:00`) : new Date(text);
  if (Number.isNaN(when.getTime())) throw new Error(`not a time: ${text}`);
  return when;
}

function parseId(text: string | undefined): number {
  const id = Number(text);
  if (!text || !Number.isInteger(id) || id < 1) throw new Error(USAGE);
  return id;
}

runCli(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      partner: { type: 'string' },
      label: { type: 'string' },
      expires: { type: 'string' },
      at: { type: 'string' },
      never: { type: 'boolean' },
    },
  });
  const [command, argument] = positionals;
  const database = await openConfiguredDatabase();
  const { db } = database;
  try {
    switch (command) {
      case 'issue': {
        if (!values.partner) throw new Error(USAGE);
        const partner = await findPartnerByName(db, values.partner);
        if (!partner) throw new Error(`no partner named ${values.partner}`);
        const key = generateApiKey();
        const row = await insertApiKey(db, {
          partnerId: partner.id,
          keyHash: hashApiKey(key),
          displayPrefix: displayPrefixOf(key),
          label: values.label,
          expiresAt: values.expires ? parseWhen(values.expires) : undefined,
        });
        process.stdout.write(`issued key ${row?.id} for ${partner.name} (shown once, store it now):\n${key}\n`);
        return;
      }
      case 'list': {
        for (const key of await listApiKeys(db)) {
          const now = Date.now();
          const state = key.revokedAt
            ? 'revoked'
            : key.expiresAt && key.expiresAt.getTime() <= now
              ? 'expired'
              : 'active';
          const expires = key.expiresAt ? kstTimestamp(key.expiresAt) : 'never';
          process.stdout.write(
            `${key.id}\t${key.partner}\t${key.prefix}\t${state}\texpires ${expires}\t${key.label ?? ''}\n`,
          );
        }
        return;
      }
      case 'revoke': {
        if (!(await revokeApiKey(db, parseId(argument), new Date()))) throw new Error(`no key ${argument}`);
        process.stdout.write(`revoked key ${argument}\n`);
        return;
      }
      case 'expire': {
        if (!values.never && !values.at) throw new Error(USAGE);
        const expiresAt = values.never ? null : parseWhen(values.at ?? '');
        if (!(await setApiKeyExpiry(db, parseId(argument), expiresAt))) throw new Error(`no key ${argument}`);
        process.stdout.write(`key ${argument} expires ${expiresAt ? kstTimestamp(expiresAt) : 'never'}\n`);
        return;
      }
      default:
        throw new Error(USAGE);
    }
  } finally {
    await database.close();
  }
});
