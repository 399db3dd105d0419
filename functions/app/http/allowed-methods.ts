import type { App } from "./route.ts";

/**
 * The methods each declared path answers, read from the OpenAPI registry once all routes are in:
 * a known path asked with another method gets 405 and an Allow header instead of a bare 404.
 *
 * @example
 * const allowed = allowedMethods(app);
 * allowed("/api/v2/license"); // ["POST"]
 */
export function allowedMethods(app: App): (path: string) => string[] {
  const routes = app.openAPIRegistry.definitions.flatMap((definition) =>
    definition.type === "route"
      ? [{
        method: definition.route.method.toUpperCase(),
        pattern: new RegExp(`^${definition.route.path.replace(/\{\w+\}/g, "[^/]+")}$`),
      }]
      : []
  );
  return function allowed(path) {
    const methods = routes.filter((route) => route.pattern.test(path)).map((route) => route.method);
    return methods.includes("GET") ? [...methods, "HEAD"] : methods;
  };
}
