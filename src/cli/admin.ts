import type { Command } from 'commander';
import { approveGrant, denyGrant } from '../domain/auth/device-grants.ts';
import { DeniedScopesError, listTokens, mintToken } from '../domain/auth/tokens.ts';
import { seedDemoCommunity } from '../domain/demo/seed.ts';
import { decideHighlight, listHighlights } from '../domain/highlights/highlights.ts';
import { createMember, getMember, listMembers, MemberError } from '../domain/members/members.ts';
import { auditedAction } from '../domain/members/operator-audit.ts';
import { changeMemberTier, decideTierRequest, listTierRequests } from '../domain/members/tier-requests.ts';
import { isFreshDatabase } from '../storage/migrations.ts';
import { allRows } from '../storage/paging.ts';
import { fail, printJson, printTable, withDeps } from './context.ts';

export function registerAdminCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(() =>
      withDeps(async (deps) => void process.stdout.write(`migrated (${deps.database.engine})\n`)),
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
    .option('--by <name>', 'who decided (the audit row and the member see it)', 'cli')
    .option('--reason <text>', 'why, shown to the member')
    .action((id, tier, o) =>
      withDeps(async (deps) => {
        const outcome = await auditedAction(
          deps,
          { operatorId: o.by, action: 'member.set_tier', target: id, detail: { tier } },
          (scoped) => changeMemberTier(scoped, id, tier, o.by, o.reason),
        );
        if (outcome !== 'done' && outcome !== 'unchanged') fail(outcome);
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
          const minted = await mintToken(deps.db, deps.clock, deps.tiers, owner, {
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
    .option('--by <name>', 'who decided', 'cli')
    .action((id, o) =>
      withDeps(async (deps) => {
        const result = await auditedAction(
          deps,
          { operatorId: o.by, action: 'tier_request.approve', target: id, detail: { tier: o.tier } },
          (scoped) => decideTierRequest(scoped, id, o.by, { decision: 'approve', tier: o.tier }),
        );
        if (result !== 'done') fail(`cannot approve ${id}: ${result}`);
        process.stdout.write(`approved ${id}\n`);
      }),
    );
  tier
    .command('deny <request_id>')
    .option('--reason <text>')
    .option('--by <name>', 'who decided', 'cli')
    .action((id, o) =>
      withDeps(async (deps) => {
        const result = await auditedAction(
          deps,
          { operatorId: o.by, action: 'tier_request.deny', target: id, detail: { reason: o.reason } },
          (scoped) => decideTierRequest(scoped, id, o.by, { decision: 'deny', reason: o.reason }),
        );
        if (result !== 'done') fail(`cannot deny ${id}: ${result}`);
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
      .option('--by <name>', 'who decided', 'cli')
      .action((id, o) =>
        withDeps(async (deps) => {
          const result = await auditedAction(
            deps,
            { operatorId: o.by, action: `highlight.${decision}`, target: id },
            (scoped) => decideHighlight(scoped, id, decision, o.by),
          );
          if (result !== 'done') fail(`cannot ${decision} ${id}: ${result}`);
          process.stdout.write(`${decision === 'approve' ? 'approved' : 'rejected'} ${id}\n`);
        }),
      );
  }
}
