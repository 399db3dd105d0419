/// <reference lib="deno.ns" />
// Prints how long importing what the edge function loads takes, in a fresh process: the app and
// the runtime that assembles it (the entry adds only Deno.serve). Run by the benchmark.
const started = performance.now();
await import("../../functions/app/app.ts");
await import("../../functions/app/runtime.ts");
console.log(JSON.stringify({ importMs: performance.now() - started }));
