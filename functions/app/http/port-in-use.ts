/** A listening port another process holds: one line for the operator, naming the variable that moves it. */
export class PortInUseError extends Error {
  constructor(port: number, variable: string) {
    super(`port ${port} is already in use: stop what listens there, or set ${variable} to a free port (0 picks one)`);
  }
}

/** Whether `error` is an address already in use: node:net's EADDRINUSE, or Deno's AddrInUse. */
export function isAddressInUse(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  return code === "EADDRINUSE" || name === "AddrInUse";
}

/**
 * Runs `listen`; an address already in use becomes a PortInUseError whose message is the whole
 * story, so the entry prints it without a stack trace.
 *
 * @example
 * const server = await listenOn(config.PORT, "PORT", () => serveSelfHosted(options));
 */
export async function listenOn<T>(port: number, variable: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    if (!isAddressInUse(error)) throw error;
    throw new PortInUseError(port, variable);
  }
}

/**
 * Listens on `preferred`, or on a free port when another process holds it: for a port the operator
 * did not choose, whose default two servers on one machine (two checkouts, a test run beside
 * `npm start`) would otherwise fight over. `onMoved` is told the port taken instead.
 *
 * @example
 * const sql = await listenPreferring(54322, (port) => openSqlPort({ port, graceMs, log }), (port) => log("warn", "moved", { port }));
 */
export async function listenPreferring<T extends { port: number }>(
  preferred: number,
  listen: (port: number) => Promise<T>,
  onMoved: (port: number) => void,
): Promise<T> {
  try {
    return await listen(preferred);
  } catch (error) {
    if (!isAddressInUse(error)) throw error;
  }
  const listener = await listen(0);
  onMoved(listener.port);
  return listener;
}
