import { PUBLIC_CODE } from '../../db/schema/columns';
import { ConfigError, parseConfig } from '../config';
import {
  addEndpoint,
  attemptTest,
  describeEndpoints,
  disableEndpoint,
  enableEndpoint,
  endpointNamed,
  Refusal,
  replayFrom,
  resealSecrets,
  rotateSecret,
} from '../webhooks/admin';
import { checkTarget } from '../webhooks/target';
import { printTable, runCli, UsageError, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run webhooks -- <command>   (on DATABASE_URL; D-28)

  add --partner NAME --url URL [--brand CODE]... [--critical-only]
      Adds an endpoint of the partner and prints its id and signing secret (shown only here and at
      rotate-secret). Without --brand it covers every brand of the partner, brands added later included.
      --critical-only: upserts of critical reviews only, no deletions. Needs WEBHOOK_SECRETS_KEY. The URL
      must be https:// on public addresses unless WEBHOOK_ALLOW_PRIVATE_TARGETS=1.
  list
      Every endpoint: partner, URL, brands, state (never a secret).
  disable ID
      Stops delivering; the endpoint keeps its position and its pending events.
  enable ID [--from-now]
      Resumes from where the endpoint stopped. When the feed can no longer continue a brand from there
      (retention, a range change, a restore), says so and exits 1; --from-now then starts every brand from
      its current position, with one feed.expired event each.
  rotate-secret ID
      Prints a new secret; the old one keeps signing beside it for 24 hours.
  replay ID [--brand CODE] --cursor C
      New events (new webhook-ids) from a feed position to now: the cursor of an event, or any next_cursor
      of the review change feed (inside a walk, the rest of the walk comes first). --brand: the brand the
      cursor is of, when the endpoint covers several. A cursor the feed answers 410 to exits 1.
  test ID
      Sends a signed webhook.test event, whose data is {webhook_id}, and waits for the answer (at most 15 s):
      prints its status and time and exits 0 on a 2xx, else prints why and exits 1. The partner sees the
      attempt among the deliveries; a failed test is retried on the usual schedule. Needs WEBHOOK_SECRETS_KEY.
  reseal-secrets
      Seals every endpoint's secrets (a previous one in its 24-hour overlap too) under WEBHOOK_SECRETS_KEY,
      opening them with WEBHOOK_SECRETS_OLD_KEY, in one transaction; prints how many. A secret that opens
      with neither key exits 2 and changes nothing. Then restart every instance with the new key.

Running servers pick up changes within seconds.`;

const OPTIONS = {
  partner: { type: 'string' },
  url: { type: 'string' },
  brand: { type: 'string', multiple: true },
  'critical-only': { type: 'boolean' },
  'from-now': { type: 'boolean' },
  cursor: { type: 'string' },
} as const;

const COMMANDS = ['add', 'list', 'disable', 'enable', 'rotate-secret', 'replay', 'test', 'reseal-secrets'];

/** Commands that open or seal secrets. */
const KEYED = ['add', 'rotate-secret', 'test', 'reseal-secrets'];

/** Commands without the webhook's ID. */
const UNNAMED = ['add', 'list', 'reseal-secrets'];

runCli(USAGE, OPTIONS, async ({ values, positionals }) => {
  const [command, id, ...rest] = positionals;
  if (!command || !COMMANDS.includes(command))
    throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
  if (rest.length) throw new UsageError(`unexpected: ${rest.join(' ')}`);
  if (UNNAMED.includes(command) ? id : !id)
    throw new UsageError(id ? `unexpected: ${id}` : `${command} needs the webhook's ID`);
  const brandCodes = values.brand ?? [];
  for (const code of brandCodes)
    if (!PUBLIC_CODE.test(code)) throw new UsageError(`not a brand code (1 to 64 of A-Z a-z 0-9 - _): ${code}`);
  if (command === 'add' && (!values.partner || !values.url)) throw new UsageError('add needs --partner NAME --url URL');
  if (command === 'replay' && !values.cursor) throw new UsageError('replay needs --cursor C');
  const config = parseConfig(process.env);
  const key = config.WEBHOOK_SECRETS_KEY;
  if (!key && KEYED.includes(command))
    throw new ConfigError('invalid configuration: WEBHOOK_SECRETS_KEY is required to keep webhook secrets');
  const oldKey = config.WEBHOOK_SECRETS_OLD_KEY;
  if (!oldKey && command === 'reseal-secrets')
    throw new ConfigError(
      'invalid configuration: WEBHOOK_SECRETS_OLD_KEY (the key being replaced) is required to reseal',
    );
  // The target is checked (its form, then every address it resolves to) before anything is written.
  const checked =
    command === 'add' ? await checkTarget(values.url as string, config.WEBHOOK_ALLOW_PRIVATE_TARGETS) : undefined;
  if (checked && 'refused' in checked) throw new UsageError(checked.refused);

  await withConfiguredDatabase(async ({ db }) => {
    try {
      if (command === 'add' && checked && key) {
        const request = {
          partner: values.partner as string,
          brandCodes,
          criticalOnly: Boolean(values['critical-only']),
        };
        const added = await addEndpoint(db, key, { ...request, target: checked.target });
        process.stdout.write(`id: ${added.id}\nsecret: ${added.secret}\n`);
        return;
      }
      if (command === 'reseal-secrets' && key && oldKey) {
        const { resealed, current } = await resealSecrets(db, oldKey, key);
        process.stdout.write(
          `resealed the secrets of ${resealed} webhooks under WEBHOOK_SECRETS_KEY (${current} already were)\n`,
        );
        return;
      }
      if (command === 'list') {
        const rows = await describeEndpoints(db);
        printTable(
          ['ID', 'PARTNER', 'URL', 'BRANDS', 'EVENTS', 'STATUS'],
          rows.map((row) => [row.id, row.partner, row.url, row.brands, row.events, row.status]),
        );
        return;
      }
      const endpoint = await endpointNamed(db, id as string);
      if (command === 'disable') {
        await disableEndpoint(db, endpoint);
        process.stdout.write(`webhook ${endpoint.id} disabled; it keeps its position\n`);
      } else if (command === 'enable') {
        const fromNow = Boolean(values['from-now']);
        await enableEndpoint(db, endpoint, fromNow);
        process.stdout.write(
          `webhook ${endpoint.id} enabled${fromNow ? ' from now' : ', resuming where it stopped'}\n`,
        );
      } else if (command === 'rotate-secret' && key) {
        const rotated = await rotateSecret(db, key, endpoint);
        process.stdout.write(
          `secret: ${rotated.secret}\nthe previous secret signs too until ${rotated.until.toISOString()}\n`,
        );
      } else if (command === 'replay') {
        const replayed = await replayFrom(db, endpoint, values.cursor as string, brandCodes);
        process.stdout.write(`queued ${replayed.events} events of ${replayed.brandCode} for ${endpoint.id}\n`);
      } else if (command === 'test' && key) {
        const allowPrivateTargets = config.WEBHOOK_ALLOW_PRIVATE_TARGETS;
        const { id: eventId, outcome } = await attemptTest(db, key, endpoint, { allowPrivateTargets });
        const line = `webhook.test ${eventId} to ${endpoint.id}`;
        // The receiver's answer may span lines: the command's answer is one.
        if (outcome.error !== null)
          throw new Error(`${line} failed after ${outcome.durationMs} ms: ${outcome.error.replace(/\s+/g, ' ')}`);
        process.stdout.write(`${line}: ${outcome.statusCode} in ${outcome.durationMs} ms\n`);
      }
    } catch (error) {
      throw error instanceof Refusal ? new UsageError(error.message) : error;
    }
  });
});
