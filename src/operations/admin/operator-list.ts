import { Type } from '@sinclair/typebox';
import { errors } from '../../core/errors.ts';
import type { Scope } from '../../domain/access/scopes.ts';
import { decodeCursor, encodeCursor, type Page, type PageRequest } from '../../storage/paging.ts';
import { strictObject } from '../schemas.ts';
import type { Deps } from '../services.ts';
import { defineOperation } from '../types.ts';
import { LIST_ERRORS, listLimit, OPERATOR_TOOL } from './operator-tool.ts';

/** One operator review list: the records of a queue in one status, a page of at most `limit` at a time. */
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
  list(deps: Deps, status: Status, page: PageRequest): Promise<Page<Row>>;
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
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 300,
        description: 'next_cursor of the previous page; omit for the first page.',
      }),
    ),
  });
  return defineOperation<{ status?: Status; limit?: number; cursor?: string }, unknown>({
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
      count: Type.Integer({ description: 'Records on this page.' }),
      [spec.field]: Type.Array(Type.Object({}, { additionalProperties: true })),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as cursor for the next page; null on the last page.',
      }),
    }),
    errors: LIST_ERRORS,
    async handler({ deps, input }) {
      const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
      if (input.cursor !== undefined && !after)
        throw errors.validation('cursor is not a next_cursor this list gave out', { field: 'cursor' });
      const page = await spec.list(deps, input.status ?? spec.defaultStatus, {
        limit: input.limit ?? 50,
        after,
      });
      const records = page.rows.map(spec.view);
      return {
        body: {
          ok: true,
          count: records.length,
          [spec.field]: records,
          next_cursor: page.next ? encodeCursor(page.next) : null,
        },
      };
    },
  });
}
