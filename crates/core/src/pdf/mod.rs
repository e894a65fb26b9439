//! PDF text, on lopdf's object model: the page tree, content streams interpreted with
//! text positioning, fonts decoded through ToUnicode CMaps, encodings and glyph names.
//!
//! Hostile files end in a clear error within bounds: every stream decodes to at most
//! [`filters::STREAM_LIMIT`] and a document to at most [`MAX_INFLATED`]; object and
//! cross-reference streams are measured before lopdf unpacks them; reference chains,
//! page-tree loops and Form XObject loops are cut; the interpreter checks a deadline and
//! the caller's [`Cancel`]; and a panic inside the parser becomes an error. A damaged
//! cross-reference table is rebuilt from the objects themselves.

mod bidi;
mod cidfont;
mod cjk;
pub(crate) mod cmap;
pub(crate) mod filters;
mod font;
mod layout;
pub(crate) mod lexer;
mod precheck;
mod repair;
mod tables;
mod text;

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use lopdf::{Dictionary, Document, Object, ObjectId};
use rustc_hash::FxHashSet;

use crate::cancel::Cancel;
use crate::error::{Error, ErrorKind, Result};

/// Which pages to extract.
#[derive(Debug, Clone)]
pub enum PdfPages {
    /// Every page.
    All,
    /// Every page when there are at most this many; otherwise none ([`PdfText::too_many`]).
    UpTo(u32),
    /// These pages (1-based), in this order.
    Only(Vec<u32>),
}

/// What to extract, and the time it may take.
#[derive(Debug, Clone)]
pub struct PdfRequest {
    /// The pages.
    pub pages: PdfPages,
    /// Work stops with [`ErrorKind::Timeout`] after this long.
    pub time_limit: Duration,
    /// Interpreting stops once the pages hold this many characters (UTF-16 units, as
    /// JavaScript counts them): the page where it stops is partial, later pages are not
    /// read, and [`PdfText::stopped`] says so. `None`: no limit but the 64 MiB of text a
    /// document may give.
    pub max_chars: Option<usize>,
}

impl Default for PdfRequest {
    fn default() -> PdfRequest {
        PdfRequest { pages: PdfPages::All, time_limit: Duration::from_secs(30), max_chars: None }
    }
}

/// The text of one page.
#[derive(Debug, Clone, PartialEq)]
pub struct PdfPage {
    /// The page number, from 1.
    pub number: u32,
    /// Its text: lines separated by `\n`, words by single spaces, a blank line between
    /// blocks that are far apart.
    pub text: String,
}

/// What a PDF gave.
#[derive(Debug, Default)]
pub struct PdfText {
    /// Pages in the document.
    pub page_count: u32,
    /// The pages extracted.
    pub pages: Vec<PdfPage>,
    /// Glyphs that could not be mapped to Unicode (shown as U+FFFD).
    pub unmapped: u64,
    /// The document is encrypted (and was decrypted with the empty password, unless `locked`).
    pub encrypted: bool,
    /// The document needs a password: no page could be read.
    pub locked: bool,
    /// [`PdfPages::UpTo`] was exceeded: no page was extracted.
    pub too_many: bool,
    /// Pages asked for beyond the last one: no page was extracted.
    pub beyond: Vec<u32>,
    /// The text passed 64 MiB and the rest was dropped.
    pub cut: bool,
    /// The text reached [`PdfRequest::max_chars`]: the last page given is partial and the
    /// pages after it were not read.
    pub stopped: bool,
}

/// The most all of a document's streams may decode to, together.
pub const MAX_INFLATED: u64 = 512 * 1024 * 1024;
/// Pages beyond this in a page tree are not listed.
const MAX_PAGES: usize = 1_000_000;
/// Reference chains longer than this resolve to null.
const MAX_HOPS: usize = 32;
/// The most code mappings all of a document's CMaps may make together (each costs about
/// 70 bytes once parsed, and fonts are kept for the whole document; a `bfrange` whose
/// text counts up is one mapping): without a budget for the document, a 7 KB file with ten
/// fonts took 845 MB. Real documents stay far below it (a CJK font's map has at most
/// 65,536 codes, and its subsets a few hundred).
pub(crate) const MAX_CMAP_ENTRIES: usize = 1 << 20;

/// Why extraction stopped, inside this module.
#[derive(Debug)]
pub(crate) enum Fail {
    Invalid(String),
    Timeout(Duration),
    Cancelled,
}

