// The event feed, RSVP delivery and the queue workers.
import { flag, hostList, integer, optional } from './settings.ts';

export const EVENTS_SETTINGS = {
  eventsFeed: optional({
    env: 'EVENTS_FEED',
    group: 'events',
    accepts: 'http(s) URL or file path',
    description:
      "The event platform's iCalendar feed: an `http(s)://` URL or a local `.ics` path. Unset: the " +
      "upcoming list holds only local events (the demo's, approved member proposals) and each refresh " +
      'just stamps the cache age.',
  }),
  eventsRefreshMinutes: integer({
    env: 'EVENTS_REFRESH_MINUTES',
    group: 'events',
    default: 15,
    min: 1,
    unit: 'minutes, integer',
    description:
      'Minutes between feed refreshes. `age_min` counts from the last successful one; `stale` turns ' +
      'true after 90 minutes. A feed that fails to load leaves the previous cache in place.',
  }),
  eventUrlHosts: hostList({
    env: 'EVENT_URL_HOSTS',
    group: 'events',
    default: 'lu.ma,luma.com',
    description:
      "The platform's event-URL hosts, canonical first. Lookups and RSVPs accept either; answers carry " +
      'the first. A feed event without a URL on these hosts is skipped (it could never be looked up).',
  }),
  rsvpWebhookUrl: optional({
    env: 'RSVP_WEBHOOK_URL',
    group: 'events',
    secret: true,
    accepts: 'URL',
    description:
      'Where the worker POSTs each queued RSVP (JSON `{rsvp_id, event_url, email, name, requested_at}`, ' +
      'header `Idempotency-Key: <rsvp_id>`). 2xx confirms; 408/425/429/5xx and network errors are ' +
      'retried with backoff (30 s doubling to 1 h, 8 attempts); other 4xx fail the RSVP (`rsvp_failed` ' +
      "in the member's log). Unset: local-only mode, RSVPs are recorded here and confirmed. RSVPs to " +
      'member events published here never leave the service. Secret, as it may carry a token.',
  }),
  workerIntervalSeconds: integer({
    env: 'WORKER_INTERVAL_SECONDS',
    group: 'events',
    default: 5,
    min: 1,
    unit: 'seconds, integer',
    description: 'Seconds between passes over the RSVP and booking queues.',
  }),
  workerLeaseSeconds: integer({
    env: 'WORKER_LEASE_SECONDS',
    group: 'events',
    default: 60,
    min: 1,
    unit: 'seconds, integer',
    description:
      'How long a worker holds a claimed job; a worker that dies mid-job loses it after this and ' +
      'another takes it up.',
  }),
  runWorkers: flag({
    env: 'RUN_WORKERS',
    group: 'events',
    default: true,
    description:
      'Run the queue workers inside `serve`. Set `false` on instances that should only serve, and run ' +
      '`agent-commons worker` somewhere instead (several workers are safe).',
  }),
};
