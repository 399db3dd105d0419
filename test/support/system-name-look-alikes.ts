import { createRequire } from "node:module";

/**
 * Writes supabase/schemas/04_system_name_look_alikes.sql: the two functions that read a system
 * name's letters of one script as the look-alikes Unicode's confusables.txt gives them in another
 * (cadence.system_name_look_alikes for the name in small letters, cadence.system_name_capital_look_alikes
 * for it in capitals), which cadence.system_name_keys applies.
 * The data is the npm package unhomoglyph's copy of confusables.txt; scripts are Node's
 * `\p{Script=…}` (Unicode 17 on Node 20). test/license/system-name-look-alikes.test.ts checks the
 * file is this output, and rewrites it with `-u`.
 *
 * The rule, for a text already in NFKD and in one case (the key's):
 * - a source is a code point of a script (not Common, Inherited or unassigned) that can stand in
 *   such a text (NFKD and that case leave it as it is) and that confusables.txt maps to a prototype
 *   written in Latin, Greek or Cyrillic, or in common characters only (digits, punctuation), none
 *   of it in the source's own script: a cross-script look-alike. A look-alike within one script
 *   (`m` and `rn`, `l` and `I`) or from a common character (`1`, `0`) is no source;
 * - it is replaced by its prototype, or, when the prototype is not in the key's case, by the first
 *   letter of the prototype's script that confusables.txt gives the same prototype and that is
 *   (Cyrillic `І` in capitals is Latin `I`, not the class's prototype `l`);
 * - only where the text also holds a letter of Latin, Greek or Cyrillic other than the source's own
 *   script: a Cyrillic `о` in a Latin name is read as `o`, a name all in Cyrillic stays as it is.
 */

const require = createRequire(import.meta.url);
/** confusables.txt as unhomoglyph ships it: each source code point to its prototype. */
const confusables: Record<string, string> = require("unhomoglyph/data.json");
export const UNHOMOGLYPH_VERSION: string = require("unhomoglyph/package.json").version;
/** The confusables.txt unhomoglyph 1.0.6 carries (its CHANGELOG: "Update mapping data to version 13.0.0"). */
export const CONFUSABLES_UNICODE_VERSION = "13.0.0";

/** The scripts whose letters the look-alikes are read as, in the order the functions apply them. */
const TARGETS = ["Latin", "Greek", "Cyrillic"] as const;
type Target = (typeof TARGETS)[number];
/** The order the functions replace each source script's letters in: other scripts first, whose look-alikes may be Greek or Cyrillic letters that are look-alikes in turn. */
const STEPS = ["other", "Latin", "Greek", "Cyrillic"] as const;
const scriptTest = (script: string) => new RegExp(`^\\p{Script=${script}}$`, "u");
const inScript = Object.fromEntries(TARGETS.map((script) => [script, scriptTest(script)])) as Record<Target, RegExp>;
const noScript = /^[\p{Script=Common}\p{Script=Inherited}\p{Script=Unknown}]$/u;

/** Latin, Greek or Cyrillic for a character of those, "other" for one of another script, undefined for common, inherited or unassigned. */
function scriptOf(character: string): Target | "other" | undefined {
  if (noScript.test(character)) return undefined;
  return TARGETS.find((script) => inScript[script].test(character)) ?? "other";
}

/** The scripts of a text's characters, common and inherited ones left out. */
const scriptsOf = (text: string) => new Set([...text].map(scriptOf).filter((script) => script !== undefined));

type Case = "small" | "capitals";
/** What cadence.system_name_keys gives the helper, for its key in small letters or in capitals: NFKD, then the case, then NFKD. */
const inCase = (text: string, letters: Case) =>
  (letters === "small" ? text.normalize("NFKD").toUpperCase().toLowerCase() : text.normalize("NFKD").toUpperCase()).normalize("NFKD");

/** Each prototype's members: every code point confusables.txt maps to it, and the prototype itself. */
function classes(): Map<string, string[]> {
  const members = new Map<string, string[]>();
  for (const [source, prototype] of Object.entries(confusables)) {
    members.set(prototype, [...(members.get(prototype) ?? [prototype]), source]);
  }
  for (const list of members.values()) list.sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)! || a.length - b.length);
  return members;
}

