#!/usr/bin/env node
// Generates crates/core/src/pdf/cjk.bin: for the four Adobe CJK character collections
// (Adobe-Japan1, Adobe-GB1, Adobe-CNS1, Adobe-Korea1), the Unicode text of every CID, from
// Adobe's CID → UCS-2 maps (Adobe-*-UCS2). The PDF text extractor uses them for CID fonts
// that name one of these collections in /CIDSystemInfo and have no /ToUnicode (pdf.js and
// poppler do the same). crates/core/src/pdf/cjk.rs reads the file.
//
// The source is the `cmaps` folder of the npm package pdfjs-dist at a pinned version: Adobe's
// cmap-resources (BSD-3-Clause, Copyright 1990-2009 Adobe Systems Incorporated), packed by
// pdf.js into its binary .bcmap form, which this script decodes (the format of pdf.js's
// BinaryCMapReader). Each map is checked against a second source: the same package's
// Uni*-UCS2-H CMap of the collection (Unicode → CID) must come back through it.
//
// The output format (then compressed with zlib, level 9):
//   "FSGCJK1\n", a byte: the number of collections, then for each:
//   a byte: the length of its ordering ("Japan1"), the ordering, varint: CIDs (highest + 1),
//   varint: records; a record is varint: CIDs skipped since the last record, varint: run
//   length n; n > 0: n CIDs whose code points count up, the first given as a zigzag varint
//   delta from the code point after the previous run's last; n = 0: one CID whose text is
//   several code points: varint count, then each as a varint.
//
// Usage (Node 20):
//   node scripts/pdf-cjk.mjs [SRC]          generate from SRC/pdfjs-dist/package (as
//                                            `node scripts/pdf-tables.mjs --fetch` leaves it),
//                                            else from node_modules/pdfjs-dist
//   node scripts/pdf-cjk.mjs --check [SRC]  exit 1 when cjk.bin differs from what SRC generates
// The output depends only on the source, so reruns are byte-identical.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";

const PDFJS = "5.6.205";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "crates", "core", "src", "pdf", "cjk.bin");
// Ordering, its CID → UCS-2 map, and the Unicode CMap that checks it.
const COLLECTIONS = [
  ["Japan1", "Adobe-Japan1-UCS2", "UniJIS-UCS2-H"],
  ["GB1", "Adobe-GB1-UCS2", "UniGB-UCS2-H"],
  ["CNS1", "Adobe-CNS1-UCS2", "UniCNS-UCS2-H"],
  ["Korea1", "Adobe-Korea1-UCS2", "UniKS-UCS2-H"],
];

function fail(message) {
  console.error(`pdf-cjk: ${message}`);
  process.exit(1);
}

function check(condition, message) {
  if (!condition) fail(message);
}

function cmapsDir(src) {
  const fetched = join(src, "pdfjs-dist", "package");
  const base = existsSync(join(fetched, "package.json")) ? fetched : join(ROOT, "node_modules", "pdfjs-dist");
  check(existsSync(join(base, "package.json")), `no pdfjs-dist at ${fetched} or in node_modules; run scripts/pdf-tables.mjs --fetch or npm ci`);
  const { version } = JSON.parse(readFileSync(join(base, "package.json"), "utf8"));
  check(version === PDFJS, `pdfjs-dist is ${version}, the script is pinned to ${PDFJS}`);
  return join(base, "cmaps");
}

// ---------------------------------------------------------------------------------------
// pdf.js's binary CMap format

/**
 * Decodes a .bcmap: calls `cid(code, cid)` for every code → CID mapping and
 * `text(code, utf16be bytes)` for every code → text mapping. Returns the `usecmap` name.
 */
