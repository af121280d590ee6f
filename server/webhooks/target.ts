import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Where a webhook may be delivered (D-28): HTTPS to public addresses. Every address the name resolves to is
// checked (one private address is enough to refuse: DNS may answer differently on the next lookup), and the
// connection then goes to the address checked, never to a second resolution. WEBHOOK_ALLOW_PRIVATE_TARGETS
// also allows plain http:// and private, loopback and link-local targets (the demo, tests).

export type Target = { url: URL; address: string; family: 4 | 6 };

export type TargetCheck = { target: Target } | { refused: string };

/** The URL's form alone: what `add` can say before any lookup. */
export function refusedUrl(text: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `not a URL: ${text}`;
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    return `webhooks are delivered over https only: ${url.protocol}//`;
  if (url.username || url.password) return 'a webhook URL carries no user name or password';
  return undefined;
}

export async function checkTarget(text: string, allowPrivate: boolean): Promise<TargetCheck> {
  const refused = refusedUrl(text, allowPrivate);
  if (refused) return { refused };
  const url = new URL(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await lookup(host, { all: true, verbatim: true });
  } catch (error) {
    return { refused: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})` };
  }
  if (addresses.length === 0) return { refused: `${host} does not resolve` };
  if (!allowPrivate) {
    for (const { address } of addresses) {
      // process() reads an IPv4-mapped IPv6 address as the IPv4 address it carries.
      const range = ipaddr.process(address).range();
      if (range !== 'unicast')
        return { refused: `${host} resolves to a ${range} address (${address}): only public addresses are allowed` };
    }
  }
  const [first] = addresses as [{ address: string; family: number }];
  return { target: { url, address: first.address, family: first.family === 6 ? 6 : 4 } };
}