/** One key's table: each source, its replacement, and the script whose presence elsewhere in the name lets it apply. */
export function lookAlikes(letters: Case): Array<{ source: string; replacement: string; script: Target | "other" }> {
  const members = classes();
  const rows: Array<{ source: string; replacement: string; script: Target | "other" }> = [];
  for (let point = 0; point <= 0x10ffff; point++) {
    if (point >= 0xd800 && point <= 0xdfff) continue;
    const source = String.fromCodePoint(point);
    const prototype = confusables[source];
    const script = scriptOf(source);
    if (prototype === undefined || script === undefined || inCase(source, letters) !== source) continue;
    const written = scriptsOf(prototype.normalize("NFKD"));
    if (written.has(script) || written.has("other") || written.size > 1) continue;
    const stays = (text: string) => inCase(text, letters) === text && [...scriptsOf(text)].join() === [...written].join();
    const replacement = [prototype.normalize("NFKD"), ...(members.get(prototype) ?? []).map((member) => member.normalize("NFKD"))]
      .find(stays) ?? inCase(prototype, letters);
    rows.push({ source, replacement, script });
  }
  // The functions replace each source script's letters in turn, in STEPS' order: a replacement may
  // hold a letter a later step replaces (Canadian syllabics' `ᒥ` is Greek `γ`, which the Greek step
  // reads as `y` where the name holds Latin), never one of its own step or an earlier one.
  const step = new Map(rows.map((row) => [row.source, STEPS.indexOf(row.script)]));
  const looping = rows.filter((row) => [...row.replacement].some((character) => (step.get(character) ?? Infinity) <= STEPS.indexOf(row.script)));
  if (looping.length > 0) throw new Error(`replacements that hold a letter their step or an earlier one replaces: ${looping.map((row) => row.source).join(" ")}`);
  return rows;
}

/** A Postgres regular expression bracket expression of these code points, as ranges of \u/\U escapes. */
function bracket(points: number[]): string {
  const escape = (point: number) => (point > 0xffff ? `\\U${point.toString(16).padStart(8, "0")}` : `\\u${point.toString(16).padStart(4, "0")}`);
  const sorted = [...new Set(points)].sort((a, b) => a - b);
  let out = "";
  for (let i = 0; i < sorted.length; i++) {
    let end = i;
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end] + 1) end++;
    out += end === i ? escape(sorted[i]) : end === i + 1 ? escape(sorted[i]) + escape(sorted[end]) : `${escape(sorted[i])}-${escape(sorted[end])}`;
    i = end;
  }
  return `[${out}]`;
}

/** A regular expression literal, split before an escape into lines of about 100 characters (adjacent literals are one string). */
function regexLiteral(pattern: string, indent: string): string {
  const lines: string[] = [];
  let rest = pattern;
  while (rest.length > 0) {
    let cut = Math.min(rest.length, 96);
    while (cut < rest.length && rest[cut] !== "\\") cut++;
    lines.push(`'${rest.slice(0, cut)}'`);
    rest = rest.slice(cut);
  }
  return lines.join(`\n${indent}`);
}

/** A Unicode-escaped string literal (U&'...'): ASCII letters, digits and spaces as they are, everything else as \\XXXX or \\+XXXXXX, in lines of about 100 characters (adjacent literals are one string). */
function unicodeLiteral(text: string, indent = ""): string {
  const lines = [""];
  for (const character of text) {
    const point = character.codePointAt(0)!;
    const escaped = /^[A-Za-z0-9 ]$/.test(character) ? character : point > 0xffff ? `\\+${point.toString(16).padStart(6, "0")}` : `\\${point.toString(16).padStart(4, "0")}`;
    if (lines[lines.length - 1].length + escaped.length > 96) lines.push("");
    lines[lines.length - 1] += escaped;
  }
  return `U&'${lines.join(`'\n${indent}'`)}'`;
}

/** Every code point of a script, for the presence tests. */
function scriptPoints(script: Target): number[] {
  const points: number[] = [];
  for (let point = 0; point <= 0x10ffff; point++) {
    if (point >= 0xd800 && point <= 0xdfff) continue;
    if (inScript[script].test(String.fromCodePoint(point))) points.push(point);
  }
  return points;
}