impl From<Fail> for Error {
    fn from(fail: Fail) -> Error {
        match fail {
            Fail::Invalid(why) => Error::new(ErrorKind::Pdf, why),
            Fail::Timeout(limit) => Error::new(
                ErrorKind::Timeout,
                format!("gave up on the PDF after {} s: its content is too slow to interpret", limit.as_secs_f64()),
            ),
            Fail::Cancelled => Error::new(ErrorKind::Cancelled, "cancelled"),
        }
    }
}

/// The most tokens of object syntax a document may hold (outside stream data, object
/// streams included): lopdf builds an object of about 128 bytes for each (an integer in an
/// array is one), and keeps them all; a file of 473 KB whose object stream packs 900,000
/// numbers took 253 MiB. Real documents hold far fewer (a thousand-page report a few
/// hundred thousand).
pub(crate) const MAX_OBJECT_TOKENS: usize = 2 << 20;

/// Time, work and memory one extraction may use.
pub(crate) struct Budget<'c> {
    /// The file's bytes, for streams lopdf could not measure (no or a wrong `/Length`).
    pub(crate) file: &'c [u8],
    started: Instant,
    limit: Duration,
    cancel: &'c Cancel,
    inflated: u64,
    /// CMap mappings still allowed.
    cmap_entries: usize,
    ticks: u32,
    /// Streams already decoded once (a content stream many pages share counts once).
    decoded: FxHashSet<usize>,
}

impl<'c> Budget<'c> {
    fn new(file: &'c [u8], limit: Duration, cancel: &'c Cancel) -> Budget<'c> {
        Budget {
            file,
            started: Instant::now(),
            limit,
            cancel,
            inflated: 0,
            cmap_entries: MAX_CMAP_ENTRIES,
            ticks: 0,
            decoded: FxHashSet::default(),
        }
    }

    /// Counts a unit of work; every so often checks the clock and the cancel flag.
    pub(crate) fn tick(&mut self) -> std::result::Result<(), Fail> {
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks % 1024 == 0 {
            self.check()?;
        }
        Ok(())
    }

    fn check(&self) -> std::result::Result<(), Fail> {
        if self.cancel.is_cancelled() {
            return Err(Fail::Cancelled);
        }
        if self.started.elapsed() > self.limit {
            return Err(Fail::Timeout(self.limit));
        }
        Ok(())
    }

    /// Whether this is the first decoding of the stream at `key` (its address).
    pub(crate) fn first_decoding(&mut self, key: usize) -> bool {
        self.decoded.insert(key)
    }

    /// Parses a CMap within what is left of the document's budget of mappings, and
    /// counts what it made.
    pub(crate) fn cmap(&mut self, data: &[u8]) -> cmap::CMap {
        let map = cmap::CMap::parse_within(data, self.cmap_entries);
        self.cmap_entries = self.cmap_entries.saturating_sub(map.entries);
        map
    }

    /// Decoded bytes still allowed.
    pub(crate) fn inflate_left(&self) -> u64 {
        MAX_INFLATED.saturating_sub(self.inflated)
    }

    /// Checks the tokens of object syntax counted so far against [`MAX_OBJECT_TOKENS`].
    pub(crate) fn object_tokens(&self, tokens: usize) -> std::result::Result<(), Fail> {
        if tokens > MAX_OBJECT_TOKENS {
            return Err(Fail::Invalid(format!(
                "its objects hold more than {} million tokens of syntax, more than fsgate reads (a bomb of objects?)",
                MAX_OBJECT_TOKENS >> 20
            )));
        }
        Ok(())
    }

    /// Counts decoded bytes.
    pub(crate) fn inflated(&mut self, bytes: u64) -> std::result::Result<(), Fail> {
        self.inflated += bytes;
        if self.inflated > MAX_INFLATED {
            return Err(Fail::Invalid(format!(
                "its streams decode to more than {} MiB in all (a decompression bomb?)",
                MAX_INFLATED >> 20
            )));
        }
        self.check()
    }
}

static NULL: Object = Object::Null;

/// Follows references (up to [`MAX_HOPS`]); a missing object or a loop is null.
pub(crate) fn resolve<'a>(doc: &'a Document, mut obj: &'a Object) -> &'a Object {
    for _ in 0..MAX_HOPS {
        match obj {
            Object::Reference(id) => match doc.objects.get(id) {
                Some(next) => obj = next,
                None => return &NULL,
            },
            _ => return obj,
        }
    }
    &NULL
}

