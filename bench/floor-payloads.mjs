// The answers the calibration servers send: the size and headers of setup-check's and of the
// anonymous events list's.
export const headers = {
  'ratelimit-policy': '"token";q=1200;w=60',
  ratelimit: '"token";r=1199;t=45',
  'ratelimit-limit': '1200',
  'ratelimit-remaining': '1199',
  'ratelimit-reset': '45',
  'x-request-id': '6f1c2f64-5b0e-4d7e-9a51-0d7c9a1b2c3d',
  'x-content-type-options': 'nosniff',
};
// Setup-check's answer (the bearer read) as the bench's token gets it, 773 bytes serialized.
export const setupCheck = {
  ready: true,
  checks: {
    token: 'valid',
    token_prefix: 'agt_VM2xmH',
    scopes: ['read:public'],
    scopes_suspended_by_tier: [],
    member_id: 'mem_52e9e14546a7f5fc',
    member_name: 'Bench',
    tier: 'core',
    sandbox: false,
    payments: {
      accepting: false,
      reason: 'X402_PAY_TO is not set: this service takes no payment.',
      protocol: 'x402',
      network: 'eip155:84532',
      asset: 'default USD stablecoin of the network',
      amounts_usd: null,
      minimum_usd: 1,
      maximum_usd: 1000,
    },
  },
  missing: [],
  next_actions: [],
  mcp: {
    url: 'http://127.0.0.1:0/api/mcp',
    transport: 'streamable-http',
    headers: { Authorization: 'Bearer <your agt_ token>' },
    config_snippet: {
      mcpServers: {
        'agent-commons': {
          type: 'http',
          url: 'http://127.0.0.1:0/api/mcp',
          headers: { Authorization: `Bearer \${AGENT_COMMONS_TOKEN}` },
        },
      },
    },
  },
};
// The events list's answer also says Vary: it is gzipped for clients that accept gzip.
export const upcomingHeaders = { ...headers, vary: 'accept-encoding' };
// The size of the events list's answer: twenty upcoming events, already serialized.
const start = Date.parse('2026-12-01T18:00:00Z');
export const upcoming = JSON.stringify({
  ok: true,
  events: Array.from({ length: 20 }, (_, i) => ({
    platform_url: `https://lu.ma/bench-${i}`,
    title: `Bench event ${i}`,
    start: new Date(start + i * 86_400_000).toISOString(),
    end: new Date(start + i * 86_400_000 + 7_200_000).toISOString(),
    location: 'Main hall',
    cover_url: null,
    description: 'An event in the benchmark’s cache.',
  })),
  count: 20,
  age_min: 0,
  stale: false,
});
