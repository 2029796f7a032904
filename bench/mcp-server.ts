// The service as `agent-commons serve` builds it, with the SDK-transport variant of the MCP surface
// mounted beside ours at /api/mcp-sdk (bench/mcp-transports.ts loads one, then the other).
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { registerMcpSurface } from '../src/surfaces/mcp.ts';

const config = loadConfig(process.env, { seedDemo: false });
const deps = await createDeps(config);
const app = await buildApp(deps);
registerMcpSurface(app, deps, OPERATIONS, { transport: 'sdk', path: '/api/mcp-sdk' });
await app.listen({ port: config.port, host: config.host });
const address = app.server.address();
// PORT=0 (the bench's): the port listen(0) gave is printed for bench/support.ts to read.
process.stdout.write(
  `listening on http://${config.host}:${typeof address === 'object' && address ? address.port : config.port}\n`,
);
process.once('SIGTERM', async () => {
  await app.close();
  await deps.close();
  process.exit(0);
});
