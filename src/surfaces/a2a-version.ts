/**
 * A2A protocol versions this endpoint speaks, and how a request picks one (A2A 1.0 §3.6): the
 * `A2A-Version` header (or query parameter) names Major.Minor; an empty or absent value means 0.3.
 * Both versions are served at the same URL; the card lists an interface for each.
 */
export const CURRENT_VERSION = '1.0';
export const LEGACY_VERSION = '0.3';
export type A2aVersion = typeof CURRENT_VERSION | typeof LEGACY_VERSION;
export const SUPPORTED_VERSIONS: readonly A2aVersion[] = [CURRENT_VERSION, LEGACY_VERSION];

export type Negotiated = { version: A2aVersion } | { unsupported: string };

/** Major.Minor of the requested version; a patch number is ignored, as the spec requires. */
export function negotiateVersion(requested: string | undefined): Negotiated {
  const value = (requested ?? '').trim();
  if (value === '') return { version: LEGACY_VERSION };
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(value);
  const majorMinor = match ? `${Number(match[1])}.${Number(match[2])}` : undefined;
  const version = SUPPORTED_VERSIONS.find((v) => v === majorMinor);
  return version ? { version } : { unsupported: value.slice(0, 40) };
}
