import postgres from 'postgres';

/** A connection to the server of TEST_DATABASE_URL for creating and dropping the per-file databases. */
export function adminSql(url: string) {
  return postgres(url, { max: 1, onnotice: () => {} });
}

/** One template per run (several runs may share a server, e.g. two checkouts). */
export function templateName() {
  return `partner_tpl_${process.pid}`;
}
