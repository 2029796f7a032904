/** The version of the API every surface and discovery document names (OpenAPI `info.version`). */
export const API_VERSION = '2026-07-16';
