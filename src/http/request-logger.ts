// A request's logger, made for every request Fastify routes (its `childLoggerFactory`), and the
// lines Fastify logs of every request (its `logController`).
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';

type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

type Bindings = Record<string, unknown>;

/** The parent's side: pino's root logger, which says whether a level is on. */
interface ParentLogger extends FastifyBaseLogger {
  isLevelEnabled(level: string): boolean;
}

/**
 * pino's child logger with the request id bound, made the first time a line at an enabled level
 * is logged, and only then. Fastify makes one logger a request; at the production level (info and
 * below left out, or no line logged at all) most requests log nothing, and building a pino child
 * (a new object over the parent, its bindings serialized) was part of every request's cost. A line
 * logged reads exactly as the child's would: it is the child that logs it.
 */
export class RequestLogger implements FastifyBaseLogger {
  private child_: FastifyBaseLogger | undefined;
  private readonly parent: ParentLogger;
  private readonly bindings: Bindings;
  constructor(parent: ParentLogger, bindings: Bindings) {
    this.parent = parent;
    this.bindings = bindings;
  }

  get level(): string {
    return this.child_ ? this.child_.level : this.parent.level;
  }
  set level(level: string) {
    this.logger().level = level;
  }

  private logger(): FastifyBaseLogger {
    this.child_ ??= this.parent.child(this.bindings);
    return this.child_;
  }

  private enabled(level: string): boolean {
    return this.child_
      ? (this.child_ as ParentLogger).isLevelEnabled(level)
      : this.parent.isLevelEnabled(level);
  }

  fatal(object: unknown, ...rest: unknown[]): void {
    if (this.enabled('fatal')) (this.logger().fatal as (...args: unknown[]) => void)(object, ...rest);
  }
  error(object: unknown, ...rest: unknown[]): void {
    if (this.enabled('error')) (this.logger().error as (...args: unknown[]) => void)(object, ...rest);
  }
  warn(object: unknown, ...rest: unknown[]): void {
    if (this.enabled('warn')) (this.logger().warn as (...args: unknown[]) => void)(object, ...rest);
  }
  info(object: unknown, ...rest: unknown[]): void {
    if (this.enabled('info')) (this.logger().info as (...args: unknown[]) => void)(object, ...rest);
  }
  debug(object: unknown, ...rest: unknown[]): void {
    if (this.enabled('debug')) (this.logger().debug as (...args: unknown[]) => void)(object, ...rest);
  }
  trace(object: unknown, ...rest: unknown[]): void {
    if (this.enabled('trace')) (this.logger().trace as (...args: unknown[]) => void)(object, ...rest);
  }
  silent(): void {}

  isLevelEnabled(level: string): boolean {
    return this.enabled(level);
  }

  child(bindings: Bindings, options?: object): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a RequestLogger, or pino's child at once where the route asks
 * for a level or serializers of its own.
 */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  // A logger that is not pino's (none at all, say) has its own children.
  if (options.level || options.serializers || typeof (logger as ParentLogger).isLevelEnabled !== 'function')
    return logger.child(bindings, options);
  return new RequestLogger(logger as ParentLogger, bindings);
}

/** The pino levels at which an `info` line is written. */
const INFO_WRITTEN = new Set(['trace', 'debug', 'info']);

/**
 * Fastify's per-request lines ("incoming request", "request completed", both at info), built only
 * when the configured level writes them: Fastify builds each line's fields (the response time
 * among them) before asking the logger, for every request, even where the line is then dropped.
 * An errored request's line (at error) is logged at every level, as Fastify's own controller does.
 */
export class RequestLines extends LogController {
  private readonly infoWritten: boolean;
  constructor(level: string) {
    super();
    this.infoWritten = INFO_WRITTEN.has(level);
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>) {
    if (this.infoWritten) super.incomingRequest(request, reply, metadata);
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ) {
    if (error || this.infoWritten) super.requestCompleted(error, request, reply, metadata);
  }
}
