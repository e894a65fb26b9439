//! Fonts as text sees them: how a string splits into codes, what text each code stands
//! for, and how far each code advances.
//!
//! Text comes from, in order: the font's `/ToUnicode` CMap; for simple fonts, the glyph
//! name its encoding gives the code (`/Differences` over a base encoding over the font's
//! built-in one) through the Adobe Glyph List, or a numeric name (`g65`, `c65`, `a65`) as
//! the code it spells; for composite fonts (see [`super::cidfont`]), the CID through its
//! Adobe collection's map, or the code itself when the CMap is a Unicode one (UCS-2,
//! UTF-16) or a legacy CJK encoding. A code none of these cover is unmapped: it shows as
//! U+FFFD and is counted.

use std::borrow::Cow;

use lopdf::{Dictionary, Document, Object};
use rustc_hash::FxHashMap;

use super::cidfont::{self, CidWidths};
use super::cjk::Collection;
use super::cmap::{CMap, CodeSpace};
use super::lexer::{Lexer, Token};
use super::tables::{self, StandardFont};
use super::{filters, resolve, resolve_dict, Budget};

/// A font, ready to decode strings.
#[derive(Debug)]
pub(crate) struct Font {
    /// How strings split into codes.
    pub(crate) space: CodeSpace,
    pub(super) text: Text,
    pub(super) widths: Widths,
    /// Codes to CIDs (composite fonts).
    pub(super) to_cid: ToCid,
    /// Glyph space to text space, horizontally (1/1000, or a Type 3 font's matrix).
    pub(crate) scale: f64,
    /// The height of an em in text space per unit of font size.
    pub(crate) em: f64,
    /// Writing mode 1 (a `-V` CMap): glyphs advance downwards.
    pub(crate) vertical: bool,
}

#[derive(Debug)]
pub(super) enum Text {
    /// One byte per code: the text of each.
    Simple(Box<[Option<Box<str>>]>),
    /// Composite fonts (and legacy double-byte text in a simple font): the ToUnicode map,
    /// what the embedded font program says of its glyphs, then the fallback.
    Composite { map: Box<CMap>, program: FxHashMap<u32, Box<str>>, fallback: Fallback },
}

