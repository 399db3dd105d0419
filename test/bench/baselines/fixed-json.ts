/// <reference lib="deno.ns" />
// Baseline (1), the runtime's limit: a bare Deno.serve answering one fixed JSON body, read from the
// file named by the first argument (the runner writes the payload it compares, so sizes match).
// Listens on PORT (a free port when unset) and announces it as the entry does: {"event":"listening","port":N}.
const body = await Deno.readFile(Deno.args[0]);
const headers = { "content-type": "application/json" };

Deno.serve(
  { port: Number(Deno.env.get("PORT") ?? 0), hostname: "127.0.0.1", onListen: ({ port }) => console.log(JSON.stringify({ event: "listening", port })) },
  () => new Response(body, { headers }),
);
