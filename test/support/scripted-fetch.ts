import type { FetchLike } from '../../sdk/src/index';

// A fetch for the SDK's unit tests: it answers from a script, in order, and records what it was sent.

export type Scripted = { status: number; body?: unknown; headers?: Record<string, string> };

/** A fetch that answers from a script, in order, and records every URL and headers it was called with. */
export function scriptedFetch(...answers: (Scripted | Error)[]) {
  const urls: string[] = [];
  const headers: Record<string, string>[] = [];
  const fetch: FetchLike = async (url, init) => {
    urls.push(url);
    headers.push(init.headers);
    const answer = answers.shift();
    if (!answer) throw new Error(`unexpected call ${url}`);
    if (answer instanceof Error) throw answer;
    const all = new Map(Object.entries(answer.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    return {
      status: answer.status,
      headers: { get: (name) => all.get(name.toLowerCase()) ?? null },
      // A 304 has no body.
      text: async () => (answer.body === undefined ? '' : JSON.stringify(answer.body)),
    };
  };
  return { fetch, urls, headers };
}

/** A success answer of the tRPC transport carrying `data`. */
export const ok = (data: unknown, headers?: Record<string, string>): Scripted => ({
  status: 200,
  body: { result: { data: { status: 'SUCCESS', status_code: 200, message: 'OK', data } } },
  headers: { 'x-request-id': 'req-ok', ...headers },
});

/** An error answer of the tRPC transport carrying the partner code. */
export const failed = (status: number, code: string, headers?: Record<string, string>): Scripted => ({
  status,
  body: {
    error: {
      message: 'The request cannot be processed.',
      code: -32000,
      data: { partner: { status: code, status_code: status, message: 'The request cannot be processed.' } },
    },
  },
  headers: { 'x-request-id': `req-${status}`, ...headers },
});

/** The parameters a call sent, from its URL. */
export const inputOf = (url: string) => JSON.parse(new URL(url).searchParams.get('input') ?? 'null');
