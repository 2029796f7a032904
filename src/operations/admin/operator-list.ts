import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import type { Scope } from '../../domain/auth/scopes.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';
import { LIST_ERRORS, listLimit, OPERATOR_TOOL } from './operator-mutation.ts';

/** One operator review list: the records of a queue in one status, at most `limit` of them. */
interface OperatorListSpec<Status extends string, Row> {
  id: string;
  summary: string;
  description: string;
  mcpTool: string;
  scope: Scope;
  statuses: readonly Status[];
  defaultStatus: Status;
  statusDescription: string;
  /** The answer's field holding the records. */
  field: string;
  list(deps: Deps, status: Status): Promise<Row[]>;
  /** A stored row as the tool shows it. */
  view(row: Row): Record<string, unknown>;
}

/** The list tools every review queue has: same input, answer shape, errors and limit. */
export function defineOperatorList<Status extends string, Row>(spec: OperatorListSpec<Status, Row>) {
  const input = strictObject({
    status: Type.Optional(
      Type.Union(
        spec.statuses.map((s) => Type.Literal(s)),
        { description: spec.statusDescription },
      ),
    ),
    limit: listLimit,
  });
  return defineOperation<{ status?: Status; limit?: number }, unknown>({
    ...OPERATOR_TOOL,
    id: spec.id,
    summary: spec.summary,
    description: spec.description,
    mcpTool: spec.mcpTool,
    scope: spec.scope,
    sandbox: 'real',
    input,
    output: Type.Object({
      ok: Type.Literal(true),
      count: Type.Integer(),
      [spec.field]: Type.Array(Type.Object({}, { additionalProperties: true })),
    }),
    errors: LIST_ERRORS,
    async handler({ deps, input }) {
      const rows = (await spec.list(deps, input.status ?? spec.defaultStatus)).slice(0, input.limit ?? 50);
      const records = rows.map(spec.view);
      return { body: { ok: true, count: records.length, [spec.field]: records } };
    },
  });
}
