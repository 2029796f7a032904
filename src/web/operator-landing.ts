import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MS } from '../clock.ts';
import { listHighlights } from '../domain/highlights/highlights.ts';
import { listTierRequests } from '../domain/members/tier-requests.ts';
import {
  activityByDay,
  backlogs,
  busiestOperations,
  memberLabels,
  tokenCounts,
} from '../domain/operator/overview.ts';
import { slowestOperations } from '../operations/pipeline/metrics.ts';
import type { Deps } from '../operations/services.ts';
import { parseStory } from './highlight-story.ts';
import { html, type SafeHtml } from './html.ts';
import { operatorNav } from './operator-nav.ts';
import { QUEUE_PAGES, queueCards, waitedFor } from './operator-queues.ts';
import { isOperatorTier } from './page-viewer.ts';
import { operatorsOnly, sendPage, signedIn } from './respond.ts';
import { horizontalBars, type Series, stackedBars } from './svg-charts.ts';

const DAYS = 14;
const LATEST = 5;
const SURFACES = ['rest', 'mcp', 'a2a', 'batch', 'web', 'cli'];

/** The last `days` UTC days, oldest first, as YYYY-MM-DD. */
function lastDays(now: number, days: number): string[] {
  const today = Math.floor(now / MS.day) * MS.day;
  return Array.from({ length: days }, (_, i) =>
    new Date(today - (days - 1 - i) * MS.day).toISOString().slice(0, 10),
  );
}

/** Series per surface over the days; surfaces with no calls in the window are left out. */
function perSurface(
  rows: Awaited<ReturnType<typeof activityByDay>>,
  days: string[],
  pick: 'requests' | 'refusals',
): Series[] {
  const seen = [...new Set(rows.map((row) => row.surface))].sort(
    (a, b) => (SURFACES.indexOf(a) + 1 || 99) - (SURFACES.indexOf(b) + 1 || 99),
  );
  return seen
    .map((surface) => ({
      name: surface,
      values: days.map((day) => rows.find((row) => row.day === day && row.surface === surface)?.[pick] ?? 0),
    }))
    .filter((series) => series.values.some((value) => value > 0));
}

const shortDay = (day: string) => day.slice(5);

/**
 * The operator console's landing page (/operator): the queues and their counts, then the dashboard,
 * as charts drawn on the server: calls and refusals per day by surface, tokens, queue backlogs, the
 * busiest operations, this instance's slowest ones, and the latest items waiting. Any tier that grants an operator scope may see it.
 */