#[derive(Debug)]
pub(super) enum Fallback {
    None,
    /// The code is UTF-16 (Uni…-UCS2 and -UTF16 CMaps).
    Utf16,
    /// The code's bytes are in a legacy CJK encoding.
    Legacy(&'static encoding_rs::Encoding),
    /// The code is a row and cell of a 94 × 94 CJK set (the `H`, `V`, `GB-H`, `KSC-H` CMaps):
    /// the legacy EUC encoding of the set, with the high bits set.
    SevenBit(&'static encoding_rs::Encoding),
    /// The CID's text in its Adobe collection.
    Collection(&'static Collection),
}

#[derive(Debug)]
pub(super) enum Widths {
    Simple(Box<[f32]>),
    /// Legacy double-byte text in a simple font: one-byte codes by the font's widths,
    /// two-byte ones a full em.
    Legacy(Box<[f32]>),
    Cid(CidWidths),
}

#[derive(Debug)]
pub(super) enum ToCid {
    Identity,
    Map(Box<CMap>),
    /// Not known (a predefined CMap other than Identity): every code takes the default width.
    Unknown,
}

/// The text of a code, or `None` when it cannot be mapped.
pub(crate) enum Glyph<'a> {
    Text(&'a str),
    Owned(String),
    Unmapped,
}

impl Font {
    /// The text of `code` (of `len` bytes).
    pub(crate) fn text(&self, code: u32, len: u8) -> Glyph<'_> {
        match &self.text {
            Text::Simple(table) => match table.get(code as usize) {
                Some(Some(t)) => Glyph::Text(t),
                _ => Glyph::Unmapped,
            },
            Text::Composite { map, program, fallback } => {
                match map.text_of(code) {
                    Some(Cow::Borrowed(t)) => return Glyph::Text(t),
                    Some(Cow::Owned(t)) => return Glyph::Owned(t),
                    None => {}
                }
                if let Some(t) = program.get(&code) {
                    return Glyph::Text(t);
                }
                match fallback {
                    Fallback::Utf16 => match char::from_u32(code) {
                        Some(c) if code > 0 => Glyph::Owned(c.to_string()),
                        _ => Glyph::Unmapped,
                    },
                    Fallback::Legacy(enc) => legacy_text(enc, code, len),
                    Fallback::SevenBit(enc) if len == 2 && code & 0x8080 == 0 => legacy_text(enc, code | 0x8080, len),
                    Fallback::SevenBit(_) => Glyph::Unmapped,
                    Fallback::Collection(collection) => {
                        match self.cid_of(code, len).and_then(|cid| collection.text(cid)) {
                            Some(Cow::Borrowed(t)) => Glyph::Text(t),
                            Some(Cow::Owned(t)) => Glyph::Owned(t),
                            None => Glyph::Unmapped,
                        }
                    }
                    Fallback::None => Glyph::Unmapped,
                }
            }
        }
    }

    /// The CID of `code` (of `len` bytes), where the font's CMap says.
    fn cid_of(&self, code: u32, len: u8) -> Option<u32> {
        match &self.to_cid {
            ToCid::Identity => Some(code),
            ToCid::Map(cmap) => cmap.cid_of(len, code),
            ToCid::Unknown => None,
        }
    }

    /// The advance of `code` in glyph space units (thousandths of an em for most fonts).
    pub(crate) fn width(&self, code: u32, len: u8) -> f64 {
        let w = match &self.widths {
            Widths::Simple(table) => table.get(code as usize).copied().unwrap_or(0.0),
            Widths::Legacy(table) if len == 1 => table.get(code as usize).copied().unwrap_or(0.0),
            Widths::Legacy(_) => 1000.0,
            Widths::Cid(widths) => widths.get(self.cid_of(code, len)),
        };
        f64::from(w)
    }

    /// A font for a font dictionary that could not be read: one byte per code, no text.
    pub(crate) fn broken() -> Font {
        Font {
            space: CodeSpace::One,
            text: Text::Simple(vec![None; 256].into_boxed_slice()),
            widths: Widths::Simple(vec![500.0; 256].into_boxed_slice()),
            to_cid: ToCid::Unknown,
            scale: 0.001,
            em: 1.0,
            vertical: false,
        }
    }

    /// Reads a font dictionary.
    pub(crate) fn load(doc: &Document, dict: &Dictionary, budget: &mut Budget) -> Font {
        let to_unicode = match dict.get(b"ToUnicode").map(|o| resolve(doc, o)) {
            Ok(Object::Stream(s)) => filters::decode(doc, s, budget).ok().map(|data| budget.cmap(&data)),
            _ => None,
        };
        if name_of(doc, dict.get(b"Subtype").ok()) == Some(b"Type0") {
            cidfont::composite(doc, dict, to_unicode, budget)
        } else {
            simple(doc, dict, to_unicode, budget)
        }
    }
}

/// The text of a code in a legacy multi-byte encoding, if it is a valid character there.
fn legacy_text(enc: &'static encoding_rs::Encoding, code: u32, len: u8) -> Glyph<'static> {
    let bytes = code.to_be_bytes();
    let (text, _, bad) = enc.decode(&bytes[4 - usize::from(len.clamp(1, 4))..]);
    if bad {
        Glyph::Unmapped
    } else {
        Glyph::Owned(text.into_owned())
    }
}

fn name_of<'a>(doc: &'a Document, obj: Option<&'a Object>) -> Option<&'a [u8]> {
    obj.map(|o| resolve(doc, o)).and_then(|o| o.as_name().ok())
}

pub(super) fn number(doc: &Document, obj: &Object) -> Option<f64> {
    match resolve(doc, obj) {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

pub(super) fn array<'a>(doc: &'a Document, obj: Option<&'a Object>) -> &'a [Object] {
    match obj.map(|o| resolve(doc, o)) {
        Some(Object::Array(a)) => a,
        _ => &[],
    }
}

fn named_encoding(name: &[u8]) -> Option<&'static [Option<&'static str>; 256]> {
    Some(match name {
        b"WinAnsiEncoding" => &tables::WIN_ANSI_ENCODING,
        b"MacRomanEncoding" => &tables::MAC_ROMAN_ENCODING,
        b"MacExpertEncoding" => &tables::MAC_EXPERT_ENCODING,
        b"StandardEncoding" => &tables::STANDARD_ENCODING,
        _ => return None,
    })
}

fn simple(doc: &Document, dict: &Dictionary, to_unicode: Option<CMap>, budget: &mut Budget) -> Font {
    let subtype = name_of(doc, dict.get(b"Subtype").ok()).unwrap_or(b"Type1");
    let type3 = subtype == b"Type3";
    let raw_base_font = name_of(doc, dict.get(b"BaseFont").ok());
    let base_font = raw_base_font.map(|n| String::from_utf8_lossy(n).into_owned());
    let standard = base_font.as_deref().and_then(tables::standard_font);
    let dingbats =
        standard == Some(StandardFont::ZapfDingbats) || base_font.as_deref().is_some_and(|b| b.contains("Dingbats"));
    let descriptor = dict.get(b"FontDescriptor").ok().and_then(|d| resolve_dict(doc, d));
    let flags = descriptor.and_then(|d| d.get(b"Flags").ok()).and_then(|f| number(doc, f)).unwrap_or(0.0) as i64;
    let symbolic = flags & 4 != 0 && flags & 32 == 0;

    // Glyph names, code by code.
    let encoding = dict.get(b"Encoding").ok().map(|e| resolve(doc, e));
    let base_name = match encoding {
        Some(Object::Name(n)) => Some(n.as_slice()),
        Some(Object::Dictionary(d)) => name_of(doc, d.get(b"BaseEncoding").ok()),
        _ => None,
    };
    let mut names: Vec<Option<Box<str>>> = match base_name.and_then(named_encoding) {
        Some(table) => table.iter().map(|n| n.map(Box::from)).collect(),
        None => builtin(doc, descriptor, standard, subtype, symbolic, budget),
    };
    if !type3 && matches!(base_name, None | Some(b"WinAnsiEncoding")) && raw_base_font.is_some_and(chinese_font_name) {
        let embedded =
            [&b"FontFile"[..], b"FontFile2", b"FontFile3"].iter().any(|k| descriptor.is_some_and(|d| d.has(k)));
        if !embedded {
            return gbk_simple(doc, dict, to_unicode);
        }
    }
    if let Some(Object::Dictionary(d)) = encoding {
        let mut code = 0usize;
        for item in array(doc, d.get(b"Differences").ok()) {
            match resolve(doc, item) {
                Object::Integer(i) => code = (*i).clamp(0, 256) as usize,
                Object::Name(n) => {
                    if code < 256 {
                        names[code] = Some(String::from_utf8_lossy(n).into());
                    }
                    code += 1;
                }
                _ => {}
            }
        }
    }

    let mut text: Vec<Option<Box<str>>> =
        names.iter().map(|n| n.as_deref().and_then(|n| glyph_text(n, dingbats)).map(Box::from)).collect();
    if let Some(cmap) = &to_unicode {
        for (code, slot) in text.iter_mut().enumerate() {
            if let Some(t) = cmap.text_of(code as u32) {
                *slot = Some(t.into());
            }
        }
    }

    // Widths.
    let missing =
        descriptor.and_then(|d| d.get(b"MissingWidth").ok()).and_then(|w| number(doc, w)).unwrap_or(0.0) as f32;
    let first = dict.get(b"FirstChar").ok().and_then(|f| number(doc, f)).unwrap_or(0.0) as i64;
    let listed = array(doc, dict.get(b"Widths").ok());
    let mut widths = vec![f32::NAN; 256];
    for (i, w) in listed.iter().enumerate() {
        let code = first + i as i64;
        if (0..256).contains(&code) {
            widths[code as usize] = number(doc, w).unwrap_or(0.0) as f32;
        }
    }
    let fallback = if missing > 0.0 { missing } else { 500.0 };
    for (code, w) in widths.iter_mut().enumerate() {
        if w.is_nan() {
            *w = match (standard, &names[code]) {
                (Some(font), Some(name)) => font.width(name).map_or(fallback, f32::from),
                (Some(font), None) => font.width("space").map_or(fallback, f32::from),
                _ if listed.is_empty() => fallback,
                _ => missing,
            };
        }
    }

    let (scale, em) = if type3 {
        let m = array(doc, dict.get(b"FontMatrix").ok());
        let get = |i: usize, d: f64| m.get(i).and_then(|v| number(doc, v)).unwrap_or(d);
        let (a, d) = (get(0, 0.001), get(3, 0.001));
        (a, type3_em(&names, &widths, a, d))
    } else {
        (0.001, 1.0)
    };
    Font {
        space: CodeSpace::One,
        text: Text::Simple(text.into_boxed_slice()),
        widths: Widths::Simple(widths.into_boxed_slice()),
        to_cid: ToCid::Unknown,
        scale,
        em,
        vertical: false,
    }
}

/// Glyph names of TeX's math fonts that neither the Adobe Glyph List nor pdf.js knows,
/// with the characters pdfTeX's own `glyphtounicode.tex` gives them; sorted by name.
const TEX_GLYPHS: &[(&str, &str)] = &[
    ("Bullet", "\u{2022}"),
    ("Ifractur", "\u{2111}"),
    ("Rfractur", "\u{211c}"),
    ("mapsto", "\u{21a6}"),
    ("measuredangle", "\u{2221}"),
    ("negationslash", "\u{0338}"),
    ("notexistential", "\u{2204}"),
    ("owner", "\u{220b}"),
    ("rho1", "\u{03f1}"),
    ("squaresolid", "\u{25a0}"),
    ("subsetnoteql", "\u{228a}"),
    ("triangle", "\u{25b3}"),
];

/// The height of an em of a Type 3 font, in text space per unit of font size. Its glyph
/// space is the font's own, so neither the matrix nor 1,000 units say how large its
/// letters are: as poppler guesses it, an `m` is 0.6 em wide, another letter 0.5, and
/// failing those any glyph 0.5; widths are in glyph space, `a` and `d` the matrix's
/// scales.
fn type3_em(names: &[Option<Box<str>>], widths: &[f32], a: f64, d: f64) -> f64 {
    let width = |code: usize| f64::from(widths[code]) * a.abs();
    let named = |pick: &dyn Fn(&str) -> bool| {
        (0..256).find(|&c| names[c].as_deref().is_some_and(pick) && width(c) > 0.0).map(width)
    };
    let em = named(&|n| n == "m")
        .map(|w| w / 0.6)
        .or_else(|| named(&|n| n.len() == 1 && n.as_bytes()[0].is_ascii_alphabetic()).map(|w| w / 0.5))
        .or_else(|| (0..256).find(|&c| names[c].is_some() && width(c) > 0.0).map(|c| width(c) / 0.5));
    let aspect = if a.abs() > 1e-12 { (d / a).abs() } else { 1.0 };
    match em {
        Some(em) if em.is_finite() => (em * aspect).max(1e-6),
        _ => 1.0,
    }
}

/// The text of a glyph name; a name that is not a known glyph gives none. The Zapf
/// Dingbats names (`a1`…`a206`) are dingbats only in that font.
fn glyph_text(name: &str, dingbats: bool) -> Option<String> {
    if dingbats {
        if let Some(t) = tables::dingbat_unicode(name) {
            return Some(t.to_string());
        }
    }
    if let Some(t) = tables::glyph_unicode(name) {
        return Some(t.to_string());
    }
    if let Ok(i) = TEX_GLYPHS.binary_search_by(|(n, _)| n.cmp(&name)) {
        return Some(TEX_GLYPHS[i].1.to_string());
    }
    tables::glyph_to_string(name).or_else(|| numeric_name(name))
}

/// A glyph name that spells its code, read as poppler and pdf.js read them: `Gxx` (two
/// hex digits), `g00xx` (four), and one or two letters then two to four decimal digits
/// (`g65`, `c65`, `a65`, `cid65` is not one). Codes of control characters give none.
fn numeric_name(name: &str) -> Option<String> {
    let base = name.split_once('.').map_or(name, |(base, _)| base);
    let b = base.as_bytes();
    let hex = |digits: &str| u32::from_str_radix(digits, 16).ok();
    let hex_name = (b.len() == 3 && b[0] == b'G') || (b.len() == 5 && b[0] == b'g');
    let code = if hex_name && b[1..].iter().all(u8::is_ascii_hexdigit) {
        hex(&base[1..])
    } else {
        let letters = b.iter().take_while(|c| c.is_ascii_alphabetic()).count();
        let digits = &base[letters..];
        if !(1..=2).contains(&letters)
            || !(2..=4).contains(&digits.len())
            || !digits.bytes().all(|c| c.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok()
    }?;
    char::from_u32(code).filter(|c| !c.is_control() && *c != '\0').map(String::from)
}

/// The Chinese font names pdf.js recognises, in GBK (宋体, 黑体, 楷体, 仿宋, their `_GB2312`
/// forms, 隶书, 新宋, 仿宋体, 小标宋), a style suffix (`,Bold`) aside.
fn chinese_font_name(name: &[u8]) -> bool {
    const NAMES: [&[u8]; 10] = [
        b"\xCB\xCE\xCC\xE5",
        b"\xBA\xDA\xCC\xE5",
        b"\xBF\xAC\xCC\xE5",
        b"\xB7\xC2\xCB\xCE",
        b"\xBF\xAC\xCC\xE5_GB2312",
        b"\xB7\xC2\xCB\xCE_GB2312",
        b"\xC1\xA5\xCA\xE9",
        b"\xD0\xC2\xCB\xCE",
        b"\xB7\xC2\xCB\xCE\xCC\xE5",
        b"\xD0\xA1\xB1\xEA\xCB\xCE",
    ];
    let plain = name.split(|&b| b == b',').next().unwrap_or(name);
    NAMES.contains(&plain)
}

/// A simple font that is not embedded and is named in GBK, whose strings are GBK text
/// (the heuristic of pdf.js): split and read as GBK, one-byte codes by the font's widths.
fn gbk_simple(doc: &Document, dict: &Dictionary, to_unicode: Option<CMap>) -> Font {
    let first = dict.get(b"FirstChar").ok().and_then(|f| number(doc, f)).unwrap_or(0.0) as i64;
    let mut widths = vec![500.0f32; 256];
    for (i, w) in array(doc, dict.get(b"Widths").ok()).iter().enumerate() {
        let code = first + i as i64;
        if (0..256).contains(&code) {
            widths[code as usize] = number(doc, w).unwrap_or(500.0) as f32;
        }
    }
    Font {
        space: CodeSpace::Legacy(encoding_rs::GB18030),
        text: Text::Composite {
            map: Box::new(to_unicode.unwrap_or_default()),
            program: FxHashMap::default(),
            fallback: Fallback::Legacy(encoding_rs::GB18030),
        },
        widths: Widths::Legacy(widths.into_boxed_slice()),
        to_cid: ToCid::Unknown,
        scale: 0.001,
        em: 1.0,
        vertical: false,
    }
}

/// The encoding a simple font has when its dictionary gives no base encoding.
fn builtin(
    doc: &Document,
    descriptor: Option<&Dictionary>,
    standard: Option<StandardFont>,
    subtype: &[u8],
    symbolic: bool,
    budget: &mut Budget,
) -> Vec<Option<Box<str>>> {
    if let Some(font) = standard {
        if matches!(font, StandardFont::Symbol | StandardFont::ZapfDingbats) {
            return font.builtin_encoding().iter().map(|n| n.map(Box::from)).collect();
        }
    }
    let file = |key: &[u8]| match descriptor.and_then(|d| d.get(key).ok()).map(|f| resolve(doc, f)) {
        Some(Object::Stream(s)) => Some(s),
        _ => None,
    };
    if let Some(s) = file(b"FontFile") {
        if let Ok(data) = filters::decode(doc, s, budget) {
            let clear = s
                .dict
                .get(b"Length1")
                .ok()
                .and_then(|l| number(doc, l))
                .map_or(data.len(), |l| (l as usize).min(data.len()));
            if let Some(names) = type1_encoding(&data[..clear]) {
                return names;
            }
        }
    }
    if let Some(s) = file(b"FontFile3") {
        if let Some(names) = filters::decode(doc, s, budget).ok().and_then(|data| cff_encoding(&data)) {
            return names;
        }
    }
    if let Some(s) = file(b"FontFile2").filter(|_| symbolic) {
        if let Some(names) = filters::decode(doc, s, budget).ok().and_then(|data| truetype_names(&data)) {
            return names;
        }
    }
    let table = if subtype == b"Type3" {
        return vec![None; 256];
    } else if subtype == b"TrueType" && !symbolic {
        &tables::WIN_ANSI_ENCODING
    } else {
        &tables::STANDARD_ENCODING
    };
    table.iter().map(|n| n.map(Box::from)).collect()
}

/// The built-in encoding of a Type 1 font program, from its clear-text part:
/// `/Encoding StandardEncoding def`, or `dup <code> /<name> put` entries.
fn type1_encoding(clear: &[u8]) -> Option<Vec<Option<Box<str>>>> {
    let at = memchr::memmem::find(clear, b"/Encoding")?;
    let mut lx = Lexer::new(&clear[at + 9..]);
    let mut names: Vec<Option<Box<str>>> = vec![None; 256];
    let mut recent: Vec<Token<'_>> = Vec::new();
    let mut found = false;
    while let Some(tok) = lx.next_token() {
        match tok {
            Token::Keyword(b"StandardEncoding") if !found => {
                return Some(tables::STANDARD_ENCODING.iter().map(|n| n.map(Box::from)).collect());
            }
            Token::Keyword(b"put") => {
                if let [.., Token::Number(code), Token::Name(name)] = recent.as_slice() {
                    if (0.0..256.0).contains(code) {
                        names[*code as usize] = Some(String::from_utf8_lossy(name).into());
                        found = true;
                    }
                }
                recent.clear();
            }
            Token::Keyword(b"readonly" | b"def" | b"eexec" | b"currentfile") if found => break,
            Token::Keyword(b"eexec" | b"currentfile") => break,
            other => {
                if recent.len() > 8 {
                    recent.remove(0);
                }
                recent.push(other);
            }
        }
    }
    found.then_some(names)
}

/// The built-in encoding of a bare CFF font program (`/FontFile3`, Type1C), as glyph names.
fn cff_encoding(data: &[u8]) -> Option<Vec<Option<Box<str>>>> {
    let table = ttf_parser::cff::Table::parse(data)?;
    let names: Vec<Option<Box<str>>> = (0..=255u8)
        .map(|code| {
            let gid = table.glyph_index(code).filter(|g| g.0 != 0)?;
            table.glyph_name(gid).map(Box::from)
        })
        .collect();
    names.iter().any(Option::is_some).then_some(names)
}

/// Glyph names of a symbolic TrueType font's codes: each code through the font's own
/// (3,0) or (1,0) cmap to a glyph, and the glyph's name from its `post` table.
fn truetype_names(data: &[u8]) -> Option<Vec<Option<Box<str>>>> {
    let face = ttf_parser::Face::parse(data, 0).ok()?;
    let cmap = face.tables().cmap?;
    let names: Vec<Option<Box<str>>> = (0..256u32)
        .map(|code| {
            let gid = cmap.subtables.into_iter().find_map(|sub| match (sub.platform_id, sub.encoding_id) {
                (ttf_parser::PlatformId::Windows, 0) => {
                    sub.glyph_index(0xf000 + code).or_else(|| sub.glyph_index(code))
                }
                (ttf_parser::PlatformId::Macintosh, 0) => sub.glyph_index(code),
                _ => None,
            })?;
            face.glyph_name(gid).map(Box::from)
        })
        .collect();
    names.iter().any(Option::is_some).then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type1_builtin_encoding() {
        let clear = b"%!PS-AdobeFont-1.0: CMR10\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\ndup 65 /A put\ndup 12 /fi put\nreadonly def\ncurrentfile eexec \x80\x81";
        let names = type1_encoding(clear).unwrap();
        assert_eq!(names[65].as_deref(), Some("A"));
        assert_eq!(names[12].as_deref(), Some("fi"));
        assert_eq!(names[66], None);
        let std = type1_encoding(b"/Encoding StandardEncoding def").unwrap();
        assert_eq!(std[65].as_deref(), Some("A"));
    }

    #[test]
    fn tex_names_are_sorted_and_found() {
        assert!(TEX_GLYPHS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(glyph_text("mapsto", false).as_deref(), Some("\u{21a6}"));
        assert_eq!(glyph_text("A", false).as_deref(), Some("A"));
    }

    /// Issue 22: `/aNN` names outside ZapfDingbats are codes, not dingbats.
    #[test]
    fn numeric_glyph_names_are_codes() {
        assert_eq!(glyph_text("a65", false).as_deref(), Some("A"));
        assert_ne!(glyph_text("a65", true).as_deref(), Some("A"), "a dingbat in ZapfDingbats");
        assert_eq!(glyph_text("a1", true).as_deref(), Some("\u{2701}"));
        assert_eq!(glyph_text("a1", false), None, "one digit: not a code");
        assert_eq!(glyph_text("a10", false), None, "code 10 is a control character");
        assert_eq!(glyph_text("g72", false).as_deref(), Some("H"));
        assert_eq!(glyph_text("c101", false).as_deref(), Some("e"));
        assert_eq!(glyph_text("G41", false).as_deref(), Some("A"));
        assert_eq!(glyph_text("g0041", false).as_deref(), Some("A"));
        assert_eq!(glyph_text("cid65", false), None);
        assert_eq!(glyph_text("d127", false), None, "DEL");
        assert_eq!(glyph_text("glyph7", false), None);
    }

    #[test]
    fn a_type3_em_comes_from_its_widths() {
        let mut names: Vec<Option<Box<str>>> = vec![None; 256];
        let mut widths = vec![0.0f32; 256];
        names[0x6d] = Some("m".into());
        widths[0x6d] = 6.0;
        // Glyphs 10 units per em ([0.1 0 0 0.1 0 0]): an m of 6 units is 0.6 em, so 1.0.
        assert!((type3_em(&names, &widths, 0.1, 0.1) - 1.0).abs() < 1e-9);
        // Where FontMatrix × 1000 would say 100.
        names[0x6d] = None;
        names[0x41] = Some("A".into());
        widths[0x41] = 5.0;
        assert!((type3_em(&names, &widths, 0.1, -0.1) - 1.0).abs() < 1e-9);
        assert_eq!(type3_em(&vec![None; 256], &widths, 0.1, 0.1), 1.0);
    }

    #[test]
    fn chinese_font_names_are_recognised() {
        assert!(chinese_font_name(b"\xCB\xCE\xCC\xE5"));
        assert!(chinese_font_name(b"\xCB\xCE\xCC\xE5,Bold"));
        assert!(!chinese_font_name(b"Helvetica"));
    }
}
