import type { Command } from 'commander';
import { refreshEvents } from '../domain/events/feed.ts';
import { listEventRequests } from '../domain/events/proposals.ts';
import { deliverDueRsvps } from '../domain/events/rsvp-delivery.ts';
import { settleQueuedBookings } from '../domain/resources/booking-settlement.ts';
import { saveResource } from '../domain/resources/resources.ts';
import { adminDecideEventRequest } from '../operations/admin/event-requests.ts';
import { allRows } from '../storage/paging.ts';
import { resources } from '../storage/resources.ts';
import { startScheduler } from '../workers/scheduler.ts';
import { fail, printJson, printTable, withDeps } from './command-helpers.ts';
import { BY_OPTION, runAsOperator } from './operator.ts';

const consoleLog = {
  info: (details: Record<string, unknown>, message: string) =>
    process.stdout.write(`${message} ${JSON.stringify(details)}\n`),
  warn: (details: Record<string, unknown>, message: string) =>
    process.stderr.write(
      `${message}: ${String((details.err as Error)?.message ?? '')} ${String(details.job ?? '')}\n`,
    ),
};

/** Commands for the community's events, proposals, rooms and printers, and the queue workers. */
export function registerCommunityCommands(program: Command): void {
  const events = program.command('events').description('the upcoming-events cache');
  events
    .command('refresh')
    .description('read the event platform feed (EVENTS_FEED) now')
    .action(() =>
      withDeps(async (deps) => {
        try {
          printJson(await refreshEvents(deps));
        } catch (error) {
          fail(`feed refresh failed: ${(error as Error).message}`);
        }
      }),
    );

  const proposals = program.command('event-requests').description('review member event proposals');
  proposals
    .command('list')
    .option('--status <status>', 'pending, approved or declined', 'pending')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = (await allRows((page) => listEventRequests(deps, o.status, page))).map((r) => ({
          ...r,
          start: new Date(Number(r.start_at)).toISOString(),
          details: JSON.parse(r.details),
        }));
        o.json ? printJson(rows) : printTable(rows, ['id', 'status', 'member_id', 'start', 'title']);
      }),
    );
  for (const decision of ['approve', 'decline'] as const) {
    proposals
      .command(`${decision} <id>`)
      .option('--reason <text>')
      .requiredOption(...BY_OPTION)
      .action((id, o) =>
        withDeps(async (deps) => {
          await runAsOperator(deps, o.by, adminDecideEventRequest, { id, decision, reason: o.reason });
          process.stdout.write(`${decision === 'approve' ? 'approved' : 'declined'} ${id}\n`);
        }),
      );
  }

  const resource = program.command('resource').description('rooms and printers');
  resource
    .command('add <id>')
    .description('add a resource, or replace the definition of an existing one')
    .requiredOption('--name <name>')
    .option('--kind <kind>', 'room or printer', 'room')
    .option('--capacity <n>', 'people (rooms) or jobs (printers) at once', '1')
    .option('--weekdays <hours>', 'opening hours Monday to Friday, HH:MM-HH:MM UTC, or closed', '09:00-21:00')
    .option('--weekends <hours>', 'opening hours Saturday and Sunday', '10:00-18:00')
    .option('--not-bookable', 'list it without accepting bookings')
    .action((id, o) =>
      withDeps(async (deps) => {
        try {
          await saveResource(deps.db, {
            id,
            kind: o.kind,
            name: o.name,
            capacity: Number(o.capacity),
            openHours: { weekdays: o.weekdays, weekends: o.weekends },
            bookable: !o.notBookable,
          });
        } catch (error) {
          fail((error as Error).message);
        }
        process.stdout.write(`saved ${id}\n`);
      }),
    );
  resource
    .command('list')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = await resources.all(deps.db);
        o.json
          ? printJson(rows)
          : printTable(rows, ['id', 'kind', 'name', 'capacity', 'open_hours', 'bookable']);
      }),
    );

  program
    .command('worker')
    .description(
      'deliver queued RSVPs and settle queued bookings (for instances started with RUN_WORKERS=false)',
    )
    .option('--once', 'one pass over each queue, then exit')
    .option('--drain', 'passes until the queues have nothing due, then exit')
    .option('--batch <n>', 'jobs claimed per pass', '50')
    .action((o) =>
      withDeps(async (deps) => {
        if (o.once || o.drain) {
          const batch = Math.max(1, Number(o.batch) || 50);
          const done = { rsvps: 0, bookings: 0 };
          for (;;) {
            const rsvps = await deliverDueRsvps(deps, batch);
            const bookings = await settleQueuedBookings(deps, batch, (error, id) =>
              process.stderr.write(`booking ${id}: ${(error as Error).message}\n`),
            );
            done.rsvps += rsvps;
            done.bookings += bookings;
            if (o.once || rsvps + bookings === 0) break;
          }
          printJson(done);
          return;
        }
        const stop = startScheduler(deps, consoleLog, { workers: true });
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await stop();
      }),
    );
}
