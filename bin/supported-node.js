// The Node.js lines the service supports, checked before anything else loads, so an older Node
// gets one clear sentence instead of a failure somewhere deep in a dependency. The floor is the
// first 22 release that runs TypeScript without a flag: the CLI runs the .ts sources with plain node.
export const MINIMUM_NODE = [22, 18];
export const SUPPORTED_LINES = '22 (22.18 or newer), 24 and 26';

export function assertSupportedNode(
  version = process.versions.node,
  typescript = process.features.typescript,
) {
  const [major, minor] = version.split('.').map(Number);
  const [needMajor, needMinor] = MINIMUM_NODE;
  if (!(major > needMajor || (major === needMajor && minor >= needMinor))) {
    refuse(
      `agent-commons needs Node.js ${needMajor}.${needMinor} or newer (supported lines: ${SUPPORTED_LINES}); ` +
        `this is Node.js ${version}. Install a supported Node.js and run the command again.`,
    );
  }
  if (!typescript) {
    refuse(
      'agent-commons runs its TypeScript sources through Node.js type stripping, which this process has ' +
        'switched off (--no-experimental-strip-types, perhaps in NODE_OPTIONS). Run it without that flag.',
    );
  }
}

function refuse(sentence) {
  process.stderr.write(`${sentence}\n`);
  process.exit(1);
}
