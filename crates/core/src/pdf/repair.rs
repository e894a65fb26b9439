//! Rebuilding a damaged cross-reference table, as readers do: every `N G obj` in the
//! file is found by a scan, and a fresh table and trailer are appended after the bytes,
//! so lopdf can load a file whose own table is missing, truncated or wrong.

use memchr::memmem;

/// The largest object number PDF allows (ISO 32000-1, Annex C).
const MAX_OBJECT_NUMBER: u32 = 8_388_607;

/// The file with a rebuilt table appended, or `None` when the scan finds no catalog.
pub(crate) fn rebuild(bytes: &[u8]) -> Option<Vec<u8>> {
    // Object number → (generation, offset); a later definition wins, as an update would.
    let mut objects: std::collections::BTreeMap<u32, (u16, usize)> = std::collections::BTreeMap::new();
    for at in memmem::find_iter(bytes, b"obj") {
        if bytes.get(at + 3).is_some_and(|&b| !is_end(b)) {
            continue;
        }
        if let Some((num, gen, start)) = header_before(bytes, at) {
            // PDF's own limit on object numbers; a larger one is junk (and a table that
            // size would take gigabytes).
            if num <= MAX_OBJECT_NUMBER {
                objects.insert(num, (gen, start));
            }
        }
    }
    let root = root_of(bytes, &objects)?;
    let size = objects.keys().next_back().map_or(1, |&n| n + 1);
    let mut out = Vec::with_capacity(bytes.len() + 20 * size as usize + 256);
    out.extend_from_slice(bytes);
    out.push(b'\n');
    let xref_at = out.len();
    out.extend_from_slice(format!("xref\n0 {size}\n").as_bytes());
    for num in 0..size {
        match objects.get(&num) {
            Some(&(gen, offset)) => out.extend_from_slice(format!("{offset:010} {gen:05} n\r\n").as_bytes()),
            None => out.extend_from_slice(b"0000000000 65535 f\r\n"),
        }
    }
    let mut trailer = format!("trailer\n<< /Size {size} /Root {} {} R", root.0, root.1);
    let old = last_trailer(bytes);
    if let Some(old) = old {
        if let Some((n, g)) = reference_after(old, b"/Encrypt") {
            trailer.push_str(&format!(" /Encrypt {n} {g} R"));
        }
        if let Some(id) = array_after(old, b"/ID") {
            trailer.push_str(" /ID ");
            trailer.push_str(&String::from_utf8_lossy(id));
        }
    }
    trailer.push_str(&format!(" >>\nstartxref\n{xref_at}\n%%EOF\n"));
    out.extend_from_slice(trailer.as_bytes());
    Some(out)
}

fn is_end(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'<' | b'[' | b'(' | b'/' | b'%' | b'\0')
}

/// Reads `num gen` just before the `obj` at `at`; returns them and where `num` starts.
fn header_before(bytes: &[u8], at: usize) -> Option<(u32, u16, usize)> {
    let mut i = at;
    let skip_space = |i: &mut usize| {
        while *i > 0 && bytes[*i - 1].is_ascii_whitespace() {
            *i -= 1;
        }
    };
    let digits = |i: &mut usize| -> Option<u64> {
        let end = *i;
        while *i > 0 && bytes[*i - 1].is_ascii_digit() && end - *i < 10 {
            *i -= 1;
        }
        std::str::from_utf8(&bytes[*i..end]).ok()?.parse().ok()
    };
    skip_space(&mut i);
    let gen = digits(&mut i)?;
    let before_gen = i;
    skip_space(&mut i);
    if i == before_gen {
        return None;
    }
    let num = digits(&mut i)?;
    if i > 0 && !bytes[i - 1].is_ascii_whitespace() && !matches!(bytes[i - 1], b'>' | b']' | b')') {
        return None;
    }
    Some((u32::try_from(num).ok()?, u16::try_from(gen).ok()?, i))
}

/// The catalog: the old trailer's `/Root` if that object was found, else the last
/// object that says `/Type /Catalog`.
fn root_of(bytes: &[u8], objects: &std::collections::BTreeMap<u32, (u16, usize)>) -> Option<(u32, u16)> {
    if let Some((n, g)) = last_trailer(bytes).and_then(|t| reference_after(t, b"/Root")) {
        if objects.get(&n).is_some_and(|&(gen, _)| gen == g) {
            return Some((n, g));
        }
    }
    let mut found = None;
    for key in [&b"/Type/Catalog"[..], b"/Type /Catalog"] {
        for at in memmem::find_iter(bytes, key) {
            // The object that holds it: the one starting last before it.
            if let Some((&n, &(g, _))) =
                objects.iter().filter(|(_, &(_, off))| off < at).max_by_key(|(_, &(_, off))| off)
            {
                found = Some((n, g));
            }
        }
    }
    found
}

/// The text after the last `trailer` keyword.
fn last_trailer(bytes: &[u8]) -> Option<&[u8]> {
    let at = memmem::rfind(bytes, b"trailer")?;
    Some(&bytes[at..bytes.len().min(at + 4096)])
}

/// `N G R` after `key` in `text`.
fn reference_after(text: &[u8], key: &[u8]) -> Option<(u32, u16)> {
    let at = memmem::find(text, key)? + key.len();
    let rest = std::str::from_utf8(&text[at..text.len().min(at + 40)]).ok().or_else(|| {
        let end = text[at..].iter().position(|&b| b > 127).map_or(text.len(), |p| at + p);
        std::str::from_utf8(&text[at..end.min(at + 40)]).ok()
    })?;
    let mut parts = rest.split_ascii_whitespace();
    let n = parts.next()?.parse().ok()?;
    let g = parts.next()?.parse().ok()?;
    (parts.next()?.starts_with('R')).then_some((n, g))
}

/// The `[ … ]` after `key` in `text`.
fn array_after<'a>(text: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = memmem::find(text, key)? + key.len();
    let open = at + text[at..].iter().position(|&b| b == b'[')?;
    let close = open + text[open..].iter().position(|&b| b == b']')?;
    Some(&text[open..=close])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_table_is_rebuilt() {
        let body = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj <</Type/Pages/Kids[]/Count 0>> endobj\n";
        let fixed = rebuild(body).unwrap();
        let text = String::from_utf8_lossy(&fixed);
        assert!(text.contains("xref\n0 3\n0000000000 65535 f\r\n0000000009 00000 n\r\n"), "{text}");
        assert!(text.contains("/Root 1 0 R"), "{text}");
        assert!(lopdf::Document::load_mem(&fixed).is_ok());
    }

    #[test]
    fn no_catalog_no_rebuild() {
        assert!(rebuild(b"%PDF-1.4\n1 0 obj << >> endobj").is_none());
        assert!(rebuild(b"").is_none());
    }

    #[test]
    fn absurd_object_numbers_are_ignored() {
        let body = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n2147483647 0 obj << >> endobj\n";
        let fixed = rebuild(body).unwrap();
        assert!(fixed.len() < body.len() + 200, "{}", fixed.len());
    }

    #[test]
    fn headers_are_read_backwards() {
        let b = b"x\n12 0 obj";
        assert_eq!(header_before(b, 7), Some((12, 0, 2)));
        assert_eq!(header_before(b"endobj", 3), None);
        assert_eq!(header_before(b"a12 0 obj", 6), None);
    }
}
