import { openDatabase } from '../db/client';
import { measureGrowth } from './growth';
async function main() {
  const d = await openDatabase({ url: `postgres://postgres@127.0.0.1:5432/${process.argv[2]}`, maxConnections: 2 });
  await d.migrate();
  console.log(JSON.stringify(await measureGrowth(d, new Date())));
  await d.close();
}
main();
