import { PUBLIC_CODE } from '../../db/schema/columns';
import { ConfigError, parseConfig } from '../config';
import {
  addEndpoint,
  describeEndpoints,
  disableEndpoint,
  enableEndpoint,
  endpointNamed,
  queueTest,
  Refusal,
  replayFrom,
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
      New events (new webhook-ids) from a feed position: a cursor of an event or of the review change feed.
  test ID
      Queues a signed webhook.test event, whose data is {webhook_id}.

Running servers pick up changes within seconds.`;

const OPTIONS = {
  partner: { type: 'string' },
  url: { type: 'string' },
  brand: { type: 'string', multiple: true },
  'critical-only': { type: 'boolean' },
  'from-now': { type: 'boolean' },
  cursor: { type: 'string' },
} as const;

const COMMANDS = ['add', 'list', 'disable', 'enable', 'rotate-secret', 'replay', 'test'];

runCli(USAGE, OPTIONS, async ({ values, positionals }) => {
  const [command, id, ...rest] = positionals;
  if (!command || !COMMANDS.includes(command))
    throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
  if (rest.length) throw new UsageError(`unexpected: ${rest.join(' ')}`);
  if (command !== 'add' && command !== 'list' && !id) throw new UsageError(`${command} needs the webhook's ID`);
  const brandCodes = values.brand ?? [];
  for (const code of brandCodes)
    if (!PUBLIC_CODE.test(code)) throw new UsageError(`not a brand code (1 to 64 of A-Z a-z 0-9 - _): ${code}`);
  if (command === 'add' && (!values.partner || !values.url)) throw new UsageError('add needs --partner NAME --url URL');
  if (command === 'replay' && !values.cursor) throw new UsageError('replay needs --cursor C');
  const config = parseConfig(process.env);
  const key = config.WEBHOOK_SECRETS_KEY;
  if (!key && (command === 'add' || command === 'rotate-secret'))
    throw new ConfigError('invalid configuration: WEBHOOK_SECRETS_KEY is required to keep webhook secrets');
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
      } else if (command === 'test') {
        process.stdout.write(`queued webhook.test ${await queueTest(db, endpoint)} for ${endpoint.id}\n`);
      }
    } catch (error) {
      throw error instanceof Refusal ? new UsageError(error.message) : error;
    }
  });
});
