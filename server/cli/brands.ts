import { createBrand, findPartnerByName, listBrands } from '../../db/queries/apiKeys';
import { PUBLIC_CODE } from '../../db/schema/columns';
import { printTable, runCli, UsageError, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run brands -- <command>   (on DATABASE_URL)

  create --partner NAME --code CODE --name DISPLAY_NAME
      Adds a brand to the partner. CODE is the brand_code partners call with: 1 to 64 letters, digits,
      '-' or '_', unique across partners, and never changed once partners use it.
  list
      Every brand, with its partner.

Running servers see a new brand within about a second (their brand cache).`;

const OPTIONS = { partner: { type: 'string' }, code: { type: 'string' }, name: { type: 'string' } } as const;

runCli(USAGE, OPTIONS, async ({ values, positionals }) => {
  const [command] = positionals;
  if (command !== 'create' && command !== 'list')
    throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
  if (command === 'create') {
    if (!values.partner || !values.code || !values.name?.trim())
      throw new UsageError('create needs --partner NAME --code CODE --name DISPLAY_NAME');
    if (!PUBLIC_CODE.test(values.code))
      throw new UsageError(`not a brand code (1 to 64 of A-Z a-z 0-9 - _): ${values.code}`);
  }

  await withConfiguredDatabase(async (database) => {
    if (command === 'list') {
      const rows = (await listBrands(database.db)).map((brand) => [brand.code, brand.name, brand.partner]);
      printTable(['CODE', 'NAME', 'PARTNER'], rows);
      return;
    }
    const partner = await findPartnerByName(database.db, values.partner as string);
    if (!partner) throw new Error(`no partner named ${values.partner} (npm run partners -- list)`);
    const brand = await createBrand(database.db, {
      partnerId: partner.id,
      brandCode: values.code as string,
      displayName: values.name as string,
    });
    if (!brand) throw new Error(`a brand with code ${values.code} already exists (npm run brands -- list)`);
    process.stdout.write(`created brand ${brand.brandCode} for ${partner.name}\n`);
  });
});
