import { Type } from '@sinclair/typebox';
import type { ApiError } from '../../core/errors.ts';
import type { Principal } from '../../domain/auth/principal.ts';
import { paymentStatus } from '../../domain/payments/describe.ts';
import { serialize } from '../../http/serialized-answers.ts';
import type { Deps } from '../services.ts';
import { defineOperation, type OperationResult } from '../types.ts';

/** MCP clients expand ${VAR} in their config, so the token stays in the environment, not the file. */
const TOKEN_VARIABLE = ['$', '{AGENT_COMMONS_TOKEN}'].join('');

const recipes = new WeakMap<Deps['config'], ReturnType<typeof buildRecipe>>();

/** How to point an MCP client at this service with a static bearer header (built once per config). */
export function mcpInstallRecipe(deps: Deps) {
  let recipe = recipes.get(deps.config);
  if (!recipe) {
    recipe = buildRecipe(deps);
    recipes.set(deps.config, recipe);
  }
  return recipe;
}

function buildRecipe(deps: Deps) {
  const url = `${deps.config.publicUrl}/api/mcp`;
  return {
    url,
    transport: 'streamable-http',
    headers: { Authorization: 'Bearer <your agt_ token>' },
    config_snippet: {
      mcpServers: {
        'agent-commons': {
          type: 'http',
          url,
          headers: { Authorization: `Bearer ${TOKEN_VARIABLE}` },
        },
      },
    },
  };
}

const Output = Type.Object(
  {
    ready: Type.Boolean(),
    checks: Type.Record(Type.String(), Type.Unknown()),
    missing: Type.Array(Type.String()),
    next_actions: Type.Array(Type.String()),
    mcp: Type.Unknown(),
  },
  { additionalProperties: true },
);

export const setupCheck = defineOperation<Record<string, never>, typeof Output.static>({
  id: 'setupCheck',
  method: 'GET',
  path: '/api/agent/setup-check',
  tag: 'auth',
  summary: 'Check an agent’s set-up',
  description:
    'Always 200. With a valid token: ready with the token’s scopes, member, tier and sandbox flag. Without one, or with a bad one: what is missing and what to do next. Both carry an MCP install recipe.',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  recordsActivity: false,
  inputFrom: 'query',
  // "Always 200": query parameters it does not use are ignored rather than refused.
  input: Type.Object({}, { additionalProperties: true }),
  output: Output,
  successStatus: 200,
  errors: [],
  handler({ principal, credentialProblem, deps }) {
    // Agents call this often with the same token: while the token lookup is cached (the same token
    // and member objects come back), so is the answer and its serialization. Answered from memory,
    // so not as a promise (see Operation.handler).
    if (principal.kind === 'bearer') {
      const known = answers.get(principal.token);
      if (known && known.member === principal.member) return known.result;
      const result = answer(principal, credentialProblem, deps);
      Object.assign(result, serialize(result.body));
      answers.set(principal.token, { member: principal.member, result });
      return result;
    }
    return answer(principal, credentialProblem, deps);
  },
});

const answers = new WeakMap<object, { member: object; result: OperationResult<typeof Output.static> }>();

function answer(
  principal: Principal,
  credentialProblem: ApiError | undefined,
  deps: Deps,
): OperationResult<typeof Output.static> {
  const base = deps.config.publicUrl;
  if (principal.kind !== 'bearer') {
    const tokenState = credentialProblem ? credentialProblem.code : 'missing';
    return {
      body: {
        ready: false,
        checks: { token: tokenState, payments: paymentStatus(deps.config.payments) },
        missing: ['agent_token'],
        next_actions: [
          credentialProblem
            ? `The bearer was refused (${credentialProblem.code}); get a new token.`
            : 'Send the token as "Authorization: Bearer agt_…".',
          `Start the device flow: POST ${base}/api/agent/signup/start with {"scopes":[…]} and show the human the verify_url_complete.`,
          `Or ask the human to mint a token at ${base}/agent-console.`,
        ],
        mcp: mcpInstallRecipe(deps),
      },
    };
  }
  const { token, member } = principal;
  const suspended = token.scopes.filter((s) => !deps.tiers.grants(member.tier, s));
  return {
    body: {
      ready: true,
      checks: {
        token: 'valid',
        token_prefix: token.prefix,
        scopes: token.scopes,
        scopes_suspended_by_tier: suspended,
        member_id: member.id,
        member_name: member.name,
        tier: member.tier,
        sandbox: token.sandbox,
        payments: paymentStatus(deps.config.payments),
      },
      missing: [],
      next_actions: suspended.length
        ? [
            `Scopes ${suspended.join(', ')} need a higher tier than ${member.tier}; the member can request one.`,
          ]
        : [],
      mcp: mcpInstallRecipe(deps),
    },
  };
}
