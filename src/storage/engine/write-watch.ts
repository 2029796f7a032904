import type {
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode']);

function tablesOf(node: OperationNode | undefined, into: string[] = []): string[] {
  if (!node) return into;
  const record = node as unknown as Record<string, unknown>;
  if (node.kind === 'TableNode') {
    const name = (record.table as { identifier?: { name?: string } })?.identifier?.name;
    if (name) into.push(name);
    return into;
  }
  if (node.kind === 'FromNode') for (const from of record.froms as OperationNode[]) tablesOf(from, into);
  if (node.kind === 'AliasNode') tablesOf(record.node as OperationNode, into);
  return into;
}

function writtenTables(node: RootOperationNode): string[] {
  const record = node as unknown as Record<string, OperationNode | undefined>;
  if (node.kind === 'InsertQueryNode') return tablesOf(record.into);
  if (node.kind === 'UpdateQueryNode') return tablesOf(record.table);
  if (node.kind === 'DeleteQueryNode') return tablesOf(record.from);
  return [];
}

/**
 * Calls onWrite when a query built through Kysely writes one of the watched tables, as it is built
 * and again once it has run, so a cache filled in between cannot keep what the write replaced.
 * `ignoreColumns` names updates that do not count (e.g. a last-used timestamp).
 */
export class WriteWatchPlugin implements KyselyPlugin {
  private readonly tables: ReadonlySet<string>;
  private readonly onWrite: () => void;
  private readonly ignoreColumns: ReadonlySet<string>;
  private readonly pending = new Set<unknown>();

  constructor(
    tables: ReadonlySet<string>,
    onWrite: () => void,
    ignoreColumns: ReadonlySet<string> = new Set(),
  ) {
    this.tables = tables;
    this.onWrite = onWrite;
    this.ignoreColumns = ignoreColumns;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const { node } = args;
    if (this.watches(node)) {
      this.onWrite();
      this.pending.add(args.queryId);
    }
    return node;
  }

  /**
   * Whether a query writes a watched table. Such a query must be built at each run: one compiled
   * once and run many times (src/storage/engine/prepared.ts) passes this plugin once, at its compilation.
   */
  watches(node: RootOperationNode): boolean {
    return (
      WRITES.has(node.kind) && writtenTables(node).some((t) => this.tables.has(t)) && !this.ignorable(node)
    );
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.pending.delete(args.queryId)) this.onWrite();
    return args.result;
  }

  private ignorable(node: RootOperationNode): boolean {
    if (node.kind !== 'UpdateQueryNode' || this.ignoreColumns.size === 0) return false;
    const updates =
      (node as unknown as { updates?: { column: { column?: { name?: string } } }[] }).updates ?? [];
    return updates.length > 0 && updates.every((u) => this.ignoreColumns.has(u.column?.column?.name ?? ''));
  }
}