export function registerOperatorLanding(app: FastifyInstance, deps: Deps): void {
  async function landing(request: FastifyRequest, reply: FastifyReply) {
    const session = await signedIn(deps, request);
    if (!session) return reply.redirect('/signin?next=/operator', 303);
    if (!isOperatorTier(deps, session.member.tier)) return operatorsOnly(reply, session.member.tier);
    const now = deps.clock.now();
    const slowest = slowestOperations(8);
    const [queues, activity, busiest, tokens, tierRequests, stories] = await Promise.all([
      backlogs(deps),
      activityByDay(deps, DAYS),
      busiestOperations(deps, DAYS, 8),
      tokenCounts(deps),
      listTierRequests(deps, 'pending', { limit: LATEST }),
      listHighlights(deps, 'pending', { limit: LATEST }, 'asc'),
    ]);
    const labels = await memberLabels(
      deps,
      tierRequests.rows.map((row) => row.member_id),
    );
    const days = lastDays(now, DAYS);
    const requests = perSurface(activity, days, 'requests');
    const refusals = perSurface(activity, days, 'refusals');
    const totalCalls = activity.reduce((sum, row) => sum + row.requests, 0);
    const totalRefused = activity.reduce((sum, row) => sum + row.refusals, 0);
    const charts: SafeHtml[] = [
      stackedBars({
        id: 'chart-requests',
        title: `Calls per day by surface, last ${DAYS} days`,
        summary: `${totalCalls} calls by members' agents and sessions over ${DAYS} days.`,
        categories: days,
        categoryLabel: shortDay,
        series: requests,
      }),
      stackedBars({
        id: 'chart-refusals',
        title: `Refusals per day by surface, last ${DAYS} days`,
        summary: `${totalRefused} of them refused (status 400 or above).`,
        categories: days,
        categoryLabel: shortDay,
        series: refusals,
      }),
      horizontalBars({
        id: 'chart-tokens',
        title: 'Agents and tokens',
        summary: `${tokens.live} live tokens and ${tokens.sandbox} sandbox tokens held by ${tokens.members} members; ${tokens.activeThisWeek} used this week.`,
        seriesNames: ['Tokens'],
        bars: [
          { label: 'Live tokens', values: [tokens.live] },
          { label: 'Sandbox tokens', values: [tokens.sandbox] },
          { label: 'Used in the last 7 days', values: [tokens.activeThisWeek] },
          { label: 'Members with a token', values: [tokens.members] },
          { label: 'Revoked tokens', values: [tokens.revoked] },
        ],
      }),
      horizontalBars({
        id: 'chart-backlogs',
        title: 'Queue backlogs',
        summary: queues.map((queue) => `${QUEUE_PAGES[queue.queue].label}: ${queue.waiting}`).join('; '),
        seriesNames: ['Waiting'],
        bars: queues.map((queue) => ({ label: QUEUE_PAGES[queue.queue].label, values: [queue.waiting] })),
      }),
      horizontalBars({
        id: 'chart-operations',
        title: `Busiest operations, last ${DAYS} days`,
        summary: busiest.length
          ? busiest.map((op) => `${op.operation}: ${op.calls} calls, ${op.refusals} refused`).join('; ')
          : 'No calls yet.',
        seriesNames: ['Answered', 'Refused'],
        bars: busiest.map((op) => ({ label: op.operation, values: [op.calls - op.refusals, op.refusals] })),
      }),
      horizontalBars({
        id: 'chart-slowest',
        title: 'Slowest operations on this instance since it started (mean ms)',
        summary: slowest.length
          ? slowest
              .map((op) => `${op.operation}: ${op.meanMs.toFixed(1)} ms over ${op.calls} calls`)
              .join('; ')
          : 'Not enough calls yet (5 of an operation).',
        seriesNames: ['Mean ms'],
        bars: slowest.map((op) => ({ label: op.operation, values: [Math.round(op.meanMs * 10) / 10] })),
      }),
    ];
    return sendPage(
      reply,
      200,
      'Operator console',
      html`${operatorNav('/operator')}<h1>Operator console</h1>
<h2>Queues</h2>${queueCards(queues, now)}
<div class="grid">
<section class="card" aria-labelledby="latest-tier"><h2 id="latest-tier">Latest tier requests waiting</h2>${
        tierRequests.rows.length
          ? html`<ul>${tierRequests.rows.map(
              (row) =>
                html`<li><a href="/operator/tier-requests#${row.id}">${labels.get(row.member_id)?.name ?? row.member_id} asks for ${row.tier}</a> <span class="muted">(${waitedFor(now - Number(row.created_at))})</span></li>`,
            )}</ul>`
          : html`<p>None.</p>`
      }</section>
<section class="card" aria-labelledby="latest-stories"><h2 id="latest-stories">Latest stories to moderate</h2>${
        stories.rows.length
          ? html`<ul>${stories.rows.map((row) => {
              const story = parseStory(row.story);
              const title = [story.member_name, story.event_title]
                .filter((part) => typeof part === 'string')
                .join(' at ');
              return html`<li><a href="/operator/highlights#${row.id}">${title || row.id}</a> <span class="muted">(${waitedFor(now - Number(row.submitted_at))})</span></li>`;
            })}</ul>`
          : html`<p>None.</p>`
      }</section>
</div>
<h2>Dashboard</h2>
<p class="muted">From the activity log: every call a member's agent token or browser session made (public reads without a credential are not logged). Response times are not stored: the slowest operations are this instance's own, measured since it started (every call, on every surface; the same figures as its metrics).</p>
${charts}`,
    );
  }
  app.get('/operator', landing);
  app.get('/operator/', landing);
}