function readBcmap(data, { cid = () => {}, text = () => {} }) {
  let pos = 0;
  const byte = () => {
    check(pos < data.length, "unexpected end of a bcmap");
    return data[pos++];
  };
  const number = () => {
    let n = 0;
    let b;
    do {
      b = byte();
      n = n * 128 + (b & 0x7f);
    } while (b & 0x80);
    return n;
  };
  const signed = () => {
    const n = number();
    return n % 2 ? -Math.floor(n / 2) - 1 : n / 2;
  };
  // Numbers of size + 1 bytes, big-endian, as BigInt.
  const hex = (size) => {
    let n = 0n;
    for (let i = 0; i <= size; i++) n = (n << 8n) | BigInt(byte());
    return n;
  };
  const hexNumber = () => {
    let n = 0n;
    let b;
    do {
      b = byte();
      n = (n << 7n) | BigInt(b & 0x7f);
    } while (b & 0x80);
    return n;
  };
  const hexSigned = () => {
    const n = hexNumber();
    return n & 1n ? -(n >> 1n) - 1n : n >> 1n;
  };
  const string = () => {
    const len = number();
    let s = "";
    for (let i = 0; i < len; i++) s += String.fromCharCode(number());
    return s;
  };
  const bytesOf = (n, size) => {
    const out = [];
    for (let i = size; i >= 0; i--) out.push(Number((n >> BigInt(8 * i)) & 0xffn));
    return out;
  };
  byte(); // header: writing mode
  let useCMap = null;
  while (pos < data.length) {
    const b = byte();
    const type = b >> 5;
    if (type === 7) {
      if ((b & 0x1f) === 0) string();
      else if ((b & 0x1f) === 1) useCMap = string();
      continue;
    }
    const sequence = (b & 0x10) !== 0;
    const size = b & 15;
    const count = number();
    switch (type) {
      case 0: // codespacerange
      case 1: {
        // notdefrange (type 1 has a CID after each range)
        let start = hex(size);
        let end = start + hexNumber();
        if (type === 1) number();
        for (let i = 1; i < count; i++) {
          start = end + 1n + hexNumber();
          end = start + hexNumber();
          if (type === 1) number();
        }
        break;
      }
      case 2: {
        // cidchar
        let code = hex(size);
        let c = number();
        cid(code, c);
        for (let i = 1; i < count; i++) {
          code += 1n;
          if (!sequence) code += hexNumber();
          c = signed() + c + 1;
          cid(code, c);
        }
        break;
      }
      case 3: {
        // cidrange
        let start = hex(size);
        let end = start + hexNumber();
        let c = number();
        for (let k = start; k <= end; k++) cid(k, c + Number(k - start));
        for (let i = 1; i < count; i++) {
          const prevEnd = end;
          start = sequence ? prevEnd + 1n : prevEnd + 1n + hexNumber();
          end = start + hexNumber();
          c = number();
          for (let k = start; k <= end; k++) cid(k, c + Number(k - start));
        }
        break;
      }
      case 4: {
        // bfchar: a 2-byte code, then text of size + 1 bytes
        let code = hex(1);
        let dst = hex(size);
        text(code, bytesOf(dst, size));
        for (let i = 1; i < count; i++) {
          code += 1n;
          if (!sequence) code += hexNumber();
          dst += 1n + hexSigned();
          text(code, bytesOf(dst, size));
        }
        break;
      }
      case 5: {
        // bfrange: 2-byte codes, text counting up from the first
        let start = hex(1);
        let end = start + hexNumber();
        let dst = hex(size);
        for (let k = start; k <= end; k++) text(k, bytesOf(dst + (k - start), size));
        for (let i = 1; i < count; i++) {
          start = sequence ? end + 1n : end + 1n + hexNumber();
          end = start + hexNumber();
          dst = hex(size);
          for (let k = start; k <= end; k++) text(k, bytesOf(dst + (k - start), size));
        }
        break;
      }
      default:
        fail(`unknown bcmap record type ${type}`);
    }
  }
  return useCMap;
}

function utf16be(bytes) {
  const units = [];
  for (let i = 0; i + 1 < bytes.length; i += 2) units.push((bytes[i] << 8) | bytes[i + 1]);
  return [...String.fromCharCode(...units)].map((c) => c.codePointAt(0));
}

// ---------------------------------------------------------------------------------------

