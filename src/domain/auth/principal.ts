import type { Scope } from './scopes.ts';

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
