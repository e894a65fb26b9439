//! The content-stream interpreter: runs a page's operators, places every glyph in device
//! space, and lays the glyphs out as lines and words as they come (nothing per glyph is
//! kept, so memory follows the text, not the drawing).

use std::rc::Rc;

use lopdf::{Dictionary, Document, Object};
use rustc_hash::FxHashMap;

use super::font::{Font, Glyph};
use super::layout::{Placed, Sink};
use super::lexer::{Lexer, Token};
use super::{filters, resolve, resolve_dict, Budget, Fail};

/// An affine matrix `[a b c d e f]`, row-vector convention as in PDF.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Matrix([f64; 6]);

const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

impl Matrix {
    /// `self × other`: apply self, then other.
    fn then(&self, other: &Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = other.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    fn point(&self, x: f64, y: f64) -> (f64, f64) {
        let [a, b, c, d, e, f] = self.0;
        (x * a + y * c + e, x * b + y * d + f)
    }

    fn vector(&self, x: f64, y: f64) -> (f64, f64) {
        let [a, b, c, d, ..] = self.0;
        (x * a + y * c, x * b + y * d)
    }

    fn translate(x: f64, y: f64) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, x, y])
    }
}

/// Graphics state that text needs.
#[derive(Clone)]
struct State {
    ctm: Matrix,
    char_spacing: f64,
    word_spacing: f64,
    h_scale: f64,
    leading: f64,
    rise: f64,
    font: Option<Rc<Font>>,
    size: f64,
}

impl State {
    fn new(ctm: Matrix) -> State {
        State {
            ctm,
            char_spacing: 0.0,
            word_spacing: 0.0,
            h_scale: 1.0,
            leading: 0.0,
            rise: 0.0,
            font: None,
            size: 0.0,
        }
    }
}

