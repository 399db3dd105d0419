import { parseArgs, type ParseArgsOptionsConfig } from "node:util";

/** The flags `options` declares, as parseArgs reads them. */
type Flags<Options extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: Options }>>["values"];

/**
 * What the command-line tools share: `fail` prints a message and exits with the tool's failure
 * code; `flags` reads `Deno.args` (or `args`, what follows a command's name) as `options` declares them: `--help` prints the usage and exits
 * 0, and an unknown flag or a flag missing its value prints the reason and the usage instead of a
 * stack trace.
 * (Typed as an interface so that TypeScript narrows after `cli.fail(...)`, which never returns.)
 */
export interface CommandLine {
  fail(message: string): never;
  flags<Options extends ParseArgsOptionsConfig>(options: Options, args?: string[]): Flags<Options>;
}

/**
 * @example
 * const cli: CommandLine = commandLine("usage: sign-onboarding --email <address>", 1);
 * const values = cli.flags({ email: { type: "string" } });
 * if (!values.email) cli.fail("--email is required");
 */
export function commandLine(usage: string, failureCode: number): CommandLine {
  function fail(message: string): never {
    console.error(message);
    Deno.exit(failureCode);
  }
  return {
    fail,
    flags(options, args = Deno.args) {
      if (args.includes("--help")) {
        console.log(usage);
        Deno.exit(0);
      }
      try {
        return parseArgs({ args, options }).values;
      } catch (error) {
        return fail(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
      }
    },
  };
}
