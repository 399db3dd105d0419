/// <reference lib="deno.ns" />
// `npx deno run -A test/simulate/seat-clocks-model.ts [starts=200] [polls=20] [ratio=0.25] [days=starts/4]`:
// the tails the corpus's three seeds cannot show (issue 60). A model of the seat checks' evidence in
// memory, as the SQL judges it (cadence.settle_polls, cadence.seat_check_pass): a key's calls in
// bursts (5 s), each with its network's tag or none, starts left out; each poll uneven or not, and
// alternating or not with its swing and drift; a window of two hours, judged every minute once a
// poll has had two minutes to settle. It plays each in-step copy of the corpus from `starts` seeds
// (4 hours, the copy an hour in) and prints the time to flag by two_clocks alone and by either rule;
// then each honest pattern that alternates across polls, and the copy on steady timers half a period
// apart (one such kiosk on a steady timer), for `days` simulated days, with how often it was flagged
// and its lowest drift/swing where `polls` polls alternated. One device per seed, no
// instances and no database: the corpus (seat-corpus.ts) plays those.
import { pollNetwork } from "../../functions/app/kiosk/poll-network.ts";
import { type PatternCall, patternTimeline, SEAT_PATTERNS } from "./seat-patterns.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const [starts, polls, ratio] = [Number(Deno.args[0] ?? 200), Number(Deno.args[1] ?? 20), Number(Deno.args[2] ?? 0.25)];
const days = Number(Deno.args[3] ?? Math.max(1, Math.floor(starts / 4)));

/** When key 0 of `calls` is first flagged by two_clocks and by either rule (ms into the run), and its lowest drift/swing. */
function judge(calls: PatternCall[], runMs: number) {
  const bursts: Array<{ first: number; last: number; network: number | null; start: boolean }> = [];
  for (const call of calls.filter((c) => c.key === 0)) {
    const network = pollNetwork(call.ip);
    const start = call.route === "license" || call.route === "system-name";
    const last = bursts.at(-1);
    if (last && call.at - last.last <= 5_000) {
      last.last = call.at;
      if (last.network !== network) last.network = null;
      last.start ||= start;
    } else {
      bursts.push({ first: call.at, last: call.at, network, start });
    }
  }
  const settled = bursts.filter((burst) => !burst.start);
  const gap = (i: number) => (settled[i].first - settled[i - 1].first) / 1000;
  const net = (i: number) => settled[i].network;
  const judged = settled.map((poll, i) => {
    const alternating = i >= 4 && net(i) !== null && net(i - 1) !== null && net(i) !== net(i - 1) && net(i - 2) === net(i) && net(i - 4) === net(i) &&
      net(i - 3) === net(i - 1);
    return {
      at: poll.last + 2 * MINUTE,
      uneven: i >= 3 && gap(i - 1) < 0.3 * Math.min(gap(i - 2), gap(i)),
      alternating,
      swing: alternating ? (gap(i) - gap(i - 1)) ** 2 : 0,
      drift: alternating ? (gap(i) + gap(i - 1) - gap(i - 2) - gap(i - 3)) ** 2 : 0,
    };
  });
  let clocks: number | null = null, either: number | null = null, lowest = Infinity;
  let from = 0, to = 0, n = 0, uneven = 0, alternating = 0, swing = 0, drift = 0;
  for (let at = MINUTE; at <= runMs; at += MINUTE) {
    for (; to < judged.length && judged[to].at < at; to++) {
      const j = judged[to];
      n += 1, uneven += Number(j.uneven), alternating += Number(j.alternating), swing += j.swing, drift += j.drift;
    }
    for (; from < to && judged[from].at < at - 2 * HOUR; from++) {
      const j = judged[from];
      n -= 1, uneven -= Number(j.uneven), alternating -= Number(j.alternating), swing -= j.swing, drift -= j.drift;
    }
    const twoClocks = alternating >= polls && drift <= ratio * swing && swing >= alternating;
    if (alternating >= polls && swing > 0) lowest = Math.min(lowest, drift / swing);
    if (twoClocks) clocks ??= at;
    if (twoClocks || (uneven >= 6 && uneven >= 0.05 * n)) either ??= at;
  }
  return { clocks, either, lowest };
}

const quantile = (values: number[], q: number) => values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const summary = (minutes: number[]) =>
  `median ${quantile(minutes, 0.5).toFixed(0)}, 90th ${quantile(minutes, 0.9).toFixed(0)}, 99th ${quantile(minutes, 0.99).toFixed(0)}, max ${
    Math.max(...minutes).toFixed(0)
  }; within 30 min ${minutes.filter((m) => m <= 30).length}/${minutes.length}`;

console.log(`| in-step copy (${starts} starts) | two_clocks alone, minutes from the copy's start | either rule |\n|---|---|---|`);
SEAT_PATTERNS.forEach((pattern, n) => {
  if (!pattern.name.startsWith("copy in step")) return;
  const clocks: number[] = [];
  const either: number[] = [];
  for (let seed = 1; seed <= starts; seed++) {
    const calls = patternTimeline(pattern, n, 4 * HOUR, 1_000 + seed);
    const copyAt = calls.find((call) => call.device === 1)!.at;
    const found = judge(calls, 4 * HOUR);
    clocks.push(found.clocks === null ? Infinity : (found.clocks - copyAt) / MINUTE);
    either.push(found.either === null ? Infinity : (found.either - copyAt) / MINUTE);
  }
  console.log(`| ${pattern.name} | ${summary(clocks)} | ${summary(either)} |`);
});
console.log(`\n| alternating across polls, one clock (${days} days) | days flagged | lowest drift/swing over ${polls} alternating polls |\n|---|---|---|`);
SEAT_PATTERNS.forEach((pattern, n) => {
  // The honest kiosks on two WAN links round-robin, and the steady timers half a period apart that look like one on a steady timer.
  if (!pattern.name.includes("round-robin across polls") && !pattern.name.includes("half a period apart")) return;
  let flagged = 0, lowest = Infinity;
  for (let seed = 1; seed <= days; seed++) {
    const found = judge(patternTimeline(pattern, n, 24 * HOUR, 1_000 + seed), 24 * HOUR);
    if (found.either !== null) flagged += 1;
    lowest = Math.min(lowest, found.lowest);
  }
  console.log(`| ${pattern.name} | ${flagged} | ${lowest.toFixed(2)} |`);
});
