//! Memory of PDF extraction (issue 22), measured by a counting allocator: the peak of
//! heap bytes in use during one `extract_pdf`, above what was in use before it. One test
//! runs the cases one after another, so that no other test's allocations count.
//!
//! The files are generated to be costly: fonts whose CMaps and widths name every code of a
//! 16-bit space, pages of text that inflate many times over, and an object stream packed
//! with numbers. The bounds asserted are the ones docs/pdf.md states, measured on the
//! heap; the benchmark measures the process's peak RSS per file.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fsgate_core::{extract_pdf, Cancel, PdfPages, PdfRequest};

struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = IN_USE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const MIB: usize = 1 << 20;

/// Extracts `pdf` and returns the peak of heap bytes above the start, and the text's length.
fn peak_of(pdf: &[u8], max_chars: Option<usize>) -> (usize, usize) {
    let request = PdfRequest { pages: PdfPages::All, time_limit: Duration::from_secs(120), max_chars };
    let base = IN_USE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = extract_pdf(pdf, &request, &Cancel::new()).expect("the file reads");
    let chars = out.pages.iter().map(|p| p.text.len()).sum();
    drop(out);
    (PEAK.load(Ordering::Relaxed) - base, chars)
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A file of numbered objects (1 is the catalog, 2 the page tree) with a classic table.
fn file(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    [format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes(), data.to_vec(), b"\nendstream".to_vec()]
        .concat()
}

/// `pages` pages, each drawing `text_ops` strings in each of `fonts` Type 0 fonts whose
/// ToUnicode maps every 16-bit code (sixteen `bfrange`s of 4,096) and whose widths do too.
fn costly(pages: usize, fonts: usize, text_ops: usize) -> Vec<u8> {
    let mut objects: Vec<Vec<u8>> = vec![Vec::new(), Vec::new()];
    let mut cmap = String::from("/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange 16 beginbfrange\n");
    for k in 0..16u32 {
        cmap.push_str(&format!("<{:04X}> <{:04X}> <{:04X}>\n", k * 4096, k * 4096 + 4095, 0x4E00 + k * 16));
    }
    cmap.push_str("endbfrange endcmap CMapName currentdict /CMap defineresource pop end end");
    let to_unicode = deflate(cmap.as_bytes());
    let mut font_refs = String::new();
    for f in 0..fonts {
        let tu = objects.len() + 1;
        objects.push(stream("/Filter /FlateDecode", &to_unicode));
        let desc = objects.len() + 1;
        objects.push(
            b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Costly /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /W [0 65535 500 0 65535 600 0 65535 700] /DW 1000 >>".to_vec(),
        );
        let font = objects.len() + 1;
        objects.push(
            format!("<< /Type /Font /Subtype /Type0 /BaseFont /Costly /Encoding /Identity-H /DescendantFonts [{desc} 0 R] /ToUnicode {tu} 0 R >>")
                .into_bytes(),
        );
        font_refs.push_str(&format!("/F{f} {font} 0 R "));
    }
    let mut content = String::from("BT 1 Tf 10 19990 Td\n");
    for i in 0..text_ops {
        content.push_str(&format!("/F{} 1 Tf <00410042004300440045004600470048> Tj 0 -1 Td\n", i % fonts));
    }
    content.push_str("ET");
    let content = deflate(content.as_bytes());
    let mut kids = String::new();
    for _ in 0..pages {
        let c = objects.len() + 1;
        objects.push(stream("/Filter /FlateDecode", &content));
        let page = objects.len() + 1;
        objects.push(
            format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 20000 20000] /Resources << /Font << {font_refs}>> >> /Contents {c} 0 R >>")
                .into_bytes(),
        );
        kids.push_str(&format!("{page} 0 R "));
    }
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>".to_vec();
    objects[1] = format!("<< /Type /Pages /Kids [{kids}] /Count {pages} >>").into_bytes();
    file(&objects)
}

/// An object stream of `n` small arrays of numbers, deflated: what lopdf parses into objects.
fn many_objects(n: usize) -> Vec<u8> {
    let mut header = String::new();
    let mut body = String::new();
    for i in 0..n {
        header.push_str(&format!("{} {} ", i + 4, body.len()));
        body.push_str("[1 2 3 4 5 6 7 8]\n");
    }
    let data = format!("{header}\n{body}");
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec(),
        stream(
            &format!("/Type /ObjStm /N {n} /First {} /Filter /FlateDecode", header.len() + 1),
            &deflate(data.as_bytes()),
        ),
    ];
    file(&objects)
}

#[test]
fn memory_stays_within_the_stated_bounds() {
    // Fonts: sixty fonts of 65,536 mapped codes and widths each. Kept as ranges, their
    // maps cost what their lines do; expanded, they took more than 300 MB.
    let pdf = costly(2, 60, 200);
    let (peak, chars) = peak_of(&pdf, None);
    println!(
        "sixty full 16-bit fonts: {} KB file, peak {:.1} MiB, {chars} bytes of text",
        pdf.len() / 1024,
        peak as f64 / MIB as f64
    );
    assert!(chars > 0);
    assert!(peak < 16 * MIB, "fonts: peak {peak} bytes");

    // Text: 40 pages of 16,000 strings; with max_chars only the first page is read.
    let pdf = costly(40, 1, 16_000);
    let (all, chars) = peak_of(&pdf, None);
    let (cut, cut_chars) = peak_of(&pdf, Some(50_000));
    println!(
        "text: {} KB file, all pages peak {:.1} MiB ({chars} bytes of text), max_chars 50,000 peak {:.1} MiB ({cut_chars} bytes)",
        pdf.len() / 1024,
        all as f64 / MIB as f64,
        cut as f64 / MIB as f64
    );
    assert!(chars > 5_000_000 && cut_chars < 60_000 * 4, "{chars} / {cut_chars}");
    assert!(cut < 8 * MIB, "max_chars: peak {cut} bytes");
    assert!(all > 2 * cut, "the cut saves: {all} vs {cut}");

    // lopdf's object model: 60,000 arrays of 8 numbers in an object stream (about 660,000
    // tokens) from a small file. The bound stated: 240 bytes per token.
    let n = 60_000;
    let pdf = many_objects(n);
    let (peak, _) = peak_of(&pdf, None);
    println!("{n} arrays of 8 numbers: {} KB file, peak {:.1} MiB", pdf.len() / 1024, peak as f64 / MIB as f64);
    assert!(peak < (n * 11) * 240, "objects: peak {peak} bytes");

    // Past the cap of tokens the file is refused, before lopdf builds anything.
    let pdf = many_objects(300_000);
    let base = IN_USE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let request = PdfRequest { pages: PdfPages::All, time_limit: Duration::from_secs(120), max_chars: None };
    let err = extract_pdf(&pdf, &request, &Cancel::new()).unwrap_err();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    println!("300,000 arrays: {} KB file, refused ({err}), peak {:.1} MiB", pdf.len() / 1024, peak as f64 / MIB as f64);
    assert!(err.to_string().contains("million tokens"), "{err}");
    assert!(peak < 8 * MIB, "refused: peak {peak} bytes");
}