/** The replacements of one source script: single code points by translate, longer prototypes by replace. */
function replacing(rows: Array<{ source: string; replacement: string }>, text: string, indent: string): string {
  const single = rows.filter((row) => [...row.replacement].length === 1);
  const longer = rows.filter((row) => [...row.replacement].length !== 1);
  // replace(replace(text, a, b), c, d): the openings in lines of about 100 characters, then one pair a line.
  const openings = longer.map(() => "pg_catalog.replace(").join("").match(/(?:pg_catalog\.replace\(){1,5}/g) ?? [];
  const pairs = longer.map((row) => `, ${unicodeLiteral(row.source)}, ${unicodeLiteral(row.replacement)})`);
  const expression = longer.length === 0 ? text : [...openings, text, ...pairs].join(`\n${indent}  `);
  if (single.length === 0) return expression;
  const from = unicodeLiteral(single.map((row) => row.source).join(""), `${indent}  `);
  const to = unicodeLiteral(single.map((row) => row.replacement).join(""), `${indent}  `);
  return `pg_catalog.translate(\n${indent}  ${expression},\n${indent}  ${from},\n${indent}  ${to})`;
}

function lookAlikeFunction(name: string, parameter: string, letters: Case, presence: Record<Target, string>): string {
  const rows = lookAlikes(letters);
  const bySource = (script: Target | "other") => rows.filter((row) => row.script === script);
  const others = (script: Target | "other") => TARGETS.filter((target) => target !== script).map((target) => `v_${target.toLowerCase()}`).join(" or ");
  const steps = STEPS.map((script) =>
    `  if ${others(script)} then\n    v_text := ${replacing(bySource(script), "v_text", "      ")};\n  end if;`);
  const sources = bracket(rows.map((row) => row.source.codePointAt(0)!));
  return `CREATE FUNCTION cadence.${name}(${parameter} text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO ''
    AS $$
declare
  v_text text := ${parameter};
  v_latin boolean;
  v_greek boolean;
  v_cyrillic boolean;
begin
  -- No letter that looks like one of another script: the text as it is (almost every name).
  if ${parameter} !~ ${regexLiteral(sources, "       ")} then
    return ${parameter};
  end if;
  v_latin := ${parameter} ~ ${presence.Latin};
  v_greek := ${parameter} ~ ${presence.Greek};
  v_cyrillic := ${parameter} ~ ${presence.Cyrillic};
  -- Each source script's letters, where the text holds a letter of another of the three: other
  -- scripts first, then Latin, Greek, Cyrillic (a replacement may be a later one's letter).
${steps.join("\n")}
  return v_text;
end
$$;
`;
}

/**
 * The generated schema file, as supabase/schemas/04_system_name_look_alikes.sql holds it.
 *
 * @example
 * writeFileSync("supabase/schemas/04_system_name_look_alikes.sql", lookAlikeSql());
 */
export function lookAlikeSql(): string {
  const presence = Object.fromEntries(TARGETS.map((script) => [script, regexLiteral(bracket(scriptPoints(script)), "    ")])) as Record<Target, string>;
  const small = lookAlikes("small");
  const capitals = lookAlikes("capitals");
  return `-- Generated by test/support/system-name-look-alikes.ts: do not edit. It reads Unicode's confusables.txt
-- ${CONFUSABLES_UNICODE_VERSION} as the npm package unhomoglyph ${UNHOMOGLYPH_VERSION} carries it, and Node's Script property (Unicode
-- ${process.versions.unicode}); test/license/system-name-look-alikes.test.ts checks this file is its output (\`-u\` rewrites it).
--
-- PL/pgSQL, not SQL: a session plans each statement once, where a SQL function called from another
-- function or an index expression was parsed and planned again at each call (2.5 ms a key, measured).
--
-- A system name's letters of one script that look like letters of another, read as those: the half
-- of "one name per look" (cadence.system_name_keys, 04_system_names.sql) that Unicode's NFKC and case
-- folding do not give. The rule (UTS #39's mixed-script confusables, across scripts only):
-- - a letter of a script that confusables.txt maps to a prototype in Latin, Greek or Cyrillic, or in
--   common characters (digits, punctuation), none of it in the letter's own script, is replaced by
--   that prototype (or by the prototype's look-alike of its script in the key's case: Cyrillic \`І\`
--   in capitals is Latin \`I\`, not the prototype \`l\`);
-- - only where the name also holds a letter of Latin, Greek or Cyrillic other than its own script:
--   a Cyrillic \`о\` in \`Lobby\` is \`o\`, a name all in Cyrillic stays as it is;
-- - look-alikes within one script (\`rn\` and \`m\`, \`l\` and \`I\`) and common characters (\`1\` and
--   \`l\`, \`0\` and \`O\`) are never replaced: honest fleets use them.
-- ${small.length} letters in small letters, ${capitals.length} in capitals (of confusables.txt's ${Object.keys(confusables).length} lines, the rest
-- are within one script, to another script, or cannot stand in a text in NFKD and the key's case).

${lookAlikeFunction("system_name_look_alikes", "p_small", "small", presence)}
COMMENT ON FUNCTION cadence.system_name_look_alikes(p_small text) IS 'A system name in NFKD and small letters (as cadence.system_name_keys makes its small_key), with each letter of one script that confusables.txt (Unicode ${CONFUSABLES_UNICODE_VERSION}) maps into Latin, Greek, Cyrillic or common characters replaced by that look-alike, where the name also holds a letter of Latin, Greek or Cyrillic other than its own. Generated.';

${lookAlikeFunction("system_name_capital_look_alikes", "p_capitals", "capitals", presence)}
COMMENT ON FUNCTION cadence.system_name_capital_look_alikes(p_capitals text) IS 'The same as cadence.system_name_look_alikes for a system name in NFKD and capitals (as cadence.system_name_keys makes its capitals_key): Cyrillic В, Н, Т are Latin B, H, T only as capitals. Generated.';
`;
}
