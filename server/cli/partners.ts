import { createPartner, listPartners, setPartnerActive } from '../../db/queries/apiKeys';
import { printTable, runCli, UsageError, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run partners -- <command>   (on DATABASE_URL)

  create NAME        Adds a partner (active). Then: npm run brands -- create, npm run keys -- issue.
  list               Every partner, its state, and its number of brands and keys.
  deactivate NAME    Every key of the partner answers 403 PARTNER_API_FORBIDDEN (within about a second).
  activate NAME      Undoes deactivate.`;

runCli(USAGE, {}, async ({ positionals }) => {
  const [command, name, ...rest] = positionals;
  if (!['create', 'list', 'deactivate', 'activate'].includes(command ?? ''))
    throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
  if (command !== 'list' && !name?.trim()) throw new UsageError(`${command} needs the partner's NAME`);
  if (rest.length) throw new UsageError(`one NAME only (quote a name with spaces): ${positionals.slice(1).join(' ')}`);

  await withConfiguredDatabase(async (database) => {
    if (command === 'list') {
      const rows = (await listPartners(database.db)).map((partner) => [
        String(partner.id),
        partner.name,
        partner.active ? 'active' : 'deactivated',
        String(partner.brands),
        String(partner.keys),
      ]);
      printTable(['ID', 'NAME', 'STATE', 'BRANDS', 'KEYS'], rows);
    } else if (command === 'create') {
      const partner = await createPartner(database.db, name as string);
      if (!partner) throw new Error(`a partner named ${name} already exists (npm run partners -- list)`);
      process.stdout.write(`created partner ${partner.id}: ${partner.name}\n`);
    } else {
      if (!(await setPartnerActive(database.db, name as string, command === 'activate')))
        throw new Error(`no partner named ${name}`);
      process.stdout.write(`partner ${name} ${command}d\n`);
    }
  });
});
