// The Node.js lines the service supports, checked before anything else loads, so an older Node
// gets one clear sentence instead of a failure somewhere deep in a dependency.
export const MINIMUM_NODE = [22, 13];
export const SUPPORTED_LINES = '22, 24 and 26';

export function assertSupportedNode(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  const [needMajor, needMinor] = MINIMUM_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return;
  process.stderr.write(
    `agent-commons needs Node.js ${needMajor}.${needMinor} or newer (supported lines: ${SUPPORTED_LINES}); ` +
      `this is Node.js ${version}. Install a supported Node.js and run the command again.\n`,
  );
  process.exit(1);
}
