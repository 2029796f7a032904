/**
 * What a connection presented last, for each kind of credential: the credential as sent (the
 * Authorization header, the session id) and the digest it is looked up by. An agent sends the same
 * header on every request of a kept-alive connection, and a browser the same cookie; finding it here
 * spares the header's parse, the shape check and the SHA-256 (about 0.9 µs of a cached read).
 *
 * Nothing here decides whether a credential is valid: the lookup, with its cache and the cache's
 * invalidation, runs on every request. An entry holds only what its own connection sent and goes
 * with the connection (keyed weakly by its socket). The credential sent is found by a Map lookup,
 * which compares hashes (V8's, seeded per process) before it compares characters: a request is
 * compared character by character with what the connection sent before only when the two hash
 * alike, so behind a proxy that carries several clients on one connection, no request is timed
 * against another client's credential.
 */
type Kind = 'bearer' | 'session';

const lastPresented = new WeakMap<object, Record<Kind, Map<string, string> | undefined>>();

/** The digest remembered for `presented` on this connection, if it is what the connection sent last. */
export function rememberedDigest(
  connection: object | undefined,
  kind: Kind,
  presented: string,
): string | undefined {
  if (connection === undefined) return undefined;
  return lastPresented.get(connection)?.[kind]?.get(presented);
}

/** Remembers `presented` and its digest as what this connection sent last (forgetting the one before). */
export function rememberDigest(
  connection: object | undefined,
  kind: Kind,
  presented: string,
  digest: string,
): void {
  if (connection === undefined) return;
  let entry = lastPresented.get(connection);
  if (!entry) {
    entry = { bearer: undefined, session: undefined };
    lastPresented.set(connection, entry);
  }
  let last = entry[kind];
  if (last) last.clear();
  else last = entry[kind] = new Map();
  last.set(presented, digest);
}
