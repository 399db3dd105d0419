import type { App } from "./route.ts";

/** A credential sent as a header, described for integrators: an OpenAPI `apiKey` security scheme. */
export interface HeaderScheme {
  name: string;
  description: string;
}

/** The security requirement of a route that takes no credential (the body or the query may carry a key, as its parameters say). */
export const noCredential: Record<string, string[]>[] = [];

/**
 * Registers a feature's credential headers as security schemes of the document,
 * and answers a function giving the requirement of the schemes named, all together (none: no
 * credential at all). Every credential the contract names is a header that is not a secret on its own,
 * so each is an `apiKey` scheme of its own, and a route asks for them together; the exact answers
 * stay those of the contract.
 *
 * @example
 * const together = headerSchemes(app, { licenseKey: { name: "x-license-key", description } });
 * createRoute({ ..., security: [together(), together("licenseKey")] });
 */
export function headerSchemes<Name extends string>(app: App, schemes: Record<Name, HeaderScheme>) {
  for (const [scheme, { name, description }] of Object.entries<HeaderScheme>(schemes)) {
    app.openAPIRegistry.registerComponent("securitySchemes", scheme, { type: "apiKey", in: "header", name, description });
  }
  return (...names: Name[]): Record<string, string[]> => Object.fromEntries(names.map((name) => [name, []]));
}
