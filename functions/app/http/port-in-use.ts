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
