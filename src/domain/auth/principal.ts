import type { Scope } from '../access/scopes.ts';

export interface MemberRef {
  id: string;
  name: string;
  email: string;
  tier: string;
}

export interface TokenRef {
  id: string;
  prefix: string;
  scopes: Scope[];
  sandbox: boolean;
  createdAt: number;
  lastUsedAt: number | null;
  /** The bound Ed25519 key (spec 4.4): its id and public `x` (base64url); null when none is bound. */
  signingKey: { id: string; x: string } | null;
  /** True: a call with this token must be signed by the bound key (reference §7). */
  signingEnforced: boolean;
}

export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'bearer'; member: MemberRef; token: TokenRef }
  | { kind: 'session'; member: MemberRef; sessionHash: string };

export const ANONYMOUS: Principal = { kind: 'anonymous' };

/** The spec's `via`: which credential path served the call. */
export function viaOf(principal: Principal): 'agent' | 'session' {
  return principal.kind === 'session' ? 'session' : 'agent';
}
