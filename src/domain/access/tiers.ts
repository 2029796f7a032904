import { readFileSync } from 'node:fs';
import { isScope, type Scope } from './scopes.ts';

export interface TierDefinition {
  name: string;
  /** Scopes this tier adds to those of the tiers below it. */
  adds: Scope[];
  selfRequestable: boolean;
}

export const DEFAULT_TIERS: TierDefinition[] = [
  {
    name: 'public',
    adds: ['read:public', 'membership:read', 'membership:write', 'feedback:submit'],
    selfRequestable: false,
  },
  { name: 'member', adds: ['events:read_upcoming', 'events:rsvp'], selfRequestable: true },
  { name: 'resident', adds: ['directory:search', 'resources:read', 'research:query'], selfRequestable: true },
  {
    name: 'core',
    adds: ['resources:book', 'events:submit_recap', 'events:request', 'leaderboard:manage'],
    selfRequestable: true,
  },
  {
    name: 'operator',
    adds: ['admin:tier_review', 'admin:highlights_review', 'admin:events_review', 'admin:feedback_review'],
    selfRequestable: false,
  },
];

/** The ordered ladder of tiers; each tier grants its own scopes and those of every tier below it. */
export class TierLadder {
  readonly tiers: TierDefinition[];
  private readonly granted = new Map<string, Set<Scope>>();
  private readonly rank = new Map<string, number>();

  constructor(tiers: TierDefinition[]) {
    this.tiers = tiers;
    if (tiers.length === 0) throw new Error('the tier ladder needs at least one tier');
    const cumulative = new Set<Scope>();
    tiers.forEach((tier, index) => {
      for (const scope of tier.adds) cumulative.add(scope);
      this.granted.set(tier.name, new Set(cumulative));
      this.rank.set(tier.name, index);
    });
  }

  get lowest(): string {
    return this.tiers[0].name;
  }

  names(): string[] {
    return this.tiers.map((t) => t.name);
  }

  has(tier: string): boolean {
    return this.rank.has(tier);
  }

  grants(tier: string, scope: string): boolean {
    return this.granted.get(tier)?.has(scope as Scope) ?? false;
  }

  scopesOf(tier: string): Scope[] {
    return [...(this.granted.get(tier) ?? [])];
  }

  /** The lowest tier that grants the scope, or undefined when no tier does. */
  tierFor(scope: Scope): string | undefined {
    return this.tiers.find((t) => this.granted.get(t.name)?.has(scope))?.name;
  }

  isAbove(tier: string, than: string): boolean {
    return (this.rank.get(tier) ?? -1) > (this.rank.get(than) ?? -1);
  }

  split(tier: string, requested: readonly string[]): { granted: Scope[]; denied: string[] } {
    const granted: Scope[] = [];
    const denied: string[] = [];
    for (const scope of requested) {
      if (isScope(scope) && this.grants(tier, scope)) granted.push(scope);
      else denied.push(scope);
    }
    return { granted, denied };
  }
}

/** The port of a function that reads the ladder. */
export interface Tiered {
  tiers: TierLadder;
}

/** Reads an operator's ladder from a JSON file ([{name, adds, selfRequestable}]), checking every scope. */
export function loadTierLadder(file: string | undefined): TierLadder {
  if (!file) return new TierLadder(DEFAULT_TIERS);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as TierDefinition[];
  for (const tier of parsed) {
    const unknown = tier.adds.filter((s) => !isScope(s));
    if (unknown.length) throw new Error(`tier ${tier.name} names unknown scopes: ${unknown.join(', ')}`);
  }
  return new TierLadder(parsed);
}