/// The dictionary an object is or refers to (a stream's dictionary counts).
pub(crate) fn resolve_dict<'a>(doc: &'a Document, obj: &'a Object) -> Option<&'a Dictionary> {
    match resolve(doc, obj) {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

/// Extracts text from the bytes of a PDF.
pub fn extract(bytes: &[u8], request: &PdfRequest, cancel: &Cancel) -> Result<PdfText> {
    match catch_unwind(AssertUnwindSafe(|| extract_inner(bytes, request, cancel))) {
        Ok(result) => result.map_err(Error::from),
        Err(_) => Err(Error::new(ErrorKind::Pdf, "the PDF parser failed on its structure")),
    }
}

fn extract_inner(bytes: &[u8], request: &PdfRequest, cancel: &Cancel) -> std::result::Result<PdfText, Fail> {
    // Junk before the header is cut, as readers do; a header lopdf cannot read, or none,
    // is replaced, and then the table is rebuilt (offsets after a new header are not the
    // file's own).
    let header = header_at(bytes);
    let readable = header.is_some_and(|at| lopdf_reads_header(&bytes[at..]));
    let file: Cow<[u8]> = match header {
        Some(at) if readable => Cow::Borrowed(&bytes[at..]),
        Some(at) => Cow::Owned([&b"%PDF-1.7\n"[..], &bytes[at..]].concat()),
        None if headerless(bytes) => Cow::Owned([&b"%PDF-1.7\n"[..], bytes].concat()),
        None => return Err(Fail::Invalid("not a PDF (no %PDF- header)".into())),
    };
    let mut budget = Budget::new(&[], request.time_limit, cancel);
    let patches = precheck::check(&file, &mut budget)?;
    let patched: Cow<[u8]> = if patches.is_empty() { file } else { Cow::Owned(precheck::apply(&file, &patches)) };
    budget.file = &patched;
    // A damaged table is rebuilt from the objects themselves, as readers do: when lopdf
    // cannot load the file, when the table lists one offset twice (see
    // `repair::shared_offsets`), or when it loads a table that leads to no page.
    let mut rebuilt = None;
    let loaded = if !readable {
        Err("the file has no header lopdf can read".to_string())
    } else if repair::shared_offsets(&patched) {
        Err("its cross-reference table lists one offset for several objects".to_string())
    } else {
        load(&patched).map_err(|e| e.to_string())
    };
    let mut doc = match loaded {
        Ok(doc) => doc,
        Err(first) => {
            rebuilt = Some(repair::rebuild(&patched));
            budget.check()?;
            rebuilt
                .as_ref()
                .and_then(|fixed| fixed.as_deref())
                .and_then(|fixed| load(fixed).ok())
                .ok_or_else(|| Fail::Invalid(format!("damaged PDF: {first}")))?
        }
    };
    budget.check()?;
    // lopdf drops /Encrypt from the trailer once it has decrypted a file.
    let encrypted = doc.trailer.get(b"Encrypt").is_ok() || doc.encryption_state.is_some();
    let mut out = PdfText { encrypted, ..PdfText::default() };
    if encrypted && doc.encryption_state.is_none() {
        out.locked = true;
        return Ok(out);
    }
    if rebuilt.is_none() && page_list(&doc, &mut budget)?.is_empty() {
        let fixed = repair::rebuild(&patched).and_then(|fixed| load(&fixed).ok());
        budget.check()?;
        if let Some(fixed) = fixed {
            if !page_list(&fixed, &mut budget)?.is_empty() {
                doc = fixed;
            }
        }
    }
    let pages = page_list(&doc, &mut budget)?;
    out.page_count = pages.len() as u32;
    let wanted: Vec<u32> = match &request.pages {
        PdfPages::All => (1..=out.page_count).collect(),
        PdfPages::UpTo(max) if out.page_count > *max => {
            out.too_many = true;
            return Ok(out);
        }
        PdfPages::UpTo(_) => (1..=out.page_count).collect(),
        PdfPages::Only(list) => {
            out.beyond = list.iter().copied().filter(|&n| n == 0 || n > out.page_count).collect();
            if !out.beyond.is_empty() {
                return Ok(out);
            }
            list.clone()
        }
    };
    let mut cache = text::Cache::default();
    // A little past the limit: the caller cuts at it, and lines lose a trailing space. The
    // sink counts the page markers the caller adds too (see `ts/tools/pdf.ts`).
    let mut sink = layout::Sink::with_limit(request.max_chars.map(|m| m.saturating_add(16)));
    for number in wanted {
        budget.check()?;
        // The caller's page marker ("--- Page N of M ---") and the blank line before it.
        sink.charge(format!("--- Page {number} of {} ---\n\n", out.page_count).len());
        if sink.full() {
            out.stopped = true;
            break;
        }
        let (page, resources) = pages[number as usize - 1];
        let contents = page_contents(&doc, page, &mut budget)?;
        text::page_text(&doc, page, &contents, resources, &mut cache, &mut sink, &mut budget)?;
        out.pages.push(PdfPage { number, text: sink.take_page() });
        if sink.full() {
            out.stopped = true;
            break;
        }
    }
    out.unmapped = sink.unmapped;
    out.cut = sink.cut;
    Ok(out)
}

/// Loads a document with lopdf, leaving out the objects text never needs: image data,
/// metadata, embedded files and the structure tree (tagged PDFs hold one element per
/// paragraph). lopdf keeps every object it loads for the whole extraction; these are
/// most of a large document's.
fn load(bytes: &[u8]) -> lopdf::Result<Document> {
    Document::load_mem_with_options(bytes, lopdf::LoadOptions { filter: Some(keep), ..lopdf::LoadOptions::default() })
}

/// lopdf's filter: `None` drops an object. What it returns is used for objects of object
/// streams; for the others lopdf keeps its own (so a stream, which is never in an object
/// stream, need not be copied).
fn keep(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    let (dict, stream) = match &*object {
        Object::Stream(s) => (&s.dict, true),
        Object::Dictionary(d) => (d, false),
        other => return Some((id, other.clone())),
    };
    let name = |key: &[u8]| dict.get(key).ok().and_then(|n| n.as_name().ok());
    let unneeded = matches!(
        name(b"Type"),
        Some(b"StructElem" | b"StructTreeRoot" | b"Metadata" | b"EmbeddedFile" | b"MCR" | b"OBJR")
    ) || (stream && name(b"Subtype") == Some(b"Image"));
    match () {
        _ if unneeded => None,
        _ if stream => Some((id, Object::Null)),
        _ => Some((id, object.clone())),
    }
}

/// Where a file's `%PDF` header is: in its first KiB, as readers look for it.
fn header_at(bytes: &[u8]) -> Option<usize> {
    memchr::memmem::find(&bytes[..bytes.len().min(1024)], b"%PDF")
}

/// Whether lopdf reads the header at the start of `bytes`: `%PDF-`, then a line end.
fn lopdf_reads_header(bytes: &[u8]) -> bool {
    bytes.starts_with(b"%PDF-") && memchr::memchr2(b'\n', b'\r', &bytes[..bytes.len().min(1024)]).is_some()
}

/// Whether a file with no header starts as a PDF body does: after white space and
/// comment lines, an object definition (`1 0 obj`).
fn headerless(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    let mut i = 0;
    loop {
        while head.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if head.get(i) != Some(&b'%') {
            break;
        }
        while head.get(i).is_some_and(|&b| b != b'\n' && b != b'\r') {
            i += 1;
        }
    }
    let mut words = head[i..].split(u8::is_ascii_whitespace).filter(|w| !w.is_empty());
    let number =
        |w: Option<&[u8]>| w.is_some_and(|w| !w.is_empty() && w.len() <= 10 && w.iter().all(u8::is_ascii_digit));
    number(words.next()) && number(words.next()) && words.next().is_some_and(|w| w.starts_with(b"obj"))
}

/// Whether a file's first bytes look like a PDF to a reader: a `%PDF` header in the first
/// KiB, or none but a body that starts with an object. Looser than the detection of
/// `sniff` (which wants the header first, or junk that is binary): used where a PDF is
/// expected (pdf_read, a file named `.pdf`).
pub(crate) fn looks_like_pdf(head: &[u8]) -> bool {
    header_at(head).is_some() || headerless(head)
}

/// The pages in order, each with the resources it has or inherits. A damaged catalog
/// falls back to every object of type `/Page`, in object order.
fn page_list<'d>(
    doc: &'d Document,
    budget: &mut Budget,
) -> std::result::Result<Vec<(&'d Dictionary, Option<&'d Dictionary>)>, Fail> {
    let root = doc.trailer.get(b"Root").ok().and_then(|r| resolve_dict(doc, r)).and_then(|c| c.get(b"Pages").ok());
    let mut pages = Vec::new();
    if let Some(root) = root {
        let mut seen: FxHashSet<ObjectId> = FxHashSet::default();
        // (node, inherited resources); a stack, walked in order.
        let mut stack: Vec<(&Object, Option<&Dictionary>)> = vec![(root, None)];
        while let Some((node, inherited)) = stack.pop() {
            budget.tick()?;
            if let Object::Reference(id) = node {
                if !seen.insert(*id) {
                    continue;
                }
            }
            let Some(dict) = resolve_dict(doc, node) else { continue };
            let resources = dict.get(b"Resources").ok().and_then(|r| resolve_dict(doc, r)).or(inherited);
            match dict.get(b"Kids").map(|k| resolve(doc, k)) {
                Ok(Object::Array(kids)) if !is_type(doc, dict, b"Page") => {
                    for kid in kids.iter().rev() {
                        stack.push((kid, resources));
                    }
                }
                _ => {
                    if pages.len() >= MAX_PAGES {
                        break;
                    }
                    pages.push((dict, resources));
                }
            }
        }
    }
    if pages.is_empty() {
        for obj in doc.objects.values() {
            if let Object::Dictionary(dict) = obj {
                if is_type(doc, dict, b"Page") {
                    pages.push((dict, inherited_resources(doc, dict)));
                }
            }
        }
    }
    Ok(pages)
}

/// A page's resources, its own or its nearest ancestor's (by `/Parent`).
fn inherited_resources<'d>(doc: &'d Document, page: &'d Dictionary) -> Option<&'d Dictionary> {
    let mut node = page;
    for _ in 0..MAX_HOPS {
        if let Some(r) = node.get(b"Resources").ok().and_then(|r| resolve_dict(doc, r)) {
            return Some(r);
        }
        node = node.get(b"Parent").ok().and_then(|p| resolve_dict(doc, p))?;
    }
    None
}

fn is_type(doc: &Document, dict: &Dictionary, kind: &[u8]) -> bool {
    dict.get(b"Type").ok().map(|t| resolve(doc, t)).and_then(|t| t.as_name().ok()) == Some(kind)
}

/// A page's content streams, decoded and joined.
fn page_contents(doc: &Document, page: &Dictionary, budget: &mut Budget) -> std::result::Result<Vec<u8>, Fail> {
    let mut out = Vec::new();
    let streams: Vec<&Object> = match page.get(b"Contents").map(|c| resolve(doc, c)) {
        Ok(Object::Array(list)) => list.iter().map(|o| resolve(doc, o)).collect(),
        Ok(other) => vec![other],
        Err(_) => Vec::new(),
    };
    for s in streams {
        if let Object::Stream(stream) = s {
            let data = filters::decode(doc, stream, budget)?;
            if out.len() as u64 + data.len() as u64 > filters::STREAM_LIMIT {
                return Err(Fail::Invalid("a page's content is larger than the stream limit".into()));
            }
            out.extend_from_slice(&data);
            out.push(b'\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{dictionary, Stream};

    /// A one-font document whose pages have the given content streams.
    fn document(pages: &[&[u8]], tweak: impl FnOnce(&mut Document, ObjectId)) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
        let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
        let kids: Vec<Object> = pages
            .iter()
            .map(|content| {
                let c = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
                doc.add_object(dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => c }).into()
            })
            .collect();
        let count = kids.len() as i64;
        doc.objects.insert(
            pages_id,
            Object::Dictionary(
                dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources },
            ),
        );
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog);
        tweak(&mut doc, pages_id);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    fn text_of(bytes: &[u8]) -> Vec<String> {
        let t = extract(bytes, &PdfRequest::default(), &Cancel::new()).unwrap();
        t.pages.into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn words_lines_and_kerning() {
        let pdf = document(
            &[b"BT /F1 10 Tf 72 700 Td [(Hel) -20 (lo) -300 (world)] TJ 0 -14 Td (Next) Tj ( line) Tj T* ET"],
            |_, _| {},
        );
        assert_eq!(text_of(&pdf), vec!["Hello world\nNext line"]);
    }

    /// A font the page's resources do not define is drawn as Helvetica, as pdf.js draws it.
    #[test]
    fn a_font_missing_from_the_resources_still_gives_text() {
        let pdf = document(&[b"BT /F9 9 Tf 72 700 Td (Not in the resources) Tj ET"], |_, _| {});
        let t = extract(&pdf, &PdfRequest::default(), &Cancel::new()).unwrap();
        assert_eq!((t.pages[0].text.as_str(), t.unmapped), ("Not in the resources", 0));
    }

    #[test]
    fn separate_moves_on_one_baseline_join_by_gap() {
        // Helvetica has no /Widths here: the standard metrics place "ab" ending at 72 + 11.12.
        let pdf = document(&[b"BT /F1 20 Tf 72 700 Td (ab) Tj 22.3 0 Td (cd) Tj 30 0 Td (ef) Tj ET"], |_, _| {});
        assert_eq!(text_of(&pdf), vec!["abcd ef"]);
    }

    #[test]
    fn pages_are_picked_and_checked() {
        let pdf = document(
            &[b"BT /F1 9 Tf (one) Tj ET", b"BT /F1 9 Tf (two) Tj ET", b"BT /F1 9 Tf (three) Tj ET"],
            |_, _| {},
        );
        let only = PdfRequest { pages: PdfPages::Only(vec![3, 1]), ..PdfRequest::default() };
        let t = extract(&pdf, &only, &Cancel::new()).unwrap();
        assert_eq!(t.page_count, 3);
        assert_eq!(
            t.pages,
            vec![PdfPage { number: 3, text: "three".into() }, PdfPage { number: 1, text: "one".into() }]
        );
        let beyond = PdfRequest { pages: PdfPages::Only(vec![2, 4]), ..PdfRequest::default() };
        let t = extract(&pdf, &beyond, &Cancel::new()).unwrap();
        assert_eq!((t.beyond, t.pages.len()), (vec![4], 0));
        let few = PdfRequest { pages: PdfPages::UpTo(2), ..PdfRequest::default() };
        let t = extract(&pdf, &few, &Cancel::new()).unwrap();
        assert!(t.too_many && t.pages.is_empty());
    }

    #[test]
    fn a_page_tree_loop_ends() {
        let pdf = document(&[b"BT /F1 9 Tf (x) Tj ET"], |doc, pages| {
            if let Ok(Object::Dictionary(d)) = doc.get_object_mut(pages) {
                d.set("Kids", vec![Object::Reference(pages), Object::Reference(pages)]);
            }
        });
        // The catalog's tree is all loop, so the fallback lists the /Page objects.
        assert_eq!(text_of(&pdf), vec!["x"]);
    }

    #[test]
    fn a_form_that_draws_itself_ends() {
        let pdf = document(&[b"BT /F1 9 Tf (page) Tj ET /X1 Do"], |doc, pages| {
            let form_id = doc.new_object_id();
            let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" });
            let resources =
                dictionary! { "XObject" => dictionary! { "X1" => form_id }, "Font" => dictionary! { "F1" => font } };
            let form = Stream::new(
                dictionary! { "Type" => "XObject", "Subtype" => "Form", "Resources" => resources.clone() },
                b"BT /F1 9 Tf 0 -12 Td (form) Tj ET /X1 Do".to_vec(),
            );
            doc.objects.insert(form_id, Object::Stream(form));
            if let Ok(Object::Dictionary(d)) = doc.get_object_mut(pages) {
                d.set("Resources", resources);
            }
        });
        assert_eq!(text_of(&pdf), vec!["page\nform"]);
    }

    #[test]
    fn a_decompression_bomb_is_refused() {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut e, &vec![b' '; 80 << 20]).unwrap();
        let bomb = e.finish().unwrap();
        let mut doc_bytes = document(&[b"BT /F1 9 Tf (x) Tj ET"], |doc, _| {
            let s = Stream::new(dictionary! { "Filter" => "FlateDecode" }, bomb);
            let id = doc.add_object(s);
            let page = doc.page_iter().next().unwrap();
            if let Ok(Object::Dictionary(d)) = doc.get_object_mut(page) {
                d.set("Contents", id);
            }
        });
        let err = extract(&doc_bytes, &PdfRequest::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Pdf, "{err}");
        assert!(err.to_string().contains("decompression bomb"), "{err}");
        doc_bytes.truncate(8);
        assert_eq!(extract(&doc_bytes, &PdfRequest::default(), &Cancel::new()).unwrap_err().kind(), ErrorKind::Pdf);
    }

    #[test]
    fn slow_content_times_out_and_cancel_stops() {
        let content = b"BT /F1 9 Tf (a) Tj ET ".repeat(200_000);
        let pdf = document(&[&content], |_, _| {});
        let quick = PdfRequest { time_limit: Duration::from_millis(1), ..PdfRequest::default() };
        let err = extract(&pdf, &quick, &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
        let cancel = Cancel::new();
        cancel.cancel();
        let err = extract(&pdf, &PdfRequest::default(), &cancel).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Cancelled);
    }

    #[test]
    fn a_cross_reference_stream_with_absurd_field_widths_is_refused() {
        // lopdf would allocate the widths as given and abort the process.
        let pdf = b"%PDF-1.5\n1 0 obj\n<< /Type /XRef /Size 2 /W [1 99999999999 1] /Length 3 >>\nstream\n\x01\x02\x03\nendstream\nendobj\nstartxref\n9\n%%EOF\n";
        let err = extract(pdf, &PdfRequest::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Pdf);
        assert!(err.to_string().contains("wider than 8 bytes"), "{err}");
    }

    /// A file of numbered objects with a classic table, as a writer would lay it out.
    fn raw_pdf(objects: &[(u32, Vec<u8>)], entries: Option<Vec<usize>>) -> Vec<u8> {
        let mut out = b"%PDF-1.5\n".to_vec();
        let mut offsets = Vec::new();
        for (num, body) in objects {
            offsets.push(out.len());
            out.extend_from_slice(format!("{num} 0 obj\n").as_bytes());
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        let entries = entries.unwrap_or(offsets);
        out.extend_from_slice(format!("xref\n1 {}\n", entries.len()).as_bytes());
        for offset in entries {
            out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(
            format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
        );
        out
    }

    fn page_objects(content: &[u8]) -> Vec<(u32, Vec<u8>)> {
        vec![
            (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
            (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec()),
            (3, b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".to_vec()),
            (4, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec()),
            (
                5,
                [
                    format!("<< /Length {} >>\nstream\n", content.len()).into_bytes(),
                    content.to_vec(),
                    b"\nendstream".to_vec(),
                ]
                .concat(),
            ),
        ]
    }

    #[test]
    fn cross_reference_streams_that_would_exhaust_lopdf_are_refused() {
        // No bytes per entry and four billion entries: lopdf would fill memory.
        let pdf = b"%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n9 0 obj\n<< /Type /XRef /Size 10 /W [0 0 0] /Index [0 4000000000] /Root 1 0 R /Length 0 >>\nstream\n\nendstream\nendobj\nstartxref\n58\n%%EOF\n";
        let err = extract(pdf, &PdfRequest::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Pdf);
        assert!(err.to_string().contains("entries of no bytes"), "{err}");
    }

    #[test]
    fn a_chain_of_indirect_lengths_is_cut_before_lopdf_follows_it() {
        // lopdf resolves each /Length by parsing its target, recursively: a long chain would
        // overflow its stack. Lengths that lead to a stream are taken out (the data then
        // ends at `endstream`), so the page that draws the first stream reads.
        let mut objects = page_objects(b"");
        objects[4].1 = b"<< /Length 6 0 R >>\nstream\nBT /F1 9 Tf (chained) Tj ET\nendstream".to_vec();
        for i in 6..400u32 {
            objects.push((i, format!("<< /Length {} 0 R >>\nstream\nx\nendstream", i + 1).into_bytes()));
        }
        objects.push((400, b"1".to_vec()));
        assert_eq!(text_of(&raw_pdf(&objects, None)), vec!["chained"]);
        // A plain indirect length is fine.
        let mut fine = page_objects(b"BT /F1 9 Tf (ok) Tj ET");
        fine[4].1 = b"<< /Length 6 0 R >>\nstream\nBT /F1 9 Tf (ok) Tj ET\nendstream".to_vec();
        fine.push((6, b"22".to_vec()));
        assert_eq!(text_of(&raw_pdf(&fine, None)), vec!["ok"]);
    }

    #[test]
    fn an_object_stream_bomb_under_an_escaped_name_is_refused() {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut e, &vec![b' '; 80 << 20]).unwrap();
        let bomb = e.finish().unwrap();
        let mut objects = page_objects(b"BT /F1 9 Tf (x) Tj ET");
        let head = format!("<< /Type /Obj#53tm /N 1 /First 4 /Filter /FlateDecode /Length {} >>\nstream\n", bomb.len());
        objects.push((6, [head.into_bytes(), bomb, b"\nendstream".to_vec()].concat()));
        let err = extract(&raw_pdf(&objects, None), &PdfRequest::default(), &Cancel::new()).unwrap_err();
        assert!(err.to_string().contains("decompression bomb"), "{err}");
    }

    #[test]
    fn an_object_stream_with_a_huge_predictor_row_is_refused() {
        let mut objects = page_objects(b"BT /F1 9 Tf (x) Tj ET");
        let data = b"x\x9c\x03\x00\x00\x00\x00\x01";
        let head = b"<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 99999999999 >> /Length 8 >>\nstream\n";
        objects.push((6, [head.to_vec(), data.to_vec(), b"\nendstream".to_vec()].concat()));
        let err = extract(&raw_pdf(&objects, None), &PdfRequest::default(), &Cancel::new()).unwrap_err();
        assert!(err.to_string().contains("predictor rows"), "{err}");
    }

    #[test]
    fn a_table_that_lists_one_object_many_times_is_rebuilt() {
        let mut objects = page_objects(b"BT /F1 9 Tf (once) Tj ET");
        objects.push((6, format!("[{}]", "0 ".repeat(10_000)).into_bytes()));
        let good = raw_pdf(&objects, None);
        let array_at = memchr::memmem::find(&good, b"6 0 obj").unwrap();
        let mut entries: Vec<usize> = objects[..5]
            .iter()
            .map(|(n, _)| memchr::memmem::find(&good, format!("\n{n} 0 obj").as_bytes()).unwrap() + 1)
            .collect();
        entries.extend(std::iter::repeat_n(array_at, 500));
        let pdf = raw_pdf(&objects, Some(entries));
        assert!(repair::shared_offsets(&pdf));
        assert_eq!(text_of(&pdf), vec!["once"]);
    }

    #[test]
    fn a_form_starts_from_its_callers_text_state() {
        let pdf = document(&[b"BT /F1 9 Tf 0 0 Td (Page) Tj ET /X1 Do"], |doc, pages| {
            let form = Stream::new(
                dictionary! { "Type" => "XObject", "Subtype" => "Form" },
                b"BT 0 -12 Td (Inherited) Tj ET".to_vec(),
            );
            let form_id = doc.add_object(form);
            if let Ok(Object::Dictionary(d)) = doc.get_object_mut(pages) {
                if let Ok(Object::Reference(r)) = d.get(b"Resources") {
                    let r = *r;
                    if let Ok(Object::Dictionary(res)) = doc.get_object_mut(r) {
                        res.set("XObject", dictionary! { "X1" => form_id });
                    }
                }
            }
        });
        assert_eq!(text_of(&pdf), vec!["Page\nInherited"]);
    }

    #[test]
    fn a_stream_without_a_length_is_read_up_to_endstream() {
        let mut objects = page_objects(b"");
        objects[4].1 = b"<< >>\nstream\nBT /F1 9 Tf (No length) Tj ET\nendstream".to_vec();
        assert_eq!(text_of(&raw_pdf(&objects, None)), vec!["No length"]);
    }

    #[test]
    fn form_fields_without_appearances_show_values_and_visible_options() {
        let mut objects = page_objects(b"BT /F1 9 Tf 0 100 Td (Form) Tj ET");
        objects[2].1 = b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [6 0 R 7 0 R 8 0 R 9 0 R] >>".to_vec();
        objects.push((6, b"<< /Type /Annot /Subtype /Widget /FT /Tx /V (typed value) /Rect [0 0 10 10] >>".to_vec()));
        objects.push((
            7,
            b"<< /Type /Annot /Subtype /Widget /FT /Ch /TI 1 /Opt [(hidden) [(b) (Shown)] (Last)] /Rect [0 0 10 10] >>"
                .to_vec(),
        ));
        // Hidden annotations (flag 2) are not drawn.
        objects.push((8, b"<< /Type /Annot /Subtype /Widget /F 2 /FT /Tx /V (secret) /Rect [0 0 10 10] >>".to_vec()));
        // An appearance stream is run like a form, in its own resources, placed on /Rect.
        let ap = b"BT /F1 9 Tf 2 2 Td (Stamped) Tj ET";
        let head = format!("<< /Type /XObject /Subtype /Form /BBox [0 0 50 20] /Resources << /Font << /F1 4 0 R >> >> /Length {} >>\nstream\n", ap.len());
        objects.push((9, b"<< /Type /Annot /Subtype /Stamp /Rect [0 -200 50 -180] /AP << /N 10 0 R >> >>".to_vec()));
        objects.push((10, [head.into_bytes(), ap.to_vec(), b"\nendstream".to_vec()].concat()));
        assert_eq!(text_of(&raw_pdf(&objects, None)), vec!["Form\ntyped value\nShown\nLast\nStamped"]);
    }

    /// Found by fuzzing (a slow cmap input led to it; no file in fuzz/regressions, the
    /// PDF is 7 KB): one CMap may make 2^20 mappings, about 80 MB, and fonts are kept for
    /// the whole document, so ten fonts took 845 MB. A document's CMaps share one budget.
    #[test]
    fn a_documents_cmaps_share_one_budget_of_mappings() {
        let cancel = Cancel::new();
        let mut budget = Budget::new(b"", Duration::from_secs(30), &cancel);
        assert_eq!(budget.cmap_entries, MAX_CMAP_ENTRIES);
        budget.cmap_entries = 20;
        let src = b"1 beginbfrange <00> <0F> [<0041> <0042> <0043> <0044> <0045> <0046> <0047> <0048> <0049> <004A> <004B> <004C> <004D> <004E> <004F> <0050>] endbfrange";
        assert_eq!(budget.cmap(src).unicode.len(), 16);
        assert_eq!(budget.cmap(src).unicode.len(), 0, "4 left: the range does not fit");
        assert_eq!(budget.cmap(b"2 beginbfchar <01> <0041> <02> <0042> endbfchar").unicode.len(), 2);
        assert_eq!(budget.cmap_entries, 2);
    }

    #[test]
    fn not_a_pdf() {
        let err = extract(b"hello", &PdfRequest::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Pdf);
        let err = extract(b"%PDF-1.4\n garbage \x00\x01", &PdfRequest::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Pdf);
    }
}
