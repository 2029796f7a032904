// The reads that grow with the community (test/scale and bench/scale-reads.ts): each as its client
// makes it over the wire, and the domain calls its handler makes, for their plans.
import type { Clock } from '../../src/clock.ts';
import type { TierLadder } from '../../src/domain/access/tiers.ts';
import { readEvents } from '../../src/domain/eventlog/eventlog.ts';
import { listFeedback } from '../../src/domain/feedback/triage.ts';
import { listApprovedHighlights } from '../../src/domain/highlights/approved.ts';
import { listHighlights } from '../../src/domain/highlights/highlights.ts';
import { searchDirectory } from '../../src/domain/members/directory.ts';
import { listMembers } from '../../src/domain/members/members.ts';
import { listTierRequests } from '../../src/domain/members/tier-requests.ts';
import {
  activityByDay,
  backlogOf,
  backlogs,
  busiestOperations,
  memberLabels,
  tokenCounts,
} from '../../src/domain/operator/overview.ts';
import type { Db } from '../../src/storage/schema.ts';
import { COMMON_WORD, RARE_TYPE } from './scale-fixture.ts';

export interface ReadDeps {
  db: Db;
  clock: Clock;
  tiers: TierLadder;
}

export interface ScaleRead {
  name: string;
  path: string;
  /** Who asks: an operator's or the member's browser session, the member's agent token, or nobody. */
  as: 'operator' | 'member' | 'bearer' | 'anonymous';
  /** The domain calls the handler makes (what its SQL is caught from). */
  queries(deps: ReadDeps, who: { operator: string; member: string }): Promise<unknown>;
}

const PAGE = { limit: 50 };

export const SCALE_READS: ScaleRead[] = [
  {
    name: 'operator landing',
    path: '/operator',
    as: 'operator',
    async queries(deps) {
      await Promise.all([
        backlogs(deps),
        activityByDay(deps, 14),
        busiestOperations(deps, 14, 8),
        tokenCounts(deps),
        listTierRequests(deps, 'pending', { limit: 5 }),
        listHighlights(deps, 'pending', { limit: 5 }, 'asc'),
      ]);
    },
  },
  {
    name: 'highlights queue',
    path: '/operator/highlights',
    as: 'operator',
    async queries(deps) {
      const page = await listHighlights(deps, 'pending', PAGE, 'asc');
      await backlogOf(deps, 'highlights');
      await memberLabels(
        deps,
        page.rows.map((row) => row.member_id),
      );
    },
  },
  {
    name: 'feedback queue',
    path: '/operator/feedback',
    as: 'operator',
    async queries(deps) {
      await listFeedback(deps, 'open', PAGE, 'asc');
      await backlogOf(deps, 'feedback');
    },
  },
  {
    name: 'operator members',
    path: '/operator/members',
    as: 'operator',
    queries: (deps) => listMembers(deps.db),
  },
  {
    name: 'home page for an operator',
    path: '/',
    as: 'operator',
    queries: (deps) => backlogs(deps),
  },
  {
    name: 'approved highlights, anonymous',
    path: '/api/highlights',
    as: 'anonymous',
    queries: (deps) => listApprovedHighlights(deps, { limit: 20 }),
  },
  {
    name: 'event log, rare type',
    path: `/api/events/next?types=${RARE_TYPE}`,
    as: 'member',
    queries: (deps, who) => readEvents(deps.db, who.member, { since: 0, types: [RARE_TYPE], limit: 50 }),
  },
  {
    name: 'directory, common word',
    path: `/api/directory/search?q=${COMMON_WORD}`,
    as: 'bearer',
    queries: (deps) => searchDirectory(deps, COMMON_WORD, 20, { email: false, tier: false }),
  },
  {
    name: 'directory, empty query',
    path: '/api/directory/search?q=',
    as: 'bearer',
    queries: (deps) => searchDirectory(deps, '', 20, { email: false, tier: false }),
  },
];
