//! Composite (Type 0) fonts: codes split by the font's CMap, CIDs found through it, widths
//! by CID, and text from, after the `/ToUnicode` map: the Adobe collection the font names
//! in `/CIDSystemInfo` (Japan1, GB1, CNS1, Korea1; see [`super::cjk`]), the embedded
//! TrueType program's own Unicode cmap, or the codes themselves where the CMap says what
//! they are (Unicode, or a legacy CJK encoding).

use lopdf::{Dictionary, Document, Object};
use rustc_hash::FxHashMap;

use super::cmap::{CMap, CodeSpace};
use super::font::{array, number, Fallback, Font, Text, ToCid, Widths};
use super::{cjk, filters, resolve, resolve_dict, Budget};

/// Widths by CID: single CIDs (`c [w1 w2 …]`), ranges (`cfirst clast w`, kept as ranges,
/// so a range costs what its three numbers do), and the default (`DW`).
#[derive(Debug)]
pub(crate) struct CidWidths {
    single: FxHashMap<u32, f32>,
    /// Sorted by first CID.
    ranges: Vec<(u32, u32, f32)>,
    default: f32,
}

impl CidWidths {
    /// The width of a CID (the default for none, or one not listed).
    pub(crate) fn get(&self, cid: Option<u32>) -> f32 {
        let Some(cid) = cid else { return self.default };
        if let Some(&w) = self.single.get(&cid) {
            return w;
        }
        let after = self.ranges.partition_point(|r| r.0 <= cid);
        match after.checked_sub(1).map(|i| self.ranges[i]) {
            Some((_, last, w)) if cid <= last => w,
            _ => self.default,
        }
    }

    /// Reads `W` and `DW` of a descendant font.
    fn of(doc: &Document, descendant: Option<&Dictionary>) -> CidWidths {
        let mut out = CidWidths { single: FxHashMap::default(), ranges: Vec::new(), default: 1000.0 };
        let Some(desc) = descendant else { return out };
        if let Some(dw) = desc.get(b"DW").ok().and_then(|w| number(doc, w)) {
            out.default = dw as f32;
        }
        let list = array(doc, desc.get(b"W").ok());
        let mut i = 0;
        while i < list.len() {
            let Some(first) = number(doc, &list[i]) else { break };
            let first = first.max(0.0) as u32;
            match list.get(i + 1).map(|o| resolve(doc, o)) {
                Some(Object::Array(ws)) => {
                    for (k, w) in ws.iter().enumerate() {
                        out.single.insert(first.saturating_add(k as u32), number(doc, w).unwrap_or(0.0) as f32);
                    }
                    i += 2;
                }
                Some(last) => {
                    let Some(last) = number(doc, last) else { break };
                    let w = list.get(i + 2).and_then(|w| number(doc, w)).unwrap_or(0.0) as f32;
                    out.ranges.push((first, (last.max(0.0) as u32).max(first), w));
                    i += 3;
                }
                None => break,
            }
        }
        out.ranges.sort_by_key(|r| r.0);
        out
    }
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
    } else if has("KSC") && has("EUC") || has("UHC") {
        encoding_rs::EUC_KR
    } else if name.starts_with("EUC-") {
        encoding_rs::EUC_JP
    } else {
        return None;
    })
}

/// The CMaps whose codes are the row and cell of a 94 × 94 set (ISO-2022 without its
/// escapes), by the EUC encoding of that set.
fn seven_bit_encoding(name: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    Some(match name {
        b"H" | b"V" => encoding_rs::EUC_JP,
        b"GB-H" | b"GB-V" | b"GBT-H" | b"GBT-V" => encoding_rs::GB18030,
        b"KSC-H" | b"KSC-V" => encoding_rs::EUC_KR,
        _ => return None,
    })
}

/// The Adobe collection a descendant font names in `/CIDSystemInfo`, if its map ships.
fn collection_of(doc: &Document, descendant: Option<&Dictionary>) -> Option<&'static cjk::Collection> {
    let info = resolve_dict(doc, descendant?.get(b"CIDSystemInfo").ok()?)?;
    let string = |key: &[u8]| match info.get(key).map(|o| resolve(doc, o)) {
        Ok(Object::String(s, _)) => Some(s.as_slice()),
        Ok(Object::Name(n)) => Some(n.as_slice()),
        _ => None,
    };
    if string(b"Registry")? != b"Adobe" {
        return None;
    }
    cjk::collection(string(b"Ordering")?)
}

