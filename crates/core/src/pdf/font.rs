//! Fonts as text sees them: how a string splits into codes, what text each code stands
//! for, and how far each code advances.
//!
//! Text comes from, in order: the font's `/ToUnicode` CMap; for simple fonts, the glyph
//! name its encoding gives the code (`/Differences` over a base encoding over the font's
//! built-in one) through the Adobe Glyph List; for composite fonts, the code itself when
//! the CMap is a Unicode one (UCS-2, UTF-16) or a legacy CJK encoding. A code none of
//! these cover is unmapped: it shows as U+FFFD and is counted.

use lopdf::{Dictionary, Document, Object};
use rustc_hash::FxHashMap;

use super::cmap::{CMap, CodeSpace};
use super::lexer::{Lexer, Token};
use super::tables::{self, StandardFont};
use super::{filters, resolve, resolve_dict, Budget};

/// A font, ready to decode strings.
#[derive(Debug)]
pub(crate) struct Font {
    /// How strings split into codes.
    pub(crate) space: CodeSpace,
    text: Text,
    widths: Widths,
    /// Glyph space to text space, horizontally (1/1000, or a Type 3 font's matrix).
    pub(crate) scale: f64,
    /// The height of an em in text space per unit of font size.
    pub(crate) em: f64,
    /// Writing mode 1 (a `-V` CMap): glyphs advance downwards.
    pub(crate) vertical: bool,
}

#[derive(Debug)]
enum Text {
    /// One byte per code: the text of each.
    Simple(Box<[Option<Box<str>>]>),
    /// Composite fonts: the ToUnicode map, then the fallback.
    Composite { map: FxHashMap<u32, Box<str>>, fallback: Fallback },
}

#[derive(Debug)]
enum Fallback {
    None,
    /// The code is UTF-16 (Uni…-UCS2 and -UTF16 CMaps).
    Utf16,
    /// The code's bytes are in a legacy CJK encoding.
    Legacy(&'static encoding_rs::Encoding),
}

#[derive(Debug)]
enum Widths {
    Simple(Box<[f32]>),
    Cid { to_cid: ToCid, widths: FxHashMap<u32, f32>, default: f32 },
}

#[derive(Debug)]
enum ToCid {
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
            Text::Composite { map, fallback } => {
                if let Some(t) = map.get(&code) {
                    return Glyph::Text(t);
                }
                match fallback {
                    Fallback::Utf16 => match char::from_u32(code) {
                        Some(c) if code > 0 => Glyph::Owned(c.to_string()),
                        _ => Glyph::Unmapped,
                    },
                    Fallback::Legacy(enc) => {
                        let bytes = code.to_be_bytes();
                        let (text, _, bad) = enc.decode(&bytes[4 - usize::from(len)..]);
                        if bad {
                            Glyph::Unmapped
                        } else {
                            Glyph::Owned(text.into_owned())
                        }
                    }
                    Fallback::None => Glyph::Unmapped,
                }
            }
        }
    }

    /// The advance of `code` in glyph space units (thousandths of an em for most fonts).
    pub(crate) fn width(&self, code: u32, len: u8) -> f64 {
        let w = match &self.widths {
            Widths::Simple(table) => table.get(code as usize).copied().unwrap_or(0.0),
            Widths::Cid { to_cid, widths, default } => {
                let cid = match to_cid {
                    ToCid::Identity => Some(code),
                    ToCid::Map(cmap) => cmap.cid_of(len, code),
                    ToCid::Unknown => None,
                };
                cid.and_then(|c| widths.get(&c).copied()).unwrap_or(*default)
            }
        };
        f64::from(w)
    }

    /// A font for a font dictionary that could not be read: one byte per code, no text.
    pub(crate) fn broken() -> Font {
        Font {
            space: CodeSpace::One,
            text: Text::Simple(vec![None; 256].into_boxed_slice()),
            widths: Widths::Simple(vec![500.0; 256].into_boxed_slice()),
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
            composite(doc, dict, to_unicode, budget)
        } else {
            simple(doc, dict, to_unicode, budget)
        }
    }
}

fn name_of<'a>(doc: &'a Document, obj: Option<&'a Object>) -> Option<&'a [u8]> {
    obj.map(|o| resolve(doc, o)).and_then(|o| o.as_name().ok())
}

