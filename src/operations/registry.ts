import { getMyActivity } from './account/activity.ts';
import { adminDecideEventRequest, adminListEventRequests } from './admin/event-requests.ts';
import { adminListFeedback, adminResolveFeedback } from './admin/feedback.ts';
import { adminDecideHighlight, adminListHighlights } from './admin/highlights.ts';
import { adminInviteMember, adminSetMemberTier } from './admin/members.ts';
import { adminDecideTierRequest, adminListTierRequests } from './admin/tier-requests.ts';
import { agentCapabilities } from './agent/capabilities.ts';
import { agentHealth } from './agent/health.ts';
import { setupCheck } from './auth/setup-check.ts';
import { pollSignup } from './auth/signup-poll.ts';
import { startSignup } from './auth/signup-start.ts';
import { revokeOwnToken } from './auth/token-revoke.ts';
import { batchPublicReads } from './batch/batch.ts';
import { donateTool, getNews, getPresentationTool, listPresentationsTool } from './content/library.ts';
import {
  getLatestNewsletterIssue,
  getNewsletterIssue,
  getNewsletterStory,
  listNewsletterIssues,
  searchNewsletter,
} from './content/newsletter.ts';
import { searchMemberDirectory } from './directory/search.ts';
import { getEventCalendar } from './events/calendar.ts';
import { getEvent } from './events/get.ts';
import { nextEvents, nextEventsTool } from './events/next.ts';
import { requestEvent } from './events/request.ts';
import { rsvpToEvent } from './events/rsvp.ts';
import { cancelRsvpToEvent } from './events/rsvp-cancel.ts';
import { listUpcomingEvents } from './events/upcoming.ts';
import { submitFeedback } from './feedback/submit.ts';
import { listApprovedHighlightsOperation } from './highlights/list-approved.ts';
import { highlightStatus } from './highlights/status.ts';
import { submitHighlight } from './highlights/submit.ts';
import { registerSigningKey, revokeSigningKey, toggleSignatureEnforcement } from './keys/signing-keys.ts';
import { getLeaderboard } from './leaderboard/board.ts';
import { leaderboardOptIn } from './leaderboard/optin.ts';
import { getLeaderboardStatus } from './leaderboard/status.ts';
import {
  cancelMyTierRequest,
  getMyMembershipTool,
  getMyTier,
  requestHigherTier,
  requestTierTool,
} from './membership/tier.ts';
import { donateWithX402 } from './payments/donate.ts';
import { getDonorWall } from './payments/donor-wall.ts';
import { researchAsk } from './research/ask.ts';
import { bookResource } from './resources/book.ts';
import { cancelBookingOperation } from './resources/cancel.ts';
import { listResources } from './resources/list.ts';
import type { Operation } from './types.ts';

/** Every operation of the service, declared once; each surface and document is derived from this list. */
export const OPERATIONS: readonly Operation[] = [
  startSignup,
  pollSignup,
  revokeOwnToken,
  registerSigningKey,
  revokeSigningKey,
  toggleSignatureEnforcement,
  setupCheck,
  submitHighlight,
  highlightStatus,
  listApprovedHighlightsOperation,
  submitFeedback,
  getMyTier,
  requestHigherTier,
  cancelMyTierRequest,
  nextEvents,
  listUpcomingEvents,
  getEvent,
  getEventCalendar,
  rsvpToEvent,
  cancelRsvpToEvent,
  requestEvent,
  listResources,
  bookResource,
  cancelBookingOperation,
  searchMemberDirectory,
  researchAsk,
  getMyActivity,
  batchPublicReads,
  getDonorWall,
  donateWithX402,
  leaderboardOptIn,
  getLeaderboardStatus,
  getLeaderboard,
  // MCP and A2A only (no REST path).
  nextEventsTool,
  getMyMembershipTool,
  requestTierTool,
  agentCapabilities,
  agentHealth,
  // Public content (MCP and A2A only).
  listNewsletterIssues,
  getLatestNewsletterIssue,
  getNewsletterIssue,
  getNewsletterStory,
  searchNewsletter,
  getNews,
  listPresentationsTool,
  getPresentationTool,
  donateTool,
  // Operator tools (MCP and A2A only; the console and the CLI run the same decisions): decisions
  // are dry runs unless confirm is true.
  adminListTierRequests,
  adminDecideTierRequest,
  adminListHighlights,
  adminDecideHighlight,
  adminListEventRequests,
  adminDecideEventRequest,
  adminListFeedback,
  adminResolveFeedback,
  adminSetMemberTier,
  adminInviteMember,
];

export function checkRegistry(operations: readonly Operation[]): void {
  const seen = new Set<string>();
  for (const op of operations) {
    if (op.path === undefined && !op.mcpTool)
      throw new Error(`operation registry: ${op.id} has neither a REST path nor a tool name`);
    if (op.path === undefined && op.aliases?.length)
      throw new Error(`operation registry: ${op.id} has aliases but no REST path`);
    const routes = op.path === undefined ? [] : [op.path, ...(op.aliases ?? [])];
    for (const key of [op.id, ...routes.map((route) => `${op.method} ${route}`)]) {
      if (seen.has(key)) throw new Error(`operation registry: ${key} is declared twice`);
      seen.add(key);
    }
    if (op.mcpTool) {
      if (seen.has(`tool:${op.mcpTool}`))
        throw new Error(`operation registry: tool ${op.mcpTool} is declared twice`);
      seen.add(`tool:${op.mcpTool}`);
    }
  }
}