pub(crate) fn composite(doc: &Document, dict: &Dictionary, to_unicode: Option<CMap>, budget: &mut Budget) -> Font {
    let descendant = array(doc, dict.get(b"DescendantFonts").ok()).first().and_then(|d| resolve_dict(doc, d));
    let encoding = dict.get(b"Encoding").ok().map(|e| resolve(doc, e));
    let collection = collection_of(doc, descendant);
    let (space, to_cid, fallback, vertical) = match encoding {
        Some(Object::Name(name)) => {
            let vertical = name.ends_with(b"-V") || name == b"V";
            if name.starts_with(b"Identity") {
                let fallback = collection.map_or(Fallback::None, Fallback::Collection);
                (CodeSpace::Two, ToCid::Identity, fallback, vertical)
            } else if name.starts_with(b"Uni")
                && (name.windows(4).any(|w| w == b"UCS2") || name.windows(5).any(|w| w == b"UTF16"))
            {
                (CodeSpace::Two, ToCid::Unknown, Fallback::Utf16, vertical)
            } else if let Some(enc) = legacy_encoding(name) {
                (CodeSpace::Legacy(enc), ToCid::Unknown, Fallback::Legacy(enc), vertical)
            } else if let Some(enc) = seven_bit_encoding(name) {
                (CodeSpace::Two, ToCid::Unknown, Fallback::SevenBit(enc), vertical)
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
            let fallback = collection.map_or(Fallback::None, Fallback::Collection);
            (space, to_cid, fallback, vertical)
        }
        _ => (CodeSpace::Two, ToCid::Identity, collection.map_or(Fallback::None, Fallback::Collection), false),
    };
    let widths = CidWidths::of(doc, descendant);

    let map = to_unicode.unwrap_or_default();
    let mut program = FxHashMap::default();
    let mut fallback = fallback;
    if map.no_text() && matches!(fallback, Fallback::None) && matches!(to_cid, ToCid::Identity) {
        // No ToUnicode on an Identity font of no known collection: the embedded TrueType
        // program's cmap says what each glyph is; with no program at all, writers of such
        // files put Unicode in the codes (poppler and pdf.js read them so too).
        let descriptor = descendant.and_then(|d| d.get(b"FontDescriptor").ok()).and_then(|d| resolve_dict(doc, d));
        let file = |key: &[u8]| match descriptor.and_then(|d| d.get(key).ok()).map(|f| resolve(doc, f)) {
            Some(Object::Stream(s)) => Some(s),
            _ => None,
        };
        if let Some(s) = file(b"FontFile2") {
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
                                program.insert(cid as u32, c.to_string().into());
                            }
                        }
                    }
                    None => {
                        for (&gid, c) in &by_glyph {
                            program.insert(u32::from(gid), c.to_string().into());
                        }
                    }
                }
            }
        } else if file(b"FontFile3").is_none() && file(b"FontFile").is_none() {
            fallback = Fallback::Utf16;
        }
    }
    Font {
        space,
        text: Text::Composite { map: Box::new(map), program, fallback },
        widths: Widths::Cid(widths),
        to_cid,
        scale: 0.001,
        em: 1.0,
        vertical,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_cmaps() {
        assert_eq!(legacy_encoding(b"90ms-RKSJ-H"), Some(encoding_rs::SHIFT_JIS));
        assert_eq!(legacy_encoding(b"KSCms-UHC-H"), Some(encoding_rs::EUC_KR));
        assert_eq!(legacy_encoding(b"KSC-EUC-H"), Some(encoding_rs::EUC_KR));
        assert_eq!(legacy_encoding(b"KSC-H"), None, "row and cell, not EUC");
        assert_eq!(seven_bit_encoding(b"KSC-H"), Some(encoding_rs::EUC_KR));
        assert_eq!(seven_bit_encoding(b"H"), Some(encoding_rs::EUC_JP));
        assert_eq!(legacy_encoding(b"Identity-H"), None);
    }

    /// Issue 22 (memory): `W [0 65535 500]` is one range, not 65,536 entries.
    #[test]
    fn width_ranges_stay_ranges() {
        let w = CidWidths {
            single: [(5, 250.0)].into_iter().collect(),
            ranges: vec![(0, 65_535, 500.0), (70_000, 70_010, 1000.0)],
            default: 1000.0,
        };
        assert_eq!(w.get(Some(5)), 250.0);
        assert_eq!(w.get(Some(6)), 500.0);
        assert_eq!(w.get(Some(65_536)), 1000.0);
        assert_eq!(w.get(Some(70_005)), 1000.0);
        assert_eq!(w.get(None), 1000.0);
    }
}
