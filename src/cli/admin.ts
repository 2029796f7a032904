import type { Command } from 'commander';
import { approveGrant, denyGrant } from '../domain/auth/device-grants.ts';
import { devOutboxUrl } from '../domain/auth/sign-in-mail.ts';
import { DeniedScopesError, listTokens, mintToken } from '../domain/auth/tokens.ts';
import { seedDemoCommunity } from '../domain/demo/seed.ts';
import { listHighlights } from '../domain/highlights/highlights.ts';
import { createMember, getMember, listMembers, MemberError } from '../domain/members/members.ts';
import { listTierRequests } from '../domain/members/tier-requests.ts';
import { adminDecideHighlight } from '../operations/admin/highlights.ts';
import { adminSetMemberTier } from '../operations/admin/members.ts';
import { adminDecideTierRequest } from '../operations/admin/tier-requests.ts';
import { isFreshDatabase } from '../storage/migrations.ts';
import { allRows } from '../storage/paging.ts';
import { fail, printJson, printTable, withDeps } from './command-helpers.ts';
import { BY_OPTION, runAsOperator } from './operator.ts';

export function registerAdminCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(() =>
      withDeps(async (deps) => void process.stdout.write(`migrated (${deps.database.engine})\n`)),
    );

  program
    .command('outbox')
    .description('print the address of the development outbox again (a local server without SMTP_URL)')
    .action(() =>
      withDeps(async (deps) => {
        const outbox = deps.mailer.outbox;
        if (!outbox)
          fail(
            deps.mailer.delivery === 'smtp'
              ? 'no development outbox: sign-in links are mailed through SMTP_URL'
              : 'no development outbox: sign-in is single sign-on only (no SMTP_URL)',
          );
        process.stdout.write(`${devOutboxUrl(deps.config, outbox.key)}\n`);
      }),
    );

  program
    .command('seed')
    .description('load sample data')
    .requiredOption('--demo', 'the demo community (only into an empty database)')
    .action(() =>
      withDeps(async (deps) => {
        if (!(await isFreshDatabase(deps.db)))
          fail('the database already has members; the demo seeds only an empty one');
        await seedDemoCommunity(deps);
        process.stdout.write('seeded the demo community\n');
      }),
    );

  const member = program.command('member').description('manage members');
  member
    .command('create')
    .requiredOption('--email <email>')
    .requiredOption('--name <name>')
    .option('--tier <tier>')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        try {
          const created = await createMember(deps.db, deps.clock, deps.tiers, {
            email: o.email,
            name: o.name,
            tier: o.tier,
          });
          o.json ? printJson(created) : process.stdout.write(`${created.id}\n`);
        } catch (error) {
          if (error instanceof MemberError) fail(error.message);
          throw error;
        }
      }),
    );
  member
    .command('set-tier <id> <tier>')
    .requiredOption(...BY_OPTION)
    .option('--reason <text>', 'why, shown to the member')
    .action((id, tier, o) =>
      withDeps(async (deps) => {
        await runAsOperator(deps, o.by, adminSetMemberTier, { member_id: id, tier, reason: o.reason });
        process.stdout.write(`${id} is now ${tier}\n`);
      }),
    );
  member
    .command('list')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = await listMembers(deps.db);
        o.json ? printJson(rows) : printTable(rows, ['id', 'tier', 'email', 'name']);
      }),
    );

  const token = program.command('token').description('manage agent tokens');
  token
    .command('mint')
    .requiredOption('--member <id>')
    .requiredOption('--scopes <list>', 'comma-separated scopes')
    .option('--sandbox', 'simulate writes')
    .option('--name <name>', 'label shown in the console', 'cli token')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const owner = await getMember(deps.db, o.member);
        if (!owner) fail(`no member ${o.member}`);
        try {
          const minted = await mintToken(deps, owner, {
            scopes: String(o.scopes)
              .split(',')
              .map((s: string) => s.trim())
              .filter(Boolean),
            sandbox: Boolean(o.sandbox),
            name: o.name,
            source: 'cli',
          });
          o.json
            ? printJson({
                token: minted.plaintext,
                id: minted.row.id,
                prefix: minted.row.prefix,
                scopes: JSON.parse(minted.row.scopes),
                // What the device flow's completed poll says too: whose token, at which tier, sandboxed or not.
                member_id: owner.id,
                member_name: owner.name,
                tier: owner.tier,
                sandbox: minted.row.sandbox === 1,
              })
            : process.stdout.write(`${minted.plaintext}\n`);
        } catch (error) {
          if (error instanceof DeniedScopesError)
            fail(`${error.message} (denied_scopes: ${error.denied.join(',')})`);
          throw error;
        }
      }),
    );
  token
    .command('list')
    .option('--member <id>')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = (await listTokens(deps.db, o.member)).map(({ hash: _hash, ...rest }) => ({
          ...rest,
          scopes: JSON.parse(rest.scopes) as string[],
        }));
        o.json
          ? printJson(rows)
          : printTable(rows, ['id', 'prefix', 'member_id', 'sandbox', 'source', 'scopes']);
      }),
    );

  const device = program.command('device').description('decide device-code requests (for headless installs)');
  device
    .command('approve <user_code>')
    .requiredOption('--member <id>')
    .action((code, o) =>
      withDeps(async (deps) => {
        const result = await approveGrant(deps, code, o.member);
        if (!result.ok) fail(`cannot approve: ${result.reason}`);
        process.stdout.write(
          `approved; granted: ${result.granted.join(',') || '(none)'}; denied: ${result.denied.join(',') || '(none)'}\n`,
        );
      }),
    );
  device
    .command('deny <user_code>')
    .requiredOption('--member <id>')
    .option('--reason <text>')
    .action((code, o) =>
      withDeps(async (deps) => {
        const result = await denyGrant(deps, code, o.member, o.reason);
        if (!result.ok) fail(`cannot deny: ${result.reason}`);
        process.stdout.write('denied\n');
      }),
    );

  const tier = program.command('tier').description('review tier requests (for headless installs)');
  tier
    .command('list')
    .option('--status <status>', 'pending, approved, denied, cancelled or superseded', 'pending')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = await allRows((page) => listTierRequests(deps, o.status, page));
        o.json ? printJson(rows) : printTable(rows, ['id', 'member_id', 'tier', 'status', 'note']);
      }),
    );
  tier
    .command('approve <request_id>')
    .option('--tier <tier>', 'grant another tier than the one requested')
    .requiredOption(...BY_OPTION)
    .action((id, o) =>
      withDeps(async (deps) => {
        await runAsOperator(deps, o.by, adminDecideTierRequest, { id, decision: 'approve', tier: o.tier });
        process.stdout.write(`approved ${id}\n`);
      }),
    );
  tier
    .command('deny <request_id>')
    .option('--reason <text>')
    .requiredOption(...BY_OPTION)
    .action((id, o) =>
      withDeps(async (deps) => {
        await runAsOperator(deps, o.by, adminDecideTierRequest, { id, decision: 'deny', reason: o.reason });
        process.stdout.write(`denied ${id}\n`);
      }),
    );

  const highlights = program.command('highlights').description('moderate highlight submissions');
  highlights
    .command('list')
    .option('--status <status>', 'pending, active or rejected')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = (await allRows((page) => listHighlights(deps, o.status, page))).map((r) => ({
          ...r,
          story: JSON.parse(r.story),
        }));
        o.json ? printJson(rows) : printTable(rows, ['id', 'status', 'member_id', 'submitted_at']);
      }),
    );
  for (const decision of ['approve', 'reject'] as const) {
    highlights
      .command(`${decision} <id>`)
      .requiredOption(...BY_OPTION)
      .action((id, o) =>
        withDeps(async (deps) => {
          await runAsOperator(deps, o.by, adminDecideHighlight, { id, decision });
          process.stdout.write(`${decision === 'approve' ? 'approved' : 'rejected'} ${id}\n`);
        }),
      );
  }
}