function collection(dir, ordering, ucs2, unicodeCMap) {
  const texts = new Map(); // cid → [code points]
  const use = readBcmap(readFileSync(join(dir, `${ucs2}.bcmap`)), {
    text: (code, bytes) => texts.set(Number(code), utf16be(bytes)),
  });
  check(use === null, `${ucs2} uses another CMap (${use})`);
  check(texts.size > 10_000, `${ucs2}: only ${texts.size} CIDs`);
  check(texts.get(34)?.[0] === 0x41, `${ucs2}: CID 34 is not "A"`);
  // The second source: Unicode → CID through the collection's Unicode CMap, then back.
  const toCid = new Map();
  const load = (name) => {
    const parent = readBcmap(readFileSync(join(dir, `${name}.bcmap`)), { cid: (code, c) => toCid.has(code) || toCid.set(code, c) });
    if (parent) load(parent);
  };
  load(unicodeCMap);
  let same = 0;
  let seen = 0;
  for (const [code, c] of toCid) {
    const t = texts.get(c);
    if (!t) continue;
    seen++;
    if (t.length === 1 && t[0] === Number(code)) same++;
  }
  // Several code points share one CID (compatibility ideographs, full- and half-width
  // forms): those come back as another code point. Most must come back as themselves.
  check(seen > 5_000 && same / seen > 0.9, `${ucs2} and ${unicodeCMap} agree on ${same} of ${seen} code points`);
  return { ordering, texts, checked: `${same} of ${seen}` };
}

function varint(out, n) {
  check(Number.isInteger(n) && n >= 0, `bad varint ${n}`);
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
}

function zigzag(n) {
  return n < 0 ? -2 * n - 1 : 2 * n;
}

function encode(collections) {
  const out = [...Buffer.from("FSGCJK1\n", "latin1")];
  out.push(collections.length);
  for (const { ordering, texts } of collections) {
    out.push(ordering.length, ...Buffer.from(ordering, "latin1"));
    const cids = [...texts.keys()].sort((a, b) => a - b);
    varint(out, cids[cids.length - 1] + 1);
    const records = [];
    for (let i = 0; i < cids.length; ) {
      const t = texts.get(cids[i]);
      if (t.length !== 1) {
        records.push({ cid: cids[i], multi: t });
        i++;
        continue;
      }
      let j = i;
      while (j + 1 < cids.length && cids[j + 1] === cids[j] + 1 && texts.get(cids[j + 1]).length === 1 && texts.get(cids[j + 1])[0] === texts.get(cids[j])[0] + 1) j++;
      records.push({ cid: cids[i], run: j - i + 1, first: t[0] });
      i = j + 1;
    }
    varint(out, records.length);
    let next = 0; // the CID after the last record
    let after = 0; // the code point after the last run
    for (const r of records) {
      varint(out, r.cid - next);
      if (r.multi) {
        varint(out, 0);
        varint(out, r.multi.length);
        for (const cp of r.multi) varint(out, cp);
        next = r.cid + 1;
      } else {
        varint(out, r.run);
        varint(out, zigzag(r.first - after));
        next = r.cid + r.run;
        after = r.first + r.run;
      }
    }
  }
  return zlib.deflateSync(Buffer.from(out), { level: 9 });
}

const args = process.argv.slice(2);
const checkOnly = args.includes("--check");
const src = args.find((a) => !a.startsWith("--")) ?? "/tmp/pdf-tables-src";
const dir = cmapsDir(src);
const collections = COLLECTIONS.map(([ordering, ucs2, uni]) => collection(dir, ordering, ucs2, uni));
const bin = encode(collections);
if (checkOnly) {
  const same = existsSync(OUT) && Buffer.compare(readFileSync(OUT), bin) === 0;
  console.log(same ? "cjk.bin is up to date" : "cjk.bin differs from what the source generates");
  process.exit(same ? 0 : 1);
}
writeFileSync(OUT, bin);
console.log(`wrote ${OUT}: ${bin.length} bytes`);
for (const c of collections) console.log(`  Adobe-${c.ordering}: ${c.texts.size} CIDs with text; Unicode CMap round trip ${c.checked}`);