/// An operand.
#[derive(Debug)]
enum Operand<'a> {
    Num(f64),
    Name(&'a [u8]),
    Str(Vec<u8>),
    Array(Vec<Operand<'a>>),
    Other,
}

/// Saved graphics states beyond this are not kept (`q` without `Q` in a loop).
const MAX_STATES: usize = 256;
/// Form XObjects inside Form XObjects beyond this are not entered.
const MAX_FORM_DEPTH: usize = 16;
/// Operands held at once; more are dropped (no operator takes more than a few).
const MAX_OPERANDS: usize = 4096;
/// Decoded Form XObjects kept for the other pages of a document, in bytes; beyond this a
/// form is decoded again where it is drawn.
const MAX_CACHED_FORMS: usize = 16 * 1024 * 1024;

/// Shared by the pages of one document: decoded fonts and forms.
#[derive(Default)]
pub(crate) struct Cache {
    fonts: FxHashMap<usize, Rc<Font>>,
    forms: FxHashMap<usize, Rc<Vec<u8>>>,
    /// Bytes of the forms kept.
    form_bytes: usize,
    /// The font for names the resources lack.
    missing: Option<Rc<Font>>,
}

/// Runs one page's content, then the appearance streams of its visible annotations
/// (form fields, free text, stamps: what a viewer draws and `pdftotext` reads).
pub(crate) fn page_text(
    doc: &Document,
    page: &Dictionary,
    contents: &[u8],
    resources: Option<&Dictionary>,
    cache: &mut Cache,
    sink: &mut Sink,
    budget: &mut Budget,
) -> Result<(), Fail> {
    let visible = visible_box(doc, page);
    let mut run = Run { doc, cache, sink, budget, forms: Vec::new(), visible };
    run.content(contents, resources, State::new(IDENTITY))?;
    let annots = match page.get(b"Annots").map(|a| resolve(doc, a)) {
        Ok(Object::Array(list)) => list.as_slice(),
        _ => &[],
    };
    for annot in annots.iter().take(10_000) {
        if run.sink.full() {
            break;
        }
        let Some(annot) = resolve_dict(doc, annot) else { continue };
        run.budget.tick()?;
        let flags = annot.get(b"F").ok().and_then(|f| resolve(doc, f).as_i64().ok()).unwrap_or(0);
        // Hidden (2) and no-view (32) annotations are not drawn; popups show other annotations' text.
        if flags & (2 | 32) != 0 || name(doc, annot.get(b"Subtype").ok()) == Some(b"Popup") {
            continue;
        }
        let Some(normal) = annot.get(b"AP").ok().and_then(|ap| resolve_dict(doc, ap)).and_then(|ap| ap.get(b"N").ok())
        else {
            if name(doc, annot.get(b"Subtype").ok()) == Some(b"Widget") {
                field_text(doc, annot, run.sink);
            }
            continue;
        };
        let stream = match resolve(doc, normal) {
            Object::Stream(s) => s,
            Object::Dictionary(states) => {
                let state = name(doc, annot.get(b"AS").ok()).unwrap_or(b"");
                match states.get(state).map(|s| resolve(doc, s)) {
                    Ok(Object::Stream(s)) => s,
                    _ => continue,
                }
            }
            _ => continue,
        };
        let rect = numbers(doc, annot.get(b"Rect").ok());
        let placed = (rect.len() == 4)
            .then(|| to_rect(&form_matrix(doc, stream), &numbers(doc, stream.dict.get(b"BBox").ok()), &rect));
        run.form_stream(stream, None, State::new(placed.unwrap_or(IDENTITY)))?;
    }
    Ok(())
}

/// The text a viewer would draw for a form field that has no appearance stream: a text
/// field's value, a choice field's options.
fn field_text(doc: &Document, widget: &Dictionary, sink: &mut Sink) {
    // Field attributes may be inherited from parents.
    let inherited = |key: &[u8]| {
        let mut node = Some(widget);
        for _ in 0..8 {
            let dict = node?;
            if let Ok(v) = dict.get(key) {
                return Some(resolve(doc, v));
            }
            node = dict.get(b"Parent").ok().and_then(|p| resolve_dict(doc, p));
        }
        None
    };
    let text = |obj: &Object| lopdf::decode_text_string(resolve(doc, obj)).ok();
    match inherited(b"FT").and_then(|t| t.as_name().ok()) {
        Some(b"Tx") => {
            if let Some(value) = inherited(b"V").and_then(text) {
                sink.line(&value);
            }
        }
        Some(b"Ch") => {
            if let Some(Object::Array(options)) = inherited(b"Opt") {
                // A list box scrolled down shows its options from the top index on.
                let top = inherited(b"TI").and_then(|t| t.as_i64().ok()).unwrap_or(0).clamp(0, 10_000) as usize;
                for option in options.iter().skip(top).take(10_000) {
                    let shown = match resolve(doc, option) {
                        Object::Array(pair) => pair.get(1).and_then(text),
                        other => text(other),
                    };
                    if let Some(shown) = shown {
                        sink.line(&shown);
                    }
                }
            }
        }
        _ => {}
    }
}

fn name<'a>(doc: &'a Document, obj: Option<&'a Object>) -> Option<&'a [u8]> {
    obj.map(|o| resolve(doc, o)).and_then(|o| o.as_name().ok())
}

fn numbers(doc: &Document, obj: Option<&Object>) -> Vec<f64> {
    match obj.map(|o| resolve(doc, o)) {
        Some(Object::Array(list)) => list
            .iter()
            .map(|v| match resolve(doc, v) {
                Object::Integer(i) => *i as f64,
                Object::Real(r) => f64::from(*r),
                _ => 0.0,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn form_matrix(doc: &Document, stream: &lopdf::Stream) -> Matrix {
    let m = numbers(doc, stream.dict.get(b"Matrix").ok());
    if m.len() == 6 {
        Matrix(std::array::from_fn(|i| m[i]))
    } else {
        IDENTITY
    }
}

/// The matrix that puts an appearance on its annotation's rectangle: the form's matrix,
/// then the map of its transformed bounding box onto the rectangle (PDF 32000 12.5.5).
fn to_rect(matrix: &Matrix, bbox: &[f64], rect: &[f64]) -> Matrix {
    if bbox.len() != 4 {
        return Matrix::translate(rect[0].min(rect[2]), rect[1].min(rect[3]));
    }
    let corners = [(bbox[0], bbox[1]), (bbox[2], bbox[1]), (bbox[0], bbox[3]), (bbox[2], bbox[3])]
        .map(|(x, y)| matrix.point(x, y));
    let (x0, x1) = corners.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    let (y0, y1) = corners.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let (rx0, rx1) = (rect[0].min(rect[2]), rect[0].max(rect[2]));
    let (ry0, ry1) = (rect[1].min(rect[3]), rect[1].max(rect[3]));
    let sx = if x1 - x0 > 1e-9 { (rx1 - rx0) / (x1 - x0) } else { 1.0 };
    let sy = if y1 - y0 > 1e-9 { (ry1 - ry0) / (y1 - y0) } else { 1.0 };
    Matrix([sx, 0.0, 0.0, sy, rx0 - sx * x0, ry0 - sy * y0])
}

struct Run<'d, 'r, 'c> {
    doc: &'d Document,
    cache: &'r mut Cache,
    sink: &'r mut Sink,
    budget: &'r mut Budget<'c>,
    /// The Form XObjects being run, innermost last (for loops).
    forms: Vec<usize>,
    /// What a viewer shows of the page (`x0, y0, x1, y1` in default user space): glyphs
    /// drawn wholly outside it are not text of this page.
    visible: Option<[f64; 4]>,
}

/// The part of a page a viewer shows: its crop box within its media box, each its own or
/// inherited (PDF 32000 14.11.2). `None` when the page gives no usable box.
fn visible_box(doc: &Document, page: &Dictionary) -> Option<[f64; 4]> {
    let inherited = |key: &[u8]| {
        let mut node = Some(page);
        for _ in 0..32 {
            let dict = node?;
            let b = numbers(doc, dict.get(key).ok());
            if b.len() == 4 && b.iter().all(|v| v.is_finite()) {
                let [x0, y0, x1, y1] = [b[0], b[1], b[2], b[3]];
                let r = [x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)];
                if r[2] - r[0] > 1e-6 && r[3] - r[1] > 1e-6 {
                    return Some(r);
                }
            }
            node = dict.get(b"Parent").ok().and_then(|p| resolve_dict(doc, p));
        }
        None
    };
    let media = inherited(b"MediaBox");
    match (inherited(b"CropBox"), media) {
        (Some(c), Some(m)) => {
            let r = [c[0].max(m[0]), c[1].max(m[1]), c[2].min(m[2]), c[3].min(m[3])];
            // A crop box that misses the media box altogether is ignored, as readers do.
            Some(if r[2] > r[0] && r[3] > r[1] { r } else { m })
        }
        (c, m) => c.or(m),
    }
}

fn num(op: Option<&Operand<'_>>) -> f64 {
    match op {
        Some(Operand::Num(n)) if n.is_finite() => *n,
        _ => 0.0,
    }
}

impl<'d> Run<'d, '_, '_> {
    /// Runs content from graphics state `gs` (a form starts from its caller's).
    fn content(&mut self, data: &[u8], resources: Option<&'d Dictionary>, gs: State) -> Result<(), Fail> {
        let mut lx = Lexer::new(data);
        let mut ops: Vec<Operand<'_>> = Vec::new();
        let mut arrays: Vec<Vec<Operand<'_>>> = Vec::new();
        let mut dict_depth = 0usize;
        let mut gs = gs;
        let mut saved: Vec<State> = Vec::new();
        let mut tm = IDENTITY;
        let mut tlm = IDENTITY;
        while let Some(tok) = lx.next_token() {
            let operand = match tok {
                Token::Number(n) => Operand::Num(n),
                Token::Name(n) => Operand::Name(n),
                Token::Str(s) => Operand::Str(s),
                Token::ArrayStart => {
                    if arrays.len() < 32 {
                        arrays.push(Vec::new());
                    }
                    continue;
                }
                Token::ArrayEnd => match arrays.pop() {
                    Some(items) => Operand::Array(items),
                    None => continue,
                },
                Token::DictStart => {
                    dict_depth += 1;
                    continue;
                }
                Token::DictEnd => {
                    dict_depth = dict_depth.saturating_sub(1);
                    if dict_depth == 0 {
                        ops.push(Operand::Other);
                    }
                    continue;
                }
                Token::Keyword(k) => {
                    if dict_depth > 0 || !arrays.is_empty() {
                        // `true`, `null` and such inside a dictionary or array.
                        if let Some(a) = arrays.last_mut() {
                            a.push(Operand::Other);
                        }
                        continue;
                    }
                    self.budget.tick()?;
                    if k == b"ID" {
                        lx.skip_inline_image();
                    } else {
                        self.operator(k, &ops, &mut gs, &mut saved, &mut tm, &mut tlm, resources)?;
                        if self.sink.full() {
                            return Ok(());
                        }
                    }
                    ops.clear();
                    continue;
                }
            };
            if dict_depth > 0 {
                continue;
            }
            match arrays.last_mut() {
                Some(a) if a.len() < MAX_OPERANDS => a.push(operand),
                Some(_) => {}
                None if ops.len() < MAX_OPERANDS => ops.push(operand),
                None => {}
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn operator(
        &mut self,
        op: &[u8],
        ops: &[Operand<'_>],
        gs: &mut State,
        saved: &mut Vec<State>,
        tm: &mut Matrix,
        tlm: &mut Matrix,
        resources: Option<&'d Dictionary>,
    ) -> Result<(), Fail> {
        let n = |i: usize| num(ops.get(i));
        // Operands are taken from the end, as readers do when there are extra ones.
        let last = |k: usize| -> &[Operand<'_>] { &ops[ops.len().saturating_sub(k)..] };
        match op {
            b"q" if saved.len() < MAX_STATES => saved.push(gs.clone()),
            b"Q" => {
                if let Some(s) = saved.pop() {
                    *gs = s;
                }
            }
            b"cm" if ops.len() >= 6 => {
                let m = last(6);
                let m = Matrix(std::array::from_fn(|i| num(m.get(i))));
                gs.ctm = m.then(&gs.ctm);
            }
            b"BT" => {
                *tm = IDENTITY;
                *tlm = IDENTITY;
            }
            b"Tc" => gs.char_spacing = num(ops.last()),
            b"Tw" => gs.word_spacing = num(ops.last()),
            b"Tz" => gs.h_scale = num(ops.last()) / 100.0,
            b"TL" => gs.leading = num(ops.last()),
            b"Ts" => gs.rise = num(ops.last()),
            b"Tf" => {
                gs.size = num(ops.last());
                let name = match ops.len().checked_sub(2).and_then(|i| ops.get(i)) {
                    Some(Operand::Name(name)) => Some(*name),
                    _ => None,
                };
                gs.font = Some(match name {
                    Some(name) => self.font(resources, name),
                    None => Rc::new(Font::broken()),
                });
            }
            b"Td" => {
                let m = last(2);
                *tlm = Matrix::translate(num(m.first()), num(m.get(1))).then(tlm);
                *tm = *tlm;
            }
            b"TD" => {
                let m = last(2);
                gs.leading = -num(m.get(1));
                *tlm = Matrix::translate(num(m.first()), num(m.get(1))).then(tlm);
                *tm = *tlm;
            }
            b"Tm" if ops.len() >= 6 => {
                let m = last(6);
                *tlm = Matrix(std::array::from_fn(|i| num(m.get(i))));
                *tm = *tlm;
            }
            b"T*" => {
                *tlm = Matrix::translate(0.0, -gs.leading).then(tlm);
                *tm = *tlm;
            }
            b"Tj" => {
                if let Some(Operand::Str(s)) = ops.last() {
                    self.show(s, gs, tm)?;
                }
            }
            b"'" => {
                *tlm = Matrix::translate(0.0, -gs.leading).then(tlm);
                *tm = *tlm;
                if let Some(Operand::Str(s)) = ops.last() {
                    self.show(s, gs, tm)?;
                }
            }
            b"\"" => {
                if ops.len() >= 3 {
                    gs.word_spacing = n(ops.len() - 3);
                    gs.char_spacing = n(ops.len() - 2);
                }
                *tlm = Matrix::translate(0.0, -gs.leading).then(tlm);
                *tm = *tlm;
                if let Some(Operand::Str(s)) = ops.last() {
                    self.show(s, gs, tm)?;
                }
            }
            b"TJ" => {
                if let Some(Operand::Array(items)) = ops.last() {
                    for item in items {
                        match item {
                            Operand::Str(s) => self.show(s, gs, tm)?,
                            Operand::Num(adj) if adj.is_finite() => {
                                let font_v = gs.font.as_ref().is_some_and(|f| f.vertical);
                                let shift = -adj / 1000.0 * gs.size;
                                *tm = if font_v {
                                    Matrix::translate(0.0, shift).then(tm)
                                } else {
                                    Matrix::translate(shift * gs.h_scale, 0.0).then(tm)
                                };
                            }
                            _ => {}
                        }
                    }
                }
            }
            b"Do" => {
                if let Some(Operand::Name(name)) = ops.last() {
                    self.form(resources, name, gs)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn resource(&self, resources: Option<&'d Dictionary>, kind: &[u8], name: &[u8]) -> Option<&'d Object> {
        let group = resolve_dict(self.doc, resources?.get(kind).ok()?)?;
        group.get(name).ok().map(|o| resolve(self.doc, o))
    }

    fn font(&mut self, resources: Option<&'d Dictionary>, name: &[u8]) -> Rc<Font> {
        let Some(Object::Dictionary(dict)) = self.resource(resources, b"Font", name) else {
            // A font the resources do not define: Helvetica in WinAnsiEncoding, as pdf.js
            // draws it (its text is still text).
            if let Some(font) = &self.cache.missing {
                return font.clone();
            }
            let mut dict = Dictionary::new();
            dict.set("Type", Object::Name(b"Font".to_vec()));
            dict.set("Subtype", Object::Name(b"Type1".to_vec()));
            dict.set("BaseFont", Object::Name(b"Helvetica".to_vec()));
            dict.set("Encoding", Object::Name(b"WinAnsiEncoding".to_vec()));
            let font = Rc::new(Font::load(self.doc, &dict, self.budget));
            self.cache.missing = Some(font.clone());
            return font;
        };
        let key = dict as *const Dictionary as usize;
        if let Some(font) = self.cache.fonts.get(&key) {
            return font.clone();
        }
        let font = Rc::new(Font::load(self.doc, dict, self.budget));
        self.cache.fonts.insert(key, font.clone());
        font
    }

    fn form(&mut self, resources: Option<&'d Dictionary>, name: &[u8], gs: &State) -> Result<(), Fail> {
        let Some(Object::Stream(stream)) = self.resource(resources, b"XObject", name) else {
            return Ok(());
        };
        let is_form =
            stream.dict.get(b"Subtype").ok().and_then(|s| resolve(self.doc, s).as_name().ok()) == Some(b"Form");
        if !is_form {
            return Ok(());
        }
        let mut inner = gs.clone();
        inner.ctm = form_matrix(self.doc, stream).then(&gs.ctm);
        self.form_stream(stream, resources, inner)
    }

    /// Runs a form's content from state `gs` (its CTM with the form's own matrix applied),
    /// in its own resources or else `resources`.
    fn form_stream(
        &mut self,
        stream: &'d lopdf::Stream,
        resources: Option<&'d Dictionary>,
        gs: State,
    ) -> Result<(), Fail> {
        let key = stream as *const lopdf::Stream as usize;
        if self.forms.len() >= MAX_FORM_DEPTH || self.forms.contains(&key) {
            return Ok(());
        }
        let data = match self.cache.forms.get(&key) {
            Some(data) => data.clone(),
            None => {
                let data = Rc::new(filters::decode(self.doc, stream, self.budget)?);
                if self.cache.form_bytes + data.len() <= MAX_CACHED_FORMS {
                    self.cache.form_bytes += data.len();
                    self.cache.forms.insert(key, data.clone());
                }
                data
            }
        };
        let inner = stream.dict.get(b"Resources").ok().and_then(|r| resolve_dict(self.doc, r)).or(resources);
        self.forms.push(key);
        let result = self.content(&data, inner, gs);
        self.forms.pop();
        result
    }

    fn show(&mut self, bytes: &[u8], gs: &State, tm: &mut Matrix) -> Result<(), Fail> {
        let Some(font) = gs.font.clone() else {
            return Ok(());
        };
        let mut stopped = Ok(());
        let m = tm.then(&gs.ctm);
        let fs = gs.size;
        let th = gs.h_scale;
        let (dir, size) = if font.vertical {
            let v = m.vector(0.0, -1.0);
            let s = m.vector(fs, 0.0);
            (v, s.0.hypot(s.1))
        } else {
            let v = m.vector(1.0, 0.0);
            let s = m.vector(0.0, fs * font.em);
            (v, s.0.hypot(s.1))
        };
        let len = dir.0.hypot(dir.1);
        let dir = if len > 1e-12 { (dir.0 / len, dir.1 / len) } else { (1.0, 0.0) };
        let mut offset = 0.0;
        font.space.each(bytes, |code, code_len| {
            // A long string in a font with many code ranges is real work: count every glyph.
            if stopped.is_err() || self.sink.full() {
                return false;
            }
            if let Err(fail) = self.budget.tick() {
                stopped = Err(fail);
                return false;
            }
            let w = font.width(code, code_len) * font.scale * fs;
            let space = if code_len == 1 && code == 32 { gs.word_spacing } else { 0.0 };
            let (origin, end, advance) = if font.vertical {
                let origin = m.point(0.0, -offset);
                (origin, m.point(0.0, -offset - fs), fs + gs.char_spacing + space)
            } else {
                let origin = m.point(offset, gs.rise);
                (origin, m.point(offset + w * th, gs.rise), (w + gs.char_spacing + space) * th)
            };
            offset += advance;
            if let Some([x0, y0, x1, y1]) = self.visible {
                // Wholly outside what a viewer shows (as poppler tests it: the advance's
                // extent): text of another page that shares this content, or hidden.
                if origin.0.max(end.0) < x0
                    || origin.0.min(end.0) > x1
                    || origin.1.max(end.1) < y0
                    || origin.1.min(end.1) > y1
                {
                    return true;
                }
            }
            let placed = Placed { origin, end, dir, size, font: Rc::as_ptr(&font) as usize };
            match font.text(code, code_len) {
                Glyph::Text(t) => self.sink.glyph(&placed, t),
                Glyph::Owned(t) => self.sink.glyph(&placed, &t),
                Glyph::Unmapped => {
                    self.sink.unmapped += 1;
                    self.sink.glyph(&placed, "\u{fffd}");
                }
            }
            true
        });
        *tm = if font.vertical {
            Matrix::translate(0.0, -offset).then(tm)
        } else {
            Matrix::translate(offset, 0.0).then(tm)
        };
        stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_compose_in_pdf_order() {
        let scale = Matrix([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let shift = Matrix::translate(10.0, 5.0);
        assert_eq!(scale.then(&shift).point(1.0, 1.0), (12.0, 7.0));
        assert_eq!(shift.then(&scale).point(1.0, 1.0), (22.0, 12.0));
    }
}
