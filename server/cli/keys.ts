import { displayPrefixOf, generateApiKey, hashApiKey, parseExpiry } from '../../db/keys';
import { kstTimestamp } from '../../db/kst';
import { findPartnerByName, insertApiKey, listApiKeys, revokeApiKey, setApiKeyExpiry } from '../../db/queries/apiKeys';
import { printTable, runCli, UsageError, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run keys -- <command>   (on DATABASE_URL; D-4)

  issue --partner NAME [--label TEXT] [--expires WHEN] [--force]
      Issues a key for the partner and prints it once: only its SHA-256 and a display prefix are stored.
  list
      Every key: its partner, the partner's state, and the key's state (what a call with it gets).
  revoke ID
      Revokes the key now: calls with it answer 401 PARTNER_API_KEY_INACTIVE.
  expire ID --at WHEN [--force] | expire ID --never
      Sets or clears the key's expiry: from then on calls answer 401 PARTNER_API_KEY_EXPIRED.

WHEN is in KST (UTC+9), like every date of the API:
  2027-06-30                 a day: the key works through the end of that KST day
                             (it expires at 2027-07-01 00:00 KST)
  2027-06-30T12:00[:00]      a KST time; with an offset (2027-06-30T03:00Z, ...+09:00) that instant
Days that do not exist (2027-02-30) are refused. An expiry in the past is refused unless --force.
Running servers see a change within about a second (their key cache).`;

const OPTIONS = {
  partner: { type: 'string' },
  label: { type: 'string' },
  expires: { type: 'string' },
  at: { type: 'string' },
  never: { type: 'boolean' },
  force: { type: 'boolean' },
} as const;

/** An expiry from the command line: a stated rule, and not in the past without --force. */
function expiryOf(text: string, force: boolean | undefined): Date {
  let when: Date;
  try {
    when = parseExpiry(text);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (when.getTime() <= Date.now() && !force)
    throw new UsageError(`${text} (${kstTimestamp(when)}) is in the past: the key would not work; --force to set it`);
  return when;
}

function idOf(text: string | undefined): number {
  const id = Number(text);
  if (!text || !Number.isInteger(id) || id < 1) throw new UsageError(`not a key id: ${text ?? '(none)'}`);
  return id;
}

runCli(USAGE, OPTIONS, async ({ values, positionals }) => {
  const [command, argument] = positionals;
  // Arguments are checked before the database is opened: a usage mistake costs no connection.
  const expiry = command === 'issue' ? values.expires : command === 'expire' ? values.at : undefined;
  const expiresAt = expiry ? expiryOf(expiry, values.force) : undefined;
  if (command === 'issue' && !values.partner) throw new UsageError('issue needs --partner NAME');
  if (command === 'expire' && !values.never === !values.at) throw new UsageError('expire needs --at WHEN or --never');
  if (command === 'revoke' || command === 'expire') idOf(argument);
  if (!['issue', 'list', 'revoke', 'expire'].includes(command ?? ''))
    throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');

  await withConfiguredDatabase(async ({ db }) => {
    switch (command) {
      case 'issue': {
        const partner = await findPartnerByName(db, values.partner ?? '');
        if (!partner) throw new Error(`no partner named ${values.partner} (npm run partners -- list)`);
        const key = generateApiKey();
        const row = await insertApiKey(db, {
          partnerId: partner.id,
          keyHash: hashApiKey(key),
          displayPrefix: displayPrefixOf(key),
          label: values.label,
          expiresAt,
        });
        // 190 random bits: a key equal to one issued before means the generator is broken.
        if (!row) throw new Error('the generated key equals an existing one: nothing issued; run the command again');
        const until = expiresAt ? `, valid until ${kstTimestamp(expiresAt)}` : '';
        process.stdout.write(`issued key ${row.id} for ${partner.name}${until} (shown once, store it now):\n${key}\n`);
        return;
      }
      case 'list': {
        const now = Date.now();
        const rows = (await listApiKeys(db)).map((key) => [
          String(key.id),
          key.partner,
          key.partnerActive ? 'active' : 'deactivated',
          key.prefix,
          // What a call with the key answers, in the order the check tests (D-13).
          key.revokedAt
            ? 'revoked'
            : key.expiresAt && key.expiresAt.getTime() <= now
              ? 'expired'
              : key.partnerActive
                ? 'active'
                : 'refused (partner deactivated)',
          key.expiresAt ? kstTimestamp(key.expiresAt) : 'never',
          key.label ?? '',
        ]);
        printTable(['ID', 'PARTNER', 'PARTNER STATE', 'PREFIX', 'KEY STATE', 'EXPIRES (KST)', 'LABEL'], rows);
        return;
      }
      case 'revoke': {
        if (!(await revokeApiKey(db, idOf(argument), new Date()))) throw new Error(`no key ${argument}`);
        process.stdout.write(`revoked key ${argument}\n`);
        return;
      }
      case 'expire': {
        if (!(await setApiKeyExpiry(db, idOf(argument), expiresAt ?? null))) throw new Error(`no key ${argument}`);
        process.stdout.write(`key ${argument} expires ${expiresAt ? kstTimestamp(expiresAt) : 'never'}\n`);
        return;
      }
    }
  });
});