fn number(doc: &Document, obj: &Object) -> Option<f64> {
    match resolve(doc, obj) {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

fn array<'a>(doc: &'a Document, obj: Option<&'a Object>) -> &'a [Object] {
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
    let base_font = name_of(doc, dict.get(b"BaseFont").ok()).map(|n| String::from_utf8_lossy(n).into_owned());
    let standard = base_font.as_deref().and_then(tables::standard_font);
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
        names.iter().map(|n| n.as_deref().and_then(glyph_text).map(Box::from)).collect();
    if let Some(cmap) = &to_unicode {
        for (code, t) in &cmap.unicode {
            if let Some(slot) = text.get_mut(*code as usize) {
                *slot = Some(t.clone());
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
        (a, (d * 1000.0).abs().max(1e-6))
    } else {
        (0.001, 1.0)
    };
    Font {
        space: CodeSpace::One,
        text: Text::Simple(text.into_boxed_slice()),
        widths: Widths::Simple(widths.into_boxed_slice()),
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

/// The text of a glyph name; a name that is not a known glyph gives none.
fn glyph_text(name: &str) -> Option<String> {
    if let Some(t) = tables::glyph_unicode(name) {
        return Some(t.to_string());
    }
    if let Ok(i) = TEX_GLYPHS.binary_search_by(|(n, _)| n.cmp(&name)) {
        return Some(TEX_GLYPHS[i].1.to_string());
    }
    tables::glyph_to_string(name)
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

/// For a composite font with no ToUnicode: Unicode by glyph, from the embedded TrueType
/// program's own Unicode cmap, inverted.
fn glyph_unicode_of(data: &[u8]) -> Option<FxHashMap<u16, char>> {
    let face = ttf_parser::Face::parse(data, 0).ok()?;
    let cmap = face.tables().cmap?;
    let mut by_glyph = FxHashMap::default();
    for sub in cmap.subtables {
        if !sub.is_unicode() {
            continue;
        }
        sub.codepoints(|cp| {
            if let (Some(gid), Some(c)) = (sub.glyph_index(cp), char::from_u32(cp)) {
                by_glyph.entry(gid.0).or_insert(c);
            }
        });
    }
    (!by_glyph.is_empty()).then_some(by_glyph)
}

/// Legacy CJK encodings by the predefined CMap names that use them.
fn legacy_encoding(name: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let name = std::str::from_utf8(name).ok()?;
    let has = |s: &str| name.contains(s);
    Some(if has("RKSJ") {
        encoding_rs::SHIFT_JIS
    } else if has("GB-EUC") || has("GBpc-EUC") || has("GBK") || has("GBT-EUC") {
        encoding_rs::GB18030
    } else if has("B5") {
        encoding_rs::BIG5
    } else if has("KSC") {
        encoding_rs::EUC_KR
    } else if name.starts_with("EUC-") {
        encoding_rs::EUC_JP
    } else {
        return None;
    })
}

fn composite(doc: &Document, dict: &Dictionary, to_unicode: Option<CMap>, budget: &mut Budget) -> Font {
    let descendant = array(doc, dict.get(b"DescendantFonts").ok()).first().and_then(|d| resolve_dict(doc, d));
    let encoding = dict.get(b"Encoding").ok().map(|e| resolve(doc, e));
    let (space, to_cid, fallback, vertical) = match encoding {
        Some(Object::Name(name)) => {
            let vertical = name.ends_with(b"-V");
            if name.starts_with(b"Identity") {
                (CodeSpace::Two, ToCid::Identity, Fallback::None, vertical)
            } else if name.starts_with(b"Uni")
                && (name.windows(4).any(|w| w == b"UCS2") || name.windows(5).any(|w| w == b"UTF16"))
            {
                (CodeSpace::Two, ToCid::Unknown, Fallback::Utf16, vertical)
            } else if let Some(enc) = legacy_encoding(name) {
                (CodeSpace::Legacy(enc), ToCid::Unknown, Fallback::Legacy(enc), vertical)
            } else {
                (CodeSpace::Two, ToCid::Unknown, Fallback::None, vertical)
            }
        }
        Some(Object::Stream(s)) => {
            let cmap = filters::decode(doc, s, budget).map(|d| budget.cmap(&d)).unwrap_or_default();
            let vertical = s.dict.get(b"WMode").ok().and_then(|w| number(doc, w)) == Some(1.0);
            let identity = cmap.parent.as_deref().is_some_and(|p| p.starts_with(b"Identity"));
            let space = if cmap.space.is_empty() { CodeSpace::Two } else { CodeSpace::Ranges(cmap.space.clone()) };
            let to_cid = if identity && cmap.cid.is_empty() && cmap.cid_ranges.is_empty() {
                ToCid::Identity
            } else {
                ToCid::Map(Box::new(cmap))
            };
            (space, to_cid, Fallback::None, vertical)
        }
        _ => (CodeSpace::Two, ToCid::Identity, Fallback::None, false),
    };

    // CID widths: `W [c [w1 w2 …] cfirst clast w …]`, `DW`.
    let mut widths = FxHashMap::default();
    let mut default = 1000.0f32;
    if let Some(desc) = descendant {
        if let Some(dw) = desc.get(b"DW").ok().and_then(|w| number(doc, w)) {
            default = dw as f32;
        }
        let list = array(doc, desc.get(b"W").ok());
        let mut i = 0;
        while i < list.len() && widths.len() < 1 << 20 {
            let Some(first) = number(doc, &list[i]) else { break };
            let first = first.max(0.0) as u32;
            match list.get(i + 1).map(|o| resolve(doc, o)) {
                Some(Object::Array(ws)) => {
                    for (k, w) in ws.iter().enumerate() {
                        widths.insert(first + k as u32, number(doc, w).unwrap_or(0.0) as f32);
                    }
                    i += 2;
                }
                Some(last) => {
                    let Some(last) = number(doc, last) else { break };
                    let w = list.get(i + 2).and_then(|w| number(doc, w)).unwrap_or(0.0) as f32;
                    let last = (last.max(0.0) as u32).min(first.saturating_add(65_535));
                    for cid in first..=last {
                        widths.insert(cid, w);
                    }
                    i += 3;
                }
                None => break,
            }
        }
    }
    let mut map = to_unicode.map(|c| c.unicode).unwrap_or_default();
    let mut fallback = fallback;
    if map.is_empty() && matches!(fallback, Fallback::None) && matches!(to_cid, ToCid::Identity) {
        // No ToUnicode on an Identity font: the embedded TrueType program's cmap says
        // what each glyph is; with no program at all, writers of such files put Unicode
        // in the codes (poppler and pdf.js read them so too).
        let descriptor = descendant.and_then(|d| d.get(b"FontDescriptor").ok()).and_then(|d| resolve_dict(doc, d));
        let program = |key: &[u8]| match descriptor.and_then(|d| d.get(key).ok()).map(|f| resolve(doc, f)) {
            Some(Object::Stream(s)) => Some(s),
            _ => None,
        };
        if let Some(s) = program(b"FontFile2") {
            let to_gid = descendant.and_then(|d| d.get(b"CIDToGIDMap").ok()).map(|m| resolve(doc, m));
            let gid_map = match to_gid {
                Some(Object::Stream(m)) => filters::decode(doc, m, budget).ok(),
                _ => None,
            };
            if let Some(by_glyph) = filters::decode(doc, s, budget).ok().and_then(|d| glyph_unicode_of(&d)) {
                match &gid_map {
                    Some(m) => {
                        for (cid, pair) in m.chunks_exact(2).take(65_536).enumerate() {
                            let gid = u16::from(pair[0]) << 8 | u16::from(pair[1]);
                            if let Some(c) = by_glyph.get(&gid) {
                                map.insert(cid as u32, c.to_string().into());
                            }
                        }
                    }
                    None => {
                        for (&gid, c) in &by_glyph {
                            map.insert(u32::from(gid), c.to_string().into());
                        }
                    }
                }
            }
        } else if program(b"FontFile3").is_none() && program(b"FontFile").is_none() {
            fallback = Fallback::Utf16;
        }
    }
    Font {
        space,
        text: Text::Composite { map, fallback },
        widths: Widths::Cid { to_cid, widths, default },
        scale: 0.001,
        em: 1.0,
        vertical,
    }
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
        assert_eq!(glyph_text("mapsto").as_deref(), Some("\u{21a6}"));
        assert_eq!(glyph_text("A").as_deref(), Some("A"));
        assert_eq!(glyph_text("d127"), None);
    }

    #[test]
    fn legacy_cmaps() {
        assert_eq!(legacy_encoding(b"90ms-RKSJ-H"), Some(encoding_rs::SHIFT_JIS));
        assert_eq!(legacy_encoding(b"KSCms-UHC-H"), Some(encoding_rs::EUC_KR));
        assert_eq!(legacy_encoding(b"Identity-H"), None);
    }
}
